/**
 * How a stop came to be (docs/machine-state.md, "Origin of a stop"): `detected` from the
 * machine's signals by its `SignalStore`, `operatorApi` recorded through the operator API (by
 * a person or the plant's own system). Outside `schema.ts`, whose exports are all tables.
 */
export const STOP_ORIGINS = ["detected", "operatorApi"] as const;

export type StopOrigin = (typeof STOP_ORIGINS)[number];

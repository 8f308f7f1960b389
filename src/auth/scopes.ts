/**
 * Scopes are `section.action`. Every public route needs exactly one.
 */

const SECTIONS = [
  "machines",
  "signals",
  "nominal_speeds",
  "operators",
  "skus",
  "simple_work_orders",
  "production_logs",
  "realtime",
  "reports",
] as const;

const ACTIONS = ["read", "create", "update", "delete"] as const;

/** Every scope a credential may hold: the four actions of each section, and `realtime.write`. */
export const ALL_SCOPES: readonly string[] = [
  ...SECTIONS.filter((s) => s !== "realtime").flatMap((s) => ACTIONS.map((a) => `${s}.${a}`)),
  "realtime.read",
  "realtime.write",
];

const KNOWN = new Set(ALL_SCOPES);

/** True when `scope` is one the service knows. */
export function isKnownScope(scope: string): boolean {
  return KNOWN.has(scope);
}

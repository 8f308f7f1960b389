/**
 * Sums of a machine's `count` signal over windows, read from the machine's `SignalStore`:
 * the sensor pulses of live production logs (and of logs created without a count).
 */

import { and, asc, eq, isNull } from "drizzle-orm";
import { owned } from "../../db/company-scope";
import { signals } from "../../db/schema";
import { companyDb } from "../../db/shards";
import type { Env } from "../../env";
import { type Background, lookupCountSignal } from "./signal-lookup";
import { signalStore } from "./store";

/** Name of the signal whose samples are the machine's sensor pulses. */
export const COUNT_SIGNAL_NAME = "count";

/**
 * The internal id of the machine's count signal: its lowest-id non-deleted signal named
 * `count` (a second one, if any, is a different sensor, not more pulses), found through this
 * isolate's cache (`lookupCountSignal`: a D1 read every few minutes).
 *
 * @param env the bindings holding `DB`.
 * @param machine the company and machine (internal ids).
 * @param background keeps the cache's refresh ahead alive (`ctx.waitUntil`).
 * @returns the id, or null when the machine has no such signal.
 */
export async function countSignalId(
  env: Pick<Env, "DB">,
  machine: { companyId: number; machineId: number },
  background?: Background,
): Promise<number | null> {
  const load = async () => {
    const row = await (await companyDb(env, machine.companyId))
      .select({ id: signals.id })
      .from(signals)
      .where(
        and(
          owned(machine, signals),
          eq(signals.machineId, machine.machineId),
          eq(signals.name, COUNT_SIGNAL_NAME),
          isNull(signals.deletedAt),
        ),
      )
      .orderBy(asc(signals.id))
      .limit(1)
      .get();
    return row?.id ?? null;
  };
  return lookupCountSignal(machine, load, background);
}

/**
 * The sum of the machine's `count` signal samples in each window `[start, end)`: the
 * count signal (`countSignalId`), then one call to the machine's store for every window:
 * whole hours come from the hour rollups, the edges from their samples.
 *
 * @param env the bindings holding `DB` and `SIGNAL_STORE`.
 * @param machine the company and machine (internal ids).
 * @param windows instants in ms since the epoch, `start` inclusive, `end` exclusive.
 * @param background keeps the cache's refresh ahead alive (`ctx.waitUntil`).
 * @returns one sum per window, in order; 0 for a window without samples, and all 0 when
 *   the machine has no such signal.
 */
export async function sumCountSignal(
  env: Pick<Env, "DB" | "SIGNAL_STORE">,
  machine: { companyId: number; machineId: number },
  windows: readonly { start: number; end: number }[],
  background?: Background,
): Promise<number[]> {
  if (windows.length === 0) return [];
  const signalId = await countSignalId(env, machine, background);
  if (signalId === null) return windows.map(() => 0);
  return signalStore(env, machine.companyId, machine.machineId).sums(
    signalId,
    windows.map((w) => ({ start: w.start, end: w.end })),
  );
}

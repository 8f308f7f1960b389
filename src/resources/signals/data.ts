/**
 * A signal's aggregated samples, as `GET /v1/machines/{machine_uuid}/signals/{public_id}` and
 * the `signal_data` MCP tool give them: one function, so that both doors apply the same
 * window ceilings and give the same answer (written by `seriesJson`, series-json.ts).
 */
import type { CompanyScope } from "../../db/company-scope";
import { findMachineByUuid } from "../../db/machines";
import { type Env, readSettings } from "../../env";
import { notFound } from "../../http/errors";
import type { AggFunction, Series } from "./aggregate";
import { lookupSignal } from "./signal-lookup";
import { signalStore } from "./store";
import { checkWindow, type SignalWindowQuery } from "./window";

/** The scalar fields of a signal-data answer, in the order the JSON gives them. */
interface SignalDataHead {
  machine_uuid: string;
  public_id: string;
  name: string;
  agg_unit: SignalWindowQuery["agg_unit"];
  agg_period: number;
  agg_function: SignalWindowQuery["agg_function"];
}

/**
 * One signal's samples in `[start_time, end_time)`, reduced by `agg_function` in buckets
 * `agg_period x agg_unit` wide; `seriesJson(head, series, transpose)` writes the answer.
 *
 * @param scope the credential's company.
 * @param machineUuid the machine's uuid, lowercase.
 * @param publicId the signal's public id, lowercase.
 * @param q the parsed window (instants in ms).
 * @returns the answer's scalar fields and the bucket starts (ms) with their values.
 * @throws ApiError 422 past the window ceilings (`checkWindow`: 14 days, 10,000 points);
 *   404 `Machine not found` or `Signal not found` (also for another company's ids).
 */
export async function signalData(
  env: Env,
  scope: CompanyScope,
  machineUuid: string,
  publicId: string,
  q: SignalWindowQuery,
): Promise<{ head: SignalDataHead; series: Series }> {
  const window = checkWindow(q);
  const signal = await lookupSignal(
    scope,
    readSettings(env).credentialCacheSeconds,
    machineUuid,
    publicId,
  );
  if (!signal) {
    // Only on the error path: tell an unknown machine from an unknown signal.
    const machine = await findMachineByUuid(scope, machineUuid);
    throw notFound(machine ? "Signal not found" : "Machine not found");
  }
  const series = await readSeries(
    env,
    { companyId: scope.companyId, machineId: signal.machineId, signalId: signal.id },
    window,
    q.agg_function,
  );
  const head = {
    machine_uuid: machineUuid,
    public_id: signal.publicId,
    name: signal.name,
    agg_unit: q.agg_unit,
    agg_period: q.agg_period,
    agg_function: q.agg_function,
  };
  return { head, series };
}

/** A signal as its samples are addressed: its company, its machine (the store) and its id. */
interface SeriesAddress {
  companyId: number;
  machineId: number;
  signalId: number;
}

/**
 * One signal's samples in `[from, to)`, reduced by `fn` in buckets `bucketWidthMs` wide
 * (aligned to multiples of the width since the epoch): the one read behind the signal-data
 * answers and the signal exports (src/exports/), so that both give the same points. No
 * window ceiling here: callers bound the window (`checkWindow`, or an export's steps).
 *
 * @returns bucket starts (ms) and values, ascending; empty buckets left out.
 */
export function readSeries(
  env: Pick<Env, "SIGNAL_STORE">,
  signal: SeriesAddress,
  window: { from: number; to: number; bucketWidthMs: number },
  fn: AggFunction,
): Promise<Series> {
  return signalStore(env, signal.companyId, signal.machineId).aggregate(
    signal.signalId,
    window,
    fn,
  );
}

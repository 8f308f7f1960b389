/**
 * Demo Plant A's catalog of stop causes (the reasons its scanners pick from,
 * `POST /v1/realtime/{machine_id}/stop-reason`), and the manual packing bench's stop that
 * the stop-reason example of `/docs` names: a short manual stop that ended minutes before the
 * demo was loaded or started, with the example's reason already, so that "Try it out"
 * answers 200 and changes nothing (docs/demo-data.md). The data set records no causes; the
 * catalog is the usual first list of a plant that starts asking for reasons.
 */

import { createClient } from "../../clients/typescript/src/index";
import { MANUAL_BENCH } from "./demo-data";
import { DOCS_STOP_REASON } from "./demo-ids";
import { ok } from "./http";
import type { OperatorConnection } from "./operator-api";

/** Demo Plant A's catalog of causes, by list. */
export const PLANT_A_CAUSES = {
  generalCause: [
    "Breakdown",
    "Changeover",
    "Cleaning",
    "Material shortage",
    "No operator",
    "Planned maintenance",
    "Quality check",
  ],
  specificCause: [
    "Jam",
    "Sensor fault",
    "Tool wear",
    "Waiting for cartons",
    "Waiting for material",
  ],
  component: ["Conveyor", "Feeder", "Labeler", "Sealer"],
} as const;

/** A bench stop younger than this (its end) is kept: a start makes a new one only after it. */
export const DOCS_STOP_MAX_AGE_MS = 12 * 3_600_000;

/** Adds the catalog to the company (a name it has already is kept): repeatable. */
export async function loadPlantACauses(
  client: OperatorConnection,
  companyId: number,
): Promise<number> {
  const body = Object.entries(PLANT_A_CAUSES).flatMap(([kind, names]) =>
    names.map((name) => ({ kind: kind as keyof typeof PLANT_A_CAUSES, name })),
  );
  const added = ok(
    "POST",
    await client.api.POST("/companies/{company_id}/stop-causes", {
      params: { path: { company_id: companyId } },
      body,
    }),
  );
  return added.length;
}

/**
 * Makes sure the manual packing bench has a stop of the last `DOCS_STOP_MAX_AGE_MS` with the
 * example's reason: when its last stop ended earlier (or it has none), records a manual stop
 * from 20 to 10 minutes ago and gives it the reason (operator API). The bench's shift is not
 * counted in the reports (./demo-operations.ts `BENCH_SHIFT`), so the stop changes no OEE figure.
 *
 * @param client the operator API.
 * @param apiKey a key of Demo Plant A with `realtime.read` (the bench's recent stops).
 * @param benchId the manual packing bench's machine id.
 * @param now the current instant, ms.
 * @returns whether a stop was recorded.
 * @throws HttpError from the APIs.
 */
export async function ensureDocsStop(
  client: OperatorConnection,
  apiKey: string,
  benchId: number,
  now: number = Date.now(),
): Promise<boolean> {
  const api = createClient({ baseUrl: client.baseUrl, apiKey, maxRetries: 0 });
  const recent = ok(
    "GET",
    await api.GET("/v1/realtime/{machine_id}/stops", {
      params: { path: { machine_id: benchId } },
    }),
  );
  const ends = recent.stops.map((row) =>
    Date.parse(row.stop.endTime ?? new Date(now).toISOString()),
  );
  if (ends.some((end) => end >= now - DOCS_STOP_MAX_AGE_MS)) return false;
  const [stop] = ok(
    "POST",
    await client.api.POST("/machines/{machine_id}/stops", {
      params: { path: { machine_id: benchId } },
      body: [
        {
          startTime: new Date(now - 20 * 60_000).toISOString(),
          endTime: new Date(now - 10 * 60_000).toISOString(),
          isProgrammed: false,
          isManual: true,
        },
      ],
    }),
  );
  if (!stop) throw new Error("The bench's stop was not created");
  ok(
    "PUT",
    await client.api.PUT("/stops/{stop_id}/classification", {
      params: { path: { stop_id: stop.id } },
      body: {
        generalCause: { name: DOCS_STOP_REASON.generalCause },
        specificCause: { name: DOCS_STOP_REASON.specificCause },
      },
    }),
  );
  return true;
}

/**
 * Demo Plant A's catalog of causes and the bench's recent stop, made sure of at every load and
 * start of the demo (both steps are repeatable).
 *
 * @param apiKey Demo Plant A's full-access key.
 * @returns whether a new bench stop was recorded.
 * @throws HttpError from the APIs; Error when the company has no manual packing bench.
 */
export async function keepDocsStopReason(
  client: OperatorConnection,
  companyId: number,
  apiKey: string,
): Promise<boolean> {
  await loadPlantACauses(client, companyId);
  const api = createClient({ baseUrl: client.baseUrl, apiKey, maxRetries: 0 });
  const machines = ok("GET", await api.GET("/v1/machines"));
  const bench = machines.find((m) => m.name === MANUAL_BENCH.name);
  if (!bench) throw new Error(`Demo Plant A has no machine named "${MANUAL_BENCH.name}"`);
  return ensureDocsStop(client, apiKey, bench.id);
}

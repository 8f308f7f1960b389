/**
 * Operator routes for the signals of a machine and their samples: create and delete signals
 * (their queries in ./queries.ts), send samples (docs/operator-api.md, "Machines, signals and
 * samples"; docs/signal-storage.md).
 */

import { z } from "@hono/zod-openapi";
import { notFound, unprocessable } from "../../http/errors";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody, IntId, objectBody, UuidId } from "../../http/schemas";
import { COUNT_SIGNAL_NAME, countSignalId } from "../../resources/signals/count-sums";
import { ingestSamples, MAX_SAMPLES_PER_CALL } from "../../resources/signals/ingest";
import {
  forgetMissingCount,
  forgetSignal,
  lookupIngestTarget,
} from "../../resources/signals/signal-lookup";
import { nudgeLive } from "../../streams/publish";
import { DAY_MS } from "../../time/units";
import { requireKeyScope, requireMachine, scopeOfKey } from "../lookups";
import { operatorRoute } from "../schemas";
import { createSignals, deleteSignal } from "./queries";
import { SAMPLE_INSTANT_BOUNDS, SamplesBody } from "./samples-input";
import { SignalCreate } from "./signal-input";

const SignalOut = z
  .object({
    publicId: z.string(),
    machineId: z.number().int(),
    name: z.string(),
    displayName: z.string(),
    kind: z.string().nullable(),
    description: z.object({ en: z.string().nullable(), es: z.string().nullable() }),
  })
  .openapi("OperatorSignal");

export const operatorSignalsRoutes = createRouter()
  .openapi(
    operatorRoute({
      method: "post",
      path: "/machines/{machine_id}/signals",
      tags: ["Signals"],
      summary: "Create signals of a machine",
      request: {
        params: z.object({ machine_id: IntId("machine_id") }),
        body: arrayBody(SignalCreate),
      },
      description:
        "All or none. A signal is refused with 409 when its `publicId` is used (by any signal, " +
        "deleted ones included) or given twice, or when the machine already has a signal (not deleted) " +
        "with the same `name` and `displayName` (or the call gives that pair twice): the public " +
        "API tells signals of one name apart by their display name only.",
      responses: {
        201: jsonResponse(z.array(SignalOut), "Created signals with their `publicId`."),
        409: jsonResponse(
          z.object({ detail: z.string() }),
          "A public id is already used, or a name and display name repeat on the machine.",
        ),
      },
    }),
    async (c) => {
      const { machine_id } = c.req.valid("param");
      const items = c.req.valid("json");
      const machine = await requireMachine(c.env, machine_id);
      const rows = await createSignals(c.env, machine.scope, machine.id, items);
      for (const r of rows) {
        if (r.name === COUNT_SIGNAL_NAME) forgetMissingCount(r.companyId, r.machineId);
      }
      return c.json(
        rows.map((r) => ({
          publicId: r.publicId,
          machineId: r.machineId,
          name: r.name,
          displayName: r.displayName,
          kind: r.kind,
          description: { en: r.descriptionEn, es: r.descriptionEs },
        })),
        201,
      );
    },
  )
  .openapi(
    operatorRoute({
      method: "delete",
      path: "/signals/{public_id}",
      tags: ["Signals"],
      summary: "Delete a signal (soft)",
      request: { params: z.object({ public_id: UuidId("public_id") }) },
      responses: { 204: { description: "Deleted; no longer listed or readable." } },
    }),
    async (c) => {
      const { public_id } = c.req.valid("param");
      const { db } = await requireKeyScope(c.env, "signal", public_id, "Signal not found");
      const row = await deleteSignal(db, public_id);
      if (!row) throw notFound("Signal not found");
      forgetSignal(public_id, row.id);
      return c.body(null, 204);
    },
  )
  .openapi(
    operatorRoute({
      method: "post",
      path: "/signals/{public_id}/samples",
      tags: ["Signals"],
      summary: "Ingest samples",
      description:
        `At most ${MAX_SAMPLES_PER_CALL} samples a call, as \`samples\` or as parallel \`timestamps\`/\`values\`. ` +
        "Each `value` must be finite and within ±1e300 (422 at the value otherwise), so that every bucket's `sum` and `avg` stay finite. " +
        `Each timestamp: ${SAMPLE_INSTANT_BOUNDS} ` +
        "A sample at an existing timestamp replaces it. The hours they touch and their rollups are rewritten atomically in the machine's signal store.",
      request: {
        params: z.object({ public_id: UuidId("public_id") }),
        body: objectBody(SamplesBody),
      },
      responses: { 200: jsonResponse(z.object({ accepted: z.number().int() }), "Samples stored.") },
    }),
    async (c) => {
      const { public_id } = c.req.valid("param");
      const body = c.req.valid("json");
      const background = (refresh: Promise<unknown>) => c.executionCtx.waitUntil(refresh);
      const signal = await lookupIngestTarget(
        async () => (await scopeOfKey(c.env, "signal", public_id.toLowerCase()))?.db ?? null,
        public_id,
        background,
      );
      if (!signal) throw notFound("Signal not found");
      const retentionMs = signal.retentionDays === null ? null : signal.retentionDays * DAY_MS;
      // The machine's count signal drives stop detection in its store (docs/machine-state.md).
      const isCount =
        signal.name === COUNT_SIGNAL_NAME &&
        (await countSignalId(c.env, signal, background)) === signal.id;
      const hotWindowMs = signal.hotWindowDays * DAY_MS;
      const result = await ingestSamples(
        c.env,
        { ...signal, retentionMs, hotWindowMs },
        body,
        isCount,
      );
      if (result.refused !== undefined) throw unprocessable(["body"], result.refused);
      // Production changed: the machine's live stream recomputes it (at most once a second).
      if (signal.name === COUNT_SIGNAL_NAME) {
        await nudgeLive(c.env, signal.companyId, signal.machineId);
      }
      return c.json({ accepted: result.accepted }, 200);
    },
  );

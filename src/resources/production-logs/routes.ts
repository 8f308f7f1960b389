/**
 * Production logs: `POST /v1/production-logs`, `POST /v1/production-logs/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/production-logs/{production_log_id}`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import { scopeOf } from "../../app-env";
import type { CompanyScope } from "../../db/company-scope";
import { type FlushHeldWrites, syncPendingMachines } from "../../durable/realtime-barrier";
import type { Env } from "../../env";
import { notFound } from "../../http/errors";
import {
  BARRIER_RESPONSE,
  createRouter,
  jsonResponse,
  NOT_FOUND_RESPONSE,
} from "../../http/openapi";
import { MAX_LIMIT, pagedResponseSchema, pageEnvelope, pageRequest } from "../../http/pagination";
import { arrayBody, MAX_CREATE_ITEMS, objectBody, UuidId } from "../../http/schemas";
import { createLogs } from "./create";
import { deleteLog } from "./delete";
import { patchLog } from "./patch";
import { machineOfLog } from "./queries";
import { filterLogs, findExpandedLogs, machinesFilterCanTouch } from "./read";
import {
  LIVE_LOG_RULE,
  type LiveLogOwnerOf,
  RUNNING_SHIFT_PATCH_RULE,
  RUNNING_SHIFT_RULE,
  SHIFT_CHANGED_RESPONSE,
} from "./running-shift";
import {
  ProductionLogCreateSchema,
  ProductionLogFiltersSchema,
  ProductionLogPatchSchema,
  ProductionLogSchema,
} from "./schemas";

/**
 * The read barrier for one log: flushes its machine's realtime object. A log D1
 * does not know yet may be a realtime segment still held by its object, so then
 * every marked machine of the company is asked.
 */
async function syncLogMachine(
  flush: FlushHeldWrites,
  scope: CompanyScope,
  id: string,
): Promise<{ machineId: number; end: number } | undefined> {
  const log = await machineOfLog(scope, id);
  await syncPendingMachines(flush, scope, log === undefined ? undefined : [log.machineId]);
  return log;
}

const IdParam = z.object({ production_log_id: UuidId("production_log_id") });

const createRoute = publicRoute("production_logs.create", {
  method: "post",
  path: "/v1/production-logs",
  operationId: "createProductionLogs",
  tags: ["Production logs"],
  summary: "Create production logs",
  description:
    `A JSON array of 1 to ${MAX_CREATE_ITEMS.toLocaleString("en")} logs, all created or none. ` +
    "Each needs `start` < `end` (the only required fields); `type` defaults to `total`. " +
    "`count` (integer >= 0) is optional: without it the log takes the count the machine measured, " +
    "as the realtime logs do: `sensorCount` (unless given) is the sum of the machine's `count` " +
    "signal samples in [`start`, `end`), rounded; `count = sensorCount x countingFactor`, rounded; " +
    "both 0 when the machine has no `count` signal. " +
    "`machine` and `sku` take `id` or `name` (a SKU name matches its `name` or `sku` code). " +
    "`nominalSpeed` and `countingFactor` default to those of the machine/SKU pair's nominal speed " +
    "(`countingFactor` to 1 when the pair has none); no nominal speed for the pair and none given " +
    'is a 422 at `["body", i, "nominalSpeed"]`. `sensorCount` defaults to `count / countingFactor` ' +
    "rounded to the nearest integer. `operator` `{firstName, lastName}` is the company's operator " +
    "of that name, created when there is none; `workOrder` is a work order name, found or created. " +
    "Each log belongs to the machine's shift instance containing its `start` (`shift`, null when " +
    "none). Every problem is reported at once with the item index in `loc` " +
    '(for example `["body", 2, "machine"]`, `["body", 0, "end"]`).\n\n' +
    `${RUNNING_SHIFT_RULE}\n\nSuccess is **200** with the created logs, expanded as GET shows them.`,
  request: { body: arrayBody(ProductionLogCreateSchema) },
  responses: {
    200: jsonResponse(z.array(ProductionLogSchema), "The created production logs."),
    ...SHIFT_CHANGED_RESPONSE,
  },
});

const filterRoute = publicRoute("production_logs.read", {
  method: "post",
  path: "/v1/production-logs/filters",
  operationId: "searchProductionLogs",
  tags: ["Production logs"],
  summary: "Search production logs",
  description:
    "Every field is optional; filters combine with AND and `{}` (or no body) is the first page " +
    "of 10:\n\n" +
    "- `machines`: `search` (fuzzy on the machine name), `include`/`exclude` (machine ids);\n" +
    "- `skus`: `search` (fuzzy on the SKU code or name), `include`/`exclude` (SKU ids);\n" +
    "- `start`, `end`: `after` (strictly), `before` (strictly), `between` {`start`, `end`} " +
    "(the half-open window `[start, end)`), `equal`;\n" +
    "- `count`: `greaterThan`, `greaterThanOrEqual`, `lessThan`, `lessThanOrEqual`, `equal`, " +
    "`notEqual`;\n" +
    "- `isReviewed` (boolean), `type` (`correct`, `defects`, `total`).\n\n" +
    `Ordered by \`start\`, then id; \`limit\` is 1 to ${MAX_LIMIT}; a page past the last is ` +
    "empty with the same totals. Deleted logs are never listed. Rows are expanded as GET shows them.",
  request: {
    body: {
      required: false,
      content: { "application/json": { schema: ProductionLogFiltersSchema, example: {} } },
    },
  },
  responses: {
    200: jsonResponse(
      pagedResponseSchema("productionLogs", ProductionLogSchema, "ProductionLogPage"),
      "One page of production logs.",
    ),
    ...BARRIER_RESPONSE,
  },
});

const getRoute = publicRoute("production_logs.read", {
  method: "get",
  path: "/v1/production-logs/{production_log_id}",
  operationId: "getProductionLog",
  tags: ["Production logs"],
  summary: "Get a production log",
  description:
    "The log with its machine, company, shift instance, operator, SKU, work order and simple work " +
    "order expanded inline (each null when not set; `operator` also when the operator was " +
    "deleted). A deleted log, or one of another company, is a 404.",
  request: { params: IdParam },
  responses: {
    200: jsonResponse(ProductionLogSchema, "The production log."),
    ...NOT_FOUND_RESPONSE,
    ...BARRIER_RESPONSE,
  },
});

const patchRoute = publicRoute("production_logs.update", {
  method: "patch",
  path: "/v1/production-logs/{production_log_id}",
  operationId: "updateProductionLog",
  tags: ["Production logs"],
  summary: "Update a production log",
  description:
    "Send only the fields to change: `type`, `count`, `nominalSpeed`, `start`, `end`, `machine`, " +
    "`sku` (by `id` or `name`), `operator` `{firstName, lastName}` (found by name or created), " +
    "`workOrder` (a name, found or created) and `isReviewed`. `null` leaves a field as it is, " +
    "except for `operator` and `workOrder`, where it removes them from the log. An unknown field " +
    "is a 422. The result must keep `start` < `end`. A new `count` re-derives `sensorCount` " +
    "with the log's counting factor; a new `start` or `machine` re-derives the shift instance. " +
    `Success is 204; the next report call reflects the change.\n\n${RUNNING_SHIFT_RULE} ` +
    `${RUNNING_SHIFT_PATCH_RULE}\n\n` +
    LIVE_LOG_RULE,
  request: { params: IdParam, body: objectBody(ProductionLogPatchSchema) },
  responses: {
    204: { description: "Updated." },
    ...NOT_FOUND_RESPONSE,
    ...SHIFT_CHANGED_RESPONSE,
    ...BARRIER_RESPONSE,
  },
});

const deleteRoute = publicRoute("production_logs.delete", {
  method: "delete",
  path: "/v1/production-logs/{production_log_id}",
  operationId: "deleteProductionLog",
  tags: ["Production logs"],
  summary: "Delete a production log",
  description:
    "Soft delete (`deletedAt` set): from then on the log is gone from GET, PATCH, searches and " +
    "every report, the live figures of its machine's stream included. Success is 204.\n\n" +
    LIVE_LOG_RULE,
  request: { params: IdParam },
  responses: { 204: { description: "Deleted." }, ...NOT_FOUND_RESPONSE, ...BARRIER_RESPONSE },
});

/**
 * What the production-log routes are handed of the realtime layer (src/app.ts passes
 * src/realtime/machine-stub.ts's), so that nothing below src/realtime/ names its object.
 */
interface ProductionLogsRealtime {
  /** The read barrier's flush of one machine (`heldWritesOf`). */
  heldWrites(env: Env): FlushHeldWrites;
  /** A machine's object as the owner of its live logs (`liveLogOwnersOf`). */
  liveLogOwners(env: Env): LiveLogOwnerOf;
}

/** The production-log routes, reaching the machines' realtime objects through `realtime`. */
export const productionLogsRoutes = (realtime: ProductionLogsRealtime) =>
  createRouter()
    .openapi(createRoute, async (c) => {
      return c.json(await createLogs(c.env, scopeOf(c), c.req.valid("json")), 200);
    })
    .openapi(filterRoute, async (c) => {
      const filters = c.req.valid("json") ?? {};
      const scope = scopeOf(c);
      await syncPendingMachines(realtime.heldWrites(c.env), scope, machinesFilterCanTouch(filters));
      const page = await filterLogs(scope, filters, pageRequest(filters));
      return c.json(pageEnvelope("productionLogs", page), 200);
    })
    .openapi(getRoute, async (c) => {
      const { production_log_id } = c.req.valid("param");
      const scope = scopeOf(c);
      await syncLogMachine(realtime.heldWrites(c.env), scope, production_log_id.toLowerCase());
      const [log] = await findExpandedLogs(scope, [production_log_id.toLowerCase()]);
      if (!log) throw notFound("Production log not found");
      return c.json(log, 200);
    })
    .openapi(patchRoute, async (c) => {
      const { production_log_id } = c.req.valid("param");
      const id = production_log_id.toLowerCase();
      const scope = scopeOf(c);
      await syncLogMachine(realtime.heldWrites(c.env), scope, id);
      await patchLog(realtime.liveLogOwners(c.env), scope, id, c.req.valid("json"));
      return c.body(null, 204);
    })
    .openapi(deleteRoute, async (c) => {
      const id = c.req.valid("param").production_log_id.toLowerCase();
      const scope = scopeOf(c);
      const log = await syncLogMachine(realtime.heldWrites(c.env), scope, id);
      await deleteLog(realtime.liveLogOwners(c.env), scope, id, log);
      return c.body(null, 204);
    });

/**
 * Production logs: `POST /v1/production-logs`, `POST /v1/production-logs/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/production-logs/{production_log_id}`, in the shared shape
 * (../crud.ts). Their own: every operation, each passing the read barrier of the machines'
 * realtime objects first (their held writes reach D1 before a log is read or changed), and
 * the rules of the running shift (./running-shift.ts).
 */

import type { CompanyScope } from "../../db/company-scope";
import { type FlushHeldWrites, syncPendingMachines } from "../../durable/realtime-barrier";
import type { Env } from "../../env";
import { BARRIER_RESPONSE, createRouter } from "../../http/openapi";
import { MAX_LIMIT } from "../../http/pagination";
import { MAX_CREATE_ITEMS } from "../../http/schemas";
import { crudRoutes, uuidPathId } from "../crud";
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
  type ProductionLogFilters,
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

/**
 * What the production logs declare of their own in the shared shape, but for the operations'
 * functions (`productionLogsRoutes`, which need the realtime layer).
 */
const PRODUCTION_LOGS = {
  scope: "production_logs",
  path: "/v1/production-logs",
  tag: "Production logs",
  name: { one: "ProductionLog", many: "ProductionLogs", list: "productionLogs" },
  noun: { one: "production log", many: "production logs" },
  id: uuidPathId("production_log_id"),
  notFound: "Production log not found",
  schemas: {
    row: ProductionLogSchema,
    create: ProductionLogCreateSchema,
    patch: ProductionLogPatchSchema,
    filters: ProductionLogFiltersSchema,
  },
  create: {
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
    responses: SHIFT_CHANGED_RESPONSE,
  },
  search: {
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
    responses: BARRIER_RESPONSE,
  },
  get: {
    summary: "Get a production log",
    description:
      "The log with its machine, company, shift instance, operator, SKU, work order and simple work " +
      "order expanded inline (each null when not set; `operator` also when the operator was " +
      "deleted). A deleted log, or one of another company, is a 404.",
    responses: BARRIER_RESPONSE,
  },
  update: {
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
    responses: { ...SHIFT_CHANGED_RESPONSE, ...BARRIER_RESPONSE },
  },
  delete: {
    summary: "Delete a production log",
    description:
      "Soft delete (`deletedAt` set): from then on the log is gone from GET, PATCH, searches and " +
      "every report, the live figures of its machine's stream included. Success is 204.\n\n" +
      LIVE_LOG_RULE,
    responses: BARRIER_RESPONSE,
  },
};

/** The production-log routes, reaching the machines' realtime objects through `realtime`. */
export const productionLogsRoutes = (realtime: ProductionLogsRealtime) =>
  crudRoutes(createRouter(), {
    ...PRODUCTION_LOGS,
    out: (log) => log,
    create: {
      ...PRODUCTION_LOGS.create,
      run: ({ env, scope }, items) => createLogs(env, scope, items),
    },
    search: {
      ...PRODUCTION_LOGS.search,
      run: async ({ env, scope }, filters: ProductionLogFilters, page) => {
        await syncPendingMachines(realtime.heldWrites(env), scope, machinesFilterCanTouch(filters));
        return filterLogs(scope, filters, page);
      },
    },
    get: {
      ...PRODUCTION_LOGS.get,
      run: async ({ env, scope }, id) => {
        await syncLogMachine(realtime.heldWrites(env), scope, id);
        const [log] = await findExpandedLogs(scope, [id]);
        return log;
      },
    },
    update: {
      ...PRODUCTION_LOGS.update,
      run: async ({ env, scope }, id, patch) => {
        await syncLogMachine(realtime.heldWrites(env), scope, id);
        await patchLog(realtime.liveLogOwners(env), scope, id, patch);
        return true;
      },
    },
    delete: {
      ...PRODUCTION_LOGS.delete,
      run: async ({ env, scope }, id) => {
        const log = await syncLogMachine(realtime.heldWrites(env), scope, id);
        await deleteLog(realtime.liveLogOwners(env), scope, id, log);
        return true;
      },
    },
  });

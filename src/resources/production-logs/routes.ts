/**
 * Production logs: `POST /v1/production-logs`, `POST /v1/production-logs/filters`,
 * and `GET`, `PATCH`, `DELETE /v1/production-logs/{production_log_id}`.
 */
import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import type { AppEnv } from "../../app-env";
import type { Database } from "../../db/client";
import type { Env } from "../../env";
import { ApiError, notFound, type ValidationIssue } from "../../http/errors";
import {
  BARRIER_RESPONSE,
  createRouter,
  jsonResponse,
  NOT_FOUND_RESPONSE,
} from "../../http/openapi";
import { MAX_LIMIT, pagedResponseSchema, pageRequest } from "../../http/pagination";
import { arrayBody, MAX_CREATE_ITEMS, objectBody, UuidId } from "../../http/schemas";
import { syncPendingMachines } from "../../realtime/barrier";
import {
  type ResolvedMachine,
  resolvedOrIssue,
  resolveItemReferences,
  resolveMachines,
  resolveOne,
  resolveSkus,
} from "../nominal-speeds/references";
import { sumCountSignal } from "../signals/count-sums";
import { type LogInterval, placeLogs, runningShiftIssue } from "./placement";
import {
  filterLogs,
  findExpandedLogs,
  findLogCore,
  insertLogs,
  type LogChanges,
  machineOfLog,
  type NewLog,
  pairNominalSpeeds,
  softDeleteLog,
  updateLog,
} from "./queries";
import {
  type ProductionLogCreate,
  ProductionLogCreateSchema,
  type ProductionLogFilters,
  ProductionLogFiltersSchema,
  ProductionLogPatchSchema,
  ProductionLogSchema,
} from "./schemas";

/**
 * Sensor pulses of a count: `count / countingFactor` (docs/metrics.md: `count`
 * is `sensorCount x countingFactor`), rounded to the nearest integer, halves up
 * (`sensor_count` is an integer column).
 *
 * @returns the pulses, or null when they exceed the largest safe integer.
 */
export function sensorCountOf(count: number, countingFactor: number): number | null {
  const pulses = Math.round(count / countingFactor);
  return Number.isSafeInteger(pulses) ? pulses : null;
}

/**
 * Items of a count: `sensorCount x countingFactor` (docs/metrics.md), rounded to the
 * nearest integer, halves up: the count of a log created without one, as the
 * realtime logs compute it (src/realtime/projection.ts).
 *
 * @returns the count, or null when it exceeds the largest safe integer.
 */
export function countOf(sensorCount: number, countingFactor: number): number | null {
  const items = Math.round(sensorCount * countingFactor);
  return Number.isSafeInteger(items) ? items : null;
}

/**
 * The pulses the machines' `count` signals measured in the windows of the items
 * created without `count` nor `sensorCount`: one read per machine, all at once.
 *
 * @param resolved the items with their resolved machine (null for an invalid item).
 * @returns per item index, the unrounded sum (absent for items that give a count,
 *   are invalid, or have `start >= end`).
 */
async function measurePulses(
  env: AppEnv["Bindings"],
  companyId: number,
  resolved: readonly ({ item: ProductionLogCreate; machine: ResolvedMachine } | null)[],
): Promise<Map<number, number>> {
  const byMachine = new Map<number, { index: number; start: number; end: number }[]>();
  resolved.forEach((r, index) => {
    if (!r || r.item.count != null || r.item.sensorCount != null) return;
    if (r.item.start >= r.item.end) return;
    const windows = byMachine.get(r.machine.id) ?? [];
    windows.push({ index, start: r.item.start, end: r.item.end });
    byMachine.set(r.machine.id, windows);
  });
  const pulses = new Map<number, number>();
  await Promise.all(
    [...byMachine].map(async ([machineId, windows]) => {
      const sums = await sumCountSignal(env, { companyId, machineId }, windows);
      for (const [k, w] of windows.entries()) pulses.set(w.index, sums[k] ?? 0);
    }),
  );
  return pulses;
}

/**
 * The machines a search can touch, for the read barrier: its `machines.include`
 * list less `exclude` when it names one, else every machine (undefined).
 */
function machinesFilterCanTouch(filters: ProductionLogFilters): number[] | undefined {
  const include = filters.machines?.include;
  if (!include || include.length === 0) return undefined;
  const exclude = new Set(filters.machines?.exclude ?? []);
  return include.filter((id) => !exclude.has(id));
}

/**
 * The read barrier for one log: flushes its machine's realtime object. A log D1
 * does not know yet may be a realtime segment still held by its object, so then
 * every marked machine of the company is asked.
 */
async function syncLogMachine(
  env: Pick<Env, "DB" | "REALTIME_MACHINE">,
  db: Database,
  companyId: number,
  id: string,
): Promise<void> {
  const machineId = await machineOfLog(db, companyId, id);
  await syncPendingMachines(env, companyId, machineId === undefined ? undefined : [machineId]);
}

/** The issues sorted by item index (`loc[1]`), keeping the order of each item's own issues. */
function inItemOrder(issues: ValidationIssue[]): ValidationIssue[] {
  const index = (i: ValidationIssue) => (typeof i.loc[1] === "number" ? i.loc[1] : -1);
  return [...issues].sort((a, b) => index(a) - index(b));
}

const startBeforeEnd = (loc: (string | number)[]): ValidationIssue => ({
  loc,
  msg: "end must be after start",
  type: "value_error",
});

const IdParam = z.object({ production_log_id: UuidId("production_log_id") });

const RUNNING_SHIFT_RULE =
  "**No production logs for the shift a machine is running now:** a log whose interval " +
  "`[start, end)` overlaps the shift instance its machine is running at the time of the call " +
  "(`instance.start <= now < instance.end`) is a 422 (`type` `running_shift`) whose `msg` " +
  "points to `POST /v1/realtime/{machine_id}/sku`, the endpoint for the running shift.";

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
    "(inclusive), `equal`;\n" +
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
    "The rule applies to a PATCH that changes what the log counts (`type`, `count`, " +
    "`nominalSpeed`, `start`, `end`, `machine`, `sku`), before and after the change: a log can " +
    "neither be moved into nor out of, nor changed inside, the running shift. Reviewing " +
    "(`isReviewed`) and setting the operator or work order are always allowed.",
  request: { params: IdParam, body: objectBody(ProductionLogPatchSchema) },
  responses: { 204: { description: "Updated." }, ...NOT_FOUND_RESPONSE, ...BARRIER_RESPONSE },
});

const deleteRoute = publicRoute("production_logs.delete", {
  method: "delete",
  path: "/v1/production-logs/{production_log_id}",
  operationId: "deleteProductionLog",
  tags: ["Production logs"],
  summary: "Delete a production log",
  description:
    "Soft delete (`deletedAt` set): from then on the log is gone from GET, PATCH, searches and " +
    "every report. Success is 204.",
  request: { params: IdParam },
  responses: { 204: { description: "Deleted." }, ...NOT_FOUND_RESPONSE, ...BARRIER_RESPONSE },
});

export const productionLogsRoutes = createRouter()
  .openapi(createRoute, async (c) => {
    const items = c.req.valid("json");
    const { db, principal } = c.var;
    const [machineResolutions, skuResolutions] = await resolveItemReferences(
      db,
      principal.companyId,
      items,
    );
    const issues: ValidationIssue[] = [];
    const resolved = items.map((item, i) => {
      const machine = resolvedOrIssue(machineResolutions[i], ["body", i, "machine"], issues);
      const sku = resolvedOrIssue(skuResolutions[i], ["body", i, "sku"], issues);
      if (item.start >= item.end) issues.push(startBeforeEnd(["body", i, "end"]));
      return machine && sku ? { item, machine, sku } : null;
    });
    const needsPair = resolved.flatMap((r) =>
      r && (r.item.nominalSpeed == null || r.item.countingFactor == null)
        ? [{ machineId: r.machine.id, skuId: r.sku.id }]
        : [],
    );
    const [speeds, measuredPulses] = await Promise.all([
      pairNominalSpeeds(db, principal.companyId, needsPair),
      measurePulses(c.env, principal.companyId, resolved),
    ]);
    const logs: (NewLog & { machine: ResolvedMachine })[] = [];
    resolved.forEach((r, i) => {
      if (!r) return;
      const { item, machine, sku } = r;
      const pair = speeds.get(`${machine.id}|${sku.id}`);
      const nominalSpeed = item.nominalSpeed ?? pair?.nominalSpeed;
      if (nominalSpeed === undefined) {
        issues.push({
          loc: ["body", i, "nominalSpeed"],
          msg:
            `No nominal speed for machine "${machine.name}" (id ${machine.id}) and SKU ` +
            `"${sku.sku}" (id ${sku.id}): give nominalSpeed, or create one with POST /v1/nominal-speeds`,
          type: "missing",
        });
        return;
      }
      const countingFactor = item.countingFactor ?? pair?.countingFactor ?? 1;
      const measured = Math.round(measuredPulses.get(i) ?? 0);
      const sensorCount =
        item.sensorCount ??
        (item.count == null ? measured : sensorCountOf(item.count, countingFactor));
      const count = item.count ?? countOf(sensorCount ?? 0, countingFactor);
      if (sensorCount === null || count === null) {
        issues.push({
          loc: ["body", i, "countingFactor"],
          msg:
            sensorCount === null
              ? "count / countingFactor is too large for sensorCount"
              : "sensorCount x countingFactor is too large for count",
          type: "value_error",
        });
        return;
      }
      logs.push({
        machine,
        machineId: machine.id,
        skuId: sku.id,
        shiftInstanceId: null,
        type: item.type ?? "total",
        count,
        sensorCount,
        nominalSpeed,
        countingFactor,
        start: item.start,
        end: item.end,
        isReviewed: item.isReviewed ?? false,
        operator: item.operator ?? null,
        workOrder: item.workOrder ?? null,
      });
    });
    if (issues.length > 0) throw new ApiError(422, inItemOrder(issues));

    // Every item is valid from here on, so `logs[i]` is item i.
    const { shifts, conflicts } = await placeLogs(db, principal.companyId, logs, logs, Date.now());
    conflicts.forEach((running, i) => {
      const log = logs[i];
      if (running && log) issues.push(runningShiftIssue(["body", i], log.machine, running));
    });
    if (issues.length > 0) throw new ApiError(422, issues);
    const ids = await insertLogs(
      db,
      principal.companyId,
      logs.map((log, i) => ({ ...log, shiftInstanceId: shifts[i]?.id ?? null })),
    );
    return c.json(await findExpandedLogs(db, principal, ids), 200);
  })
  .openapi(filterRoute, async (c) => {
    const filters = c.req.valid("json") ?? {};
    const { db, principal } = c.var;
    await syncPendingMachines(c.env, principal.companyId, machinesFilterCanTouch(filters));
    const page = await filterLogs(db, principal, filters, pageRequest(filters));
    return c.json(
      {
        totalCount: page.totalCount,
        totalPages: page.totalPages,
        currentPage: page.currentPage,
        productionLogs: page.rows,
      },
      200,
    );
  })
  .openapi(getRoute, async (c) => {
    const { production_log_id } = c.req.valid("param");
    const { db, principal } = c.var;
    await syncLogMachine(c.env, db, principal.companyId, production_log_id.toLowerCase());
    const [log] = await findExpandedLogs(db, principal, [production_log_id.toLowerCase()]);
    if (!log) throw notFound("Production log not found");
    return c.json(log, 200);
  })
  .openapi(patchRoute, async (c) => {
    const { production_log_id } = c.req.valid("param");
    const id = production_log_id.toLowerCase();
    const patch = c.req.valid("json");
    const { db, principal } = c.var;
    await syncLogMachine(c.env, db, principal.companyId, id);
    const current = await findLogCore(db, principal.companyId, id);
    if (!current) throw notFound("Production log not found");

    const issues: ValidationIssue[] = [];
    const [machineResolution, skuResolution] = await Promise.all([
      patch.machine ? resolveOne(resolveMachines, db, principal.companyId, patch.machine) : null,
      patch.sku ? resolveOne(resolveSkus, db, principal.companyId, patch.sku) : null,
    ]);
    const machine =
      machineResolution && resolvedOrIssue(machineResolution, ["body", "machine"], issues);
    const sku = skuResolution && resolvedOrIssue(skuResolution, ["body", "sku"], issues);
    const start = patch.start ?? current.start;
    const end = patch.end ?? current.end;
    if (start >= end) issues.push(startBeforeEnd(["body", patch.end == null ? "start" : "end"]));
    const sensorCount =
      patch.count == null ? undefined : sensorCountOf(patch.count, current.countingFactor);
    if (sensorCount === null) {
      issues.push({
        loc: ["body", "count"],
        msg: "count / countingFactor is too large for sensorCount",
        type: "value_error",
      });
    }
    if (issues.length > 0) throw new ApiError(422, issues);

    const target = machine ?? { id: current.machineId, name: current.machineName };
    const changesCounting = [
      patch.type,
      patch.count,
      patch.nominalSpeed,
      patch.start,
      patch.end,
      patch.machine,
      patch.sku,
    ].some((v) => v != null);
    const replace = target.id !== current.machineId || start !== current.start;
    const changes: LogChanges = {};
    if (changesCounting || replace) {
      const after: LogInterval = { machineId: target.id, start, end };
      const before: LogInterval = {
        machineId: current.machineId,
        start: current.start,
        end: current.end,
      };
      const { shifts, conflicts } = await placeLogs(
        db,
        principal.companyId,
        replace ? [after] : [],
        changesCounting ? [after, before] : [],
        Date.now(),
      );
      const [intoRunning, fromRunning] = conflicts;
      if (intoRunning) {
        throw new ApiError(422, [runningShiftIssue(["body"], target, intoRunning)]);
      }
      if (fromRunning) {
        throw new ApiError(422, [
          runningShiftIssue(
            ["body"],
            { id: current.machineId, name: current.machineName },
            fromRunning,
          ),
        ]);
      }
      if (replace) changes.shiftInstanceId = shifts[0]?.id ?? null;
    }
    if (patch.type != null) changes.type = patch.type;
    if (patch.count != null && sensorCount != null) {
      changes.count = patch.count;
      changes.sensorCount = sensorCount;
    }
    if (patch.nominalSpeed != null) changes.nominalSpeed = patch.nominalSpeed;
    if (patch.start != null) changes.start = patch.start;
    if (patch.end != null) changes.end = patch.end;
    if (machine) changes.machineId = machine.id;
    if (sku) changes.skuId = sku.id;
    if (patch.isReviewed != null) changes.isReviewed = patch.isReviewed;
    if (patch.operator !== undefined) changes.operator = patch.operator;
    if (patch.workOrder !== undefined) changes.workOrder = patch.workOrder;
    if (!(await updateLog(db, principal.companyId, id, changes))) {
      throw notFound("Production log not found");
    }
    return c.body(null, 204);
  })
  .openapi(deleteRoute, async (c) => {
    const { production_log_id } = c.req.valid("param");
    const { db, principal } = c.var;
    await syncLogMachine(c.env, db, principal.companyId, production_log_id.toLowerCase());
    if (!(await softDeleteLog(db, principal.companyId, production_log_id.toLowerCase()))) {
      throw notFound("Production log not found");
    }
    return c.body(null, 204);
  });

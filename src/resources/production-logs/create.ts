/**
 * `POST /v1/production-logs`: from the items of a call to the stored logs, all or none. Each
 * item's machine, SKU, nominal speed, counting factor and count are resolved (the count
 * measured from the machine's `count` signal when none is given), every problem of every
 * item is reported at once (422), the running-shift rule is checked (./running-shift.ts),
 * and the logs are written in a constant number of statements (docs/bounded-work.md) that
 * check that rule again in D1.
 */
import { sql } from "drizzle-orm";
import type { AppEnv } from "../../app-env";
import { type CompanyScope, type NamedScope, notDeleted } from "../../db/company-scope";
import { jsonChunks, jsonColumn } from "../../db/json-rows";
import { nominalSpeeds, operators, productionLogs, workOrders } from "../../db/schema";
import { ApiError, type ValidationIssue } from "../../http/errors";
import { idListConditions } from "../../http/search";
import { noUnendedStored, unendedStored } from "../../shifts/unended";
import { type ResolvedMachine, resolvedOrIssue, resolveItemReferences } from "../references";
import { sumCountSignal } from "../signals/count-sums";
import { type OperatorName, referenceStatements } from "./queries";
import { findExpandedLogs } from "./read";
import { countOf, sensorCountOf, startBeforeEnd } from "./rules";
import { placeLogs, refuseUnendedItems } from "./running-shift";
import type { LogType, ProductionLogCreate, ProductionLogOut } from "./schemas";

/**
 * The nominal speeds (not deleted) of these machine/SKU pairs, keyed `machineId|skuId`.
 *
 * @returns `{nominalSpeed, countingFactor}` per pair that has one.
 */
async function pairNominalSpeeds(
  scope: CompanyScope,
  pairs: readonly { machineId: number; skuId: string }[],
): Promise<Map<string, { nominalSpeed: number; countingFactor: number }>> {
  const { db, companyId } = scope;
  const out = new Map<string, { nominalSpeed: number; countingFactor: number }>();
  if (pairs.length === 0) return out;
  const rows = await db
    .select({
      machineId: nominalSpeeds.machineId,
      skuId: nominalSpeeds.skuId,
      nominalSpeed: nominalSpeeds.nominalSpeed,
      countingFactor: nominalSpeeds.countingFactor,
    })
    .from(nominalSpeeds)
    .where(
      notDeleted(
        { companyId },
        nominalSpeeds,
        ...idListConditions(nominalSpeeds.machineId, {
          include: [...new Set(pairs.map((p) => p.machineId))],
        }),
        ...idListConditions(nominalSpeeds.skuId, {
          include: [...new Set(pairs.map((p) => p.skuId))],
        }),
      ),
    )
    .all();
  for (const r of rows) {
    out.set(`${r.machineId}|${r.skuId}`, {
      nominalSpeed: r.nominalSpeed,
      countingFactor: r.countingFactor,
    });
  }
  return out;
}

/** A log to insert, references resolved (instants in ms). */
interface NewLog {
  machineId: number;
  skuId: string;
  shiftInstanceId: number | null;
  type: LogType;
  count: number;
  sensorCount: number;
  nominalSpeed: number;
  countingFactor: number;
  start: number;
  end: number;
  isReviewed: boolean;
  operator: OperatorName | null;
  workOrder: string | null;
}

/**
 * Inserts logs, all or none, in one batch of a constant number of statements
 * (`src/db/json-rows.ts`: one `INSERT ... SELECT FROM json_each(?)` per table
 * and chunk; for a typical 1,000-item call, three): the operators named that
 * do not exist yet, the work orders named that do not exist yet, then the
 * logs, which take their operator and work order ids through sub-selects on
 * the names (so that no other request can slip in between). Every statement
 * also requires that no stored shift instance that has not ended at `now`
 * overlaps any of the logs (`noUnendedStored`, the rule the caller checked on
 * the plan): the check and the write are one step, and a write it stops
 * creates nothing.
 *
 * @param logs the logs, every field resolved (`count` and `sensorCount` present).
 * @param now the instant of the rule's check, ms.
 * @returns the new log ids, in the order given; null when the rule stopped the write.
 */
async function insertLogs(
  scope: CompanyScope,
  logs: readonly NewLog[],
  now: number,
): Promise<string[] | null> {
  const { db, companyId } = scope;
  const guard = noUnendedStored(scope, logs, now);
  const ids = logs.map(() => crypto.randomUUID());
  const rows = logs.map((log, i) => [
    ids[i],
    log.machineId,
    log.skuId,
    log.shiftInstanceId,
    log.operator?.firstName ?? null,
    log.operator?.lastName ?? null,
    log.workOrder,
    log.type,
    log.count,
    log.sensorCount,
    log.nominalSpeed,
    log.countingFactor,
    log.start,
    log.end,
    log.isReviewed,
  ]);
  // Every column in table order, as drizzle's insert-select lists them. An item
  // without an operator has NULL names, which match no operator: NULL id.
  const inserts = jsonChunks(rows).map((chunk) =>
    db
      .insert(productionLogs)
      .select(
        sql`SELECT j.id, CAST(${companyId} AS INTEGER), j.machine_id, j.sku_id, j.shift_instance_id,
            (SELECT min(${operators.id}) FROM ${operators}
              WHERE ${operators.companyId} = ${companyId} AND ${operators.firstName} = j.first_name
                AND ${operators.lastName} = j.last_name AND ${operators.deletedAt} IS NULL),
            (SELECT ${workOrders.id} FROM ${workOrders}
              WHERE ${workOrders.companyId} = ${companyId} AND ${workOrders.name} = j.work_order),
            NULL, j.type, j.count, j.sensor_count, j.nominal_speed, j.counting_factor, j.start, j.end_at,
            j.is_reviewed, 0, 0, CAST(${now} AS INTEGER), CAST(${now} AS INTEGER), NULL
          FROM (SELECT key, ${jsonColumn(0)} AS id, ${jsonColumn(1)} AS machine_id,
                  ${jsonColumn(2)} AS sku_id, ${jsonColumn(3)} AS shift_instance_id,
                  ${jsonColumn(4)} AS first_name, ${jsonColumn(5)} AS last_name,
                  ${jsonColumn(6)} AS work_order, ${jsonColumn(7)} AS type, ${jsonColumn(8)} AS count,
                  ${jsonColumn(9)} AS sensor_count, ${jsonColumn(10)} AS nominal_speed,
                  ${jsonColumn(11)} AS counting_factor, ${jsonColumn(12)} AS start,
                  ${jsonColumn(13)} AS end_at, ${jsonColumn(14)} AS is_reviewed
                FROM json_each(${chunk})) AS j
          WHERE ${guard}
          ORDER BY j.key`,
      )
      .returning({ id: productionLogs.id }),
  );
  const [first, ...rest] = [...referenceStatements(scope, logs, now, guard), ...inserts];
  if (!first) return ids;
  const results: unknown[] = await db.batch([first, ...rest]);
  const inserted = results
    .slice(results.length - inserts.length)
    .reduce((sum: number, r) => sum + (r as unknown[]).length, 0);
  return inserted === logs.length ? ids : null;
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

/** The issues sorted by item index (`loc[1]`), keeping the order of each item's own issues. */
function inItemOrder(issues: ValidationIssue[]): ValidationIssue[] {
  const index = (i: ValidationIssue) => (typeof i.loc[1] === "number" ? i.loc[1] : -1);
  return [...issues].sort((a, b) => index(a) - index(b));
}

/** An item whose machine and SKU resolved (see {@link createLogs}). */
interface ResolvedItem {
  item: ProductionLogCreate;
  machine: ResolvedMachine;
  sku: { id: string; sku: string };
}

/**
 * The log item `i` writes: its nominal speed (the item's, else the machine/SKU pair's, units
 * per minute) and counting factor (else the pair's, else 1), its count and sensor count (the
 * one given, the other derived through the counting factor; neither given: the pulses the
 * machine's signals measured over the item's interval, `measuredPulses`). Null, with the issue
 * pushed on `issues`, when no nominal speed is known or a derived count is too large.
 */
function logOfItem(
  { item, machine, sku }: ResolvedItem,
  i: number,
  speeds: Awaited<ReturnType<typeof pairNominalSpeeds>>,
  measuredPulses: Map<number, number>,
  issues: ValidationIssue[],
): (NewLog & { machine: ResolvedMachine }) | null {
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
    return null;
  }
  const countingFactor = item.countingFactor ?? pair?.countingFactor ?? 1;
  const measured = Math.round(measuredPulses.get(i) ?? 0);
  const sensorCount =
    item.sensorCount ?? (item.count == null ? measured : sensorCountOf(item.count, countingFactor));
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
    return null;
  }
  return {
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
  };
}

/**
 * Creates the logs of one call, all or none: resolves each item's machine and SKU, reads
 * the nominal speeds of the pairs and the measured pulses it needs, makes each item's log
 * ({@link logOfItem}), places the logs in their shift instances, and inserts them.
 *
 * @param env the Worker's bindings (the machines' signal stores, for measured counts).
 * @param scope the caller's company; the logs are its company's.
 * @param items the validated body, in order.
 * @returns the created logs, expanded as GET shows them, in the order of `items`.
 * @throws ApiError 422 with every problem of every item (`loc` `["body", i, ...]`).
 */
export async function createLogs(
  env: AppEnv["Bindings"],
  scope: NamedScope,
  items: readonly ProductionLogCreate[],
): Promise<ProductionLogOut[]> {
  const [machineResolutions, skuResolutions] = await resolveItemReferences(scope, items);
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
    pairNominalSpeeds(scope, needsPair),
    measurePulses(env, scope.companyId, resolved),
  ]);
  const logs: (NewLog & { machine: ResolvedMachine })[] = [];
  resolved.forEach((r, i) => {
    const log = r && logOfItem(r, i, speeds, measuredPulses, issues);
    if (log) logs.push(log);
  });
  if (issues.length > 0) throw new ApiError(422, inItemOrder(issues));

  // Every item is valid from here on, so `logs[i]` is item i.
  const now = Date.now();
  const machines = logs.map((log) => log.machine);
  const { shifts, conflicts } = await placeLogs(scope, logs, logs, now);
  refuseUnendedItems(conflicts, machines, now);
  const ids = await insertLogs(
    scope,
    logs.map((log, i) => ({ ...log, shiftInstanceId: shifts[i]?.id ?? null })),
    now,
  );
  // Stopped in D1: an instance stored since the plan was read (see insertLogs).
  if (ids === null) {
    refuseUnendedItems(await unendedStored(scope.db, scope, logs, now), machines, now);
    throw new ApiError(409, "A shift of these machines changed meanwhile; retry the call");
  }
  return findExpandedLogs(scope, ids);
}

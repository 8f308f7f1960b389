/**
 * `POST /v1/production-logs`: from the items of a create call to the stored
 * logs. Each item's machine, SKU, nominal speed, counting factor and count are
 * resolved (the count measured from the machine's `count` signal when none is
 * given), every problem of every item is reported at once (422), a log may not
 * reach into a shift of its machine that has not ended (`./placement.ts`), and the
 * logs are written all or none, in the step that checks that rule again in D1.
 */

import type { AppEnv } from "../../app-env";
import type { NamedScope } from "../../db/company-scope";
import { ApiError, type ValidationIssue } from "../../http/errors";
import { type UnendedInstance, unendedStored } from "../../shifts/unended";
import {
  type ResolvedMachine,
  resolvedOrIssue,
  resolveItemReferences,
} from "../nominal-speeds/references";
import { sumCountSignal } from "../signals/count-sums";
import { insertLogs, type NewLog, pairNominalSpeeds } from "./insert";
import { placeLogs, unendedShiftIssue } from "./placement";
import { findExpandedLogs } from "./read";
import { countOf, sensorCountOf, startBeforeEnd } from "./rules";
import type { ProductionLogCreate, ProductionLogOut } from "./schemas";

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

/**
 * Creates the logs of one call, all or none.
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
  const now = Date.now();
  const { shifts, conflicts } = await placeLogs(scope, logs, logs, now);
  const refuse = (found: readonly (UnendedInstance | null)[]) => {
    found.forEach((instance, i) => {
      const log = logs[i];
      if (instance && log) issues.push(unendedShiftIssue(["body", i], log.machine, instance, now));
    });
    if (issues.length > 0) throw new ApiError(422, issues);
  };
  refuse(conflicts);
  const ids = await insertLogs(
    scope,
    logs.map((log, i) => ({ ...log, shiftInstanceId: shifts[i]?.id ?? null })),
    now,
  );
  // Stopped in D1: an instance stored since the plan was read (see insertLogs).
  if (ids === null) {
    refuse(await unendedStored(scope.db, scope, logs, now));
    throw new ApiError(409, "A shift of these machines changed meanwhile; retry the call");
  }
  return findExpandedLogs(scope, ids);
}

/**
 * "At most one nominal speed per machine/SKU pair" (docs/resources.md), with the two writes
 * it governs: a create (the same pair twice in one call is a 422, a pair that already has a
 * nominal speed a 409 naming it) and a PATCH that moves a nominal speed to another pair. The
 * partial unique index `nominal_speeds_active_pair_unique` is the rule's SQL half: a pair
 * taken between the check and the write fails there and is answered with the same 409.
 */

import type { NamedScope } from "../../db/company-scope";
import { ApiError, type ValidationIssue } from "../../http/errors";
import { findRow, updateRow } from "../crud-queries";
import {
  type ResolvedMachine,
  type ResolvedSku,
  resolvedOrIssue,
  resolveItemReferences,
  resolveMachineRefs,
  resolveOne,
  resolveSkuRefs,
} from "../references";
import {
  findPairHolders,
  insertNominalSpeeds,
  isPairConflict,
  type NewNominalSpeed,
  type NominalSpeedRow,
  nominalSpeedTable,
  type PairHolder,
} from "./queries";
import type { NominalSpeedCreate, NominalSpeedPatch } from "./schemas";

/**
 * 409 naming the nominal speed(s) that already hold the pairs.
 *
 * @param holders the holders found; `describe` names a pair for the message.
 */
function pairConflict(
  holders: readonly PairHolder[],
  describe: (h: PairHolder) => string,
): ApiError {
  const shown = holders.slice(0, 10).map((h) => `${describe(h)}: ${h.id}`);
  const more = holders.length > shown.length ? ` (and ${holders.length - shown.length} more)` : "";
  return new ApiError(
    409,
    `A nominal speed already exists for ${shown.join("; ")}${more}. ` +
      "There is at most one per machine and SKU: update it with PATCH, or delete it first.",
  );
}

/**
 * Runs `write` unless another nominal speed (not deleted, other than `exceptId`) holds one of
 * `pairs`, before the write or, through the unique index, during it.
 *
 * @throws ApiError 409 naming the holders (`describe` names a pair).
 */
async function holdingPairs<T>(
  scope: NamedScope,
  pairs: { machineId: number; skuId: string }[],
  describe: (h: PairHolder) => string,
  write: () => Promise<T>,
  exceptId?: string,
): Promise<T> {
  const holders = await findPairHolders(scope, pairs, exceptId);
  if (holders.length > 0) throw pairConflict(holders, describe);
  try {
    return await write();
  } catch (error) {
    // Another request took a pair between the check and the write.
    if (isPairConflict(error)) {
      const raced = await findPairHolders(scope, pairs, exceptId);
      if (raced.length > 0) throw pairConflict(raced, describe);
    }
    throw error;
  }
}

/**
 * Creates the nominal speeds of one call, all or none.
 *
 * @param items the validated body, in order.
 * @returns the created nominal speeds, machine and SKU expanded, in the order of `items`.
 * @throws ApiError 422 with every bad reference and every repeated pair (`["body", i, ...]`);
 *   409 when a pair already has a nominal speed.
 */
export async function createNominalSpeeds(
  scope: NamedScope,
  items: readonly NominalSpeedCreate[],
): Promise<NominalSpeedRow[]> {
  const [machineResolutions, skuResolutions] = await resolveItemReferences(scope, items);
  const issues: ValidationIssue[] = [];
  const rows: NewNominalSpeed[] = [];
  const firstIndexOfPair = new Map<string, number>();
  items.forEach((item, i) => {
    const machineResolution = machineResolutions[i];
    const skuResolution = skuResolutions[i];
    if (!machineResolution || !skuResolution) return;
    const machine = resolvedOrIssue(machineResolution, ["body", i, "machine"], issues);
    const sku = resolvedOrIssue(skuResolution, ["body", i, "sku"], issues);
    if (!machine || !sku) return;
    const pair = `${machine.id}|${sku.id}`;
    const earlier = firstIndexOfPair.get(pair);
    if (earlier !== undefined) {
      issues.push({
        loc: ["body", i],
        msg: `Same machine and SKU as item ${earlier}: at most one nominal speed per pair`,
        type: "value_error",
      });
      return;
    }
    firstIndexOfPair.set(pair, i);
    rows.push({
      machine,
      sku,
      nominalSpeed: item.nominalSpeed,
      countingFactor: item.countingFactor ?? 1,
    });
  });
  if (issues.length > 0) throw new ApiError(422, issues);

  const machinesById = new Map<number, ResolvedMachine>(rows.map((r) => [r.machine.id, r.machine]));
  const skusById = new Map<string, ResolvedSku>(rows.map((r) => [r.sku.id, r.sku]));
  const describe = (h: PairHolder) =>
    `machine "${machinesById.get(h.machineId)?.name ?? h.machineId}" (id ${h.machineId}) and ` +
    `SKU "${skusById.get(h.skuId)?.sku ?? h.skuId}" (id ${h.skuId})`;
  const pairs = rows.map((r) => ({ machineId: r.machine.id, skuId: r.sku.id }));
  return holdingPairs(scope, pairs, describe, () => insertNominalSpeeds(scope, rows));
}

/**
 * Applies a PATCH to the company's nominal speed `id` (not deleted).
 *
 * @param id lowercase uuid.
 * @param patch the validated body.
 * @returns false when there is no such nominal speed (or it was deleted meanwhile).
 * @throws ApiError 422 for a bad reference; 409 when the new pair has another nominal speed.
 */
export async function patchNominalSpeed(
  scope: NamedScope,
  id: string,
  patch: NominalSpeedPatch,
): Promise<boolean> {
  const current = await findRow(scope, nominalSpeedTable, id);
  if (!current) return false;
  const issues: ValidationIssue[] = [];
  const [machineResolution, skuResolution] = await Promise.all([
    patch.machine ? resolveOne(resolveMachineRefs, scope, patch.machine) : undefined,
    patch.sku ? resolveOne(resolveSkuRefs, scope, patch.sku) : undefined,
  ]);
  const machine =
    machineResolution && resolvedOrIssue(machineResolution, ["body", "machine"], issues);
  const sku = skuResolution && resolvedOrIssue(skuResolution, ["body", "sku"], issues);
  if (issues.length > 0) throw new ApiError(422, issues);

  const target = { machine: machine ?? current.machine, sku: sku ?? current.sku };
  const describe = (h: PairHolder) =>
    `machine "${target.machine.name}" (id ${h.machineId}) and SKU "${target.sku.sku}" (id ${h.skuId})`;
  const set: {
    machineId?: number;
    skuId?: string;
    nominalSpeed?: number;
    countingFactor?: number;
  } = {};
  if (machine) set.machineId = machine.id;
  if (sku) set.skuId = sku.id;
  if (patch.nominalSpeed !== undefined) set.nominalSpeed = patch.nominalSpeed;
  if (patch.countingFactor !== undefined) set.countingFactor = patch.countingFactor;
  const update = () => updateRow(scope, nominalSpeedTable, id, set);
  const pairChanges = target.machine.id !== current.machine.id || target.sku.id !== current.sku.id;
  if (!pairChanges) return update();
  const pair = [{ machineId: target.machine.id, skuId: target.sku.id }];
  return holdingPairs(scope, pair, describe, update, id);
}

/**
 * The nominal speeds' table as the shared queries read it (../crud-queries.ts: find, search,
 * update, soft delete), with its machine and SKU joined, and the queries of the pair rule
 * (./rules.ts): the holders of a pair, and the insert. Every query is scoped to a company.
 * At most one active nominal speed per machine/SKU pair (partial unique index
 * `nominal_speeds_active_pair_unique`).
 */

import { asc, eq, ne } from "drizzle-orm";
import { type CompanyScope, notDeleted } from "../../db/company-scope";
import { jsonRowSelects } from "../../db/json-rows";
import { machines, nominalSpeeds, skus } from "../../db/schema";
import { idListConditions, numericConditions } from "../../http/search";
import type { CrudTable } from "../crud-queries";
import type { ResolvedMachine, ResolvedSku } from "../references";
import type { NominalSpeedFilters } from "./schemas";

/** A nominal speed with its machine and SKU (instants in ms since the epoch). */
export interface NominalSpeedRow {
  id: string;
  machine: ResolvedMachine;
  sku: ResolvedSku;
  nominalSpeed: number;
  countingFactor: number;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

/** The columns of a nominal speed, with its machine's and SKU's nested as the API shows them. */
const columns = {
  id: nominalSpeeds.id,
  machine: { id: machines.id, name: machines.name },
  sku: {
    id: skus.id,
    sku: skus.sku,
    name: skus.name,
    description: skus.description,
    unit: skus.unit,
  },
  nominalSpeed: nominalSpeeds.nominalSpeed,
  countingFactor: nominalSpeeds.countingFactor,
  createdAt: nominalSpeeds.createdAt,
  updatedAt: nominalSpeeds.updatedAt,
  deletedAt: nominalSpeeds.deletedAt,
};

/**
 * The nominal speeds, each with its machine and SKU: searched by machine and SKU id lists and
 * comparisons with the speed, ordered by machine name, machine id, SKU code, then id. Machine
 * and SKU are joined without a deleted_at filter: a nominal speed keeps showing what it was
 * set for even after its SKU or machine is deleted.
 */
export const nominalSpeedTable: CrudTable<NominalSpeedRow, NominalSpeedFilters> = {
  table: nominalSpeeds,
  select: (db) =>
    db
      .select(columns)
      .from(nominalSpeeds)
      .innerJoin(machines, eq(machines.id, nominalSpeeds.machineId))
      .innerJoin(skus, eq(skus.id, nominalSpeeds.skuId)),
  filters: (filters) => [
    ...idListConditions(nominalSpeeds.machineId, filters.machines),
    ...idListConditions(nominalSpeeds.skuId, filters.skus),
    ...numericConditions(nominalSpeeds.nominalSpeed, filters.nominalSpeed),
  ],
  order: [asc(machines.name), asc(machines.id), asc(skus.sku), asc(nominalSpeeds.id)],
};

/** An active nominal speed holding a machine/SKU pair. */
export interface PairHolder {
  id: string;
  machineId: number;
  skuId: string;
}

/**
 * The active nominal speeds of the company holding any of these machine/SKU pairs.
 *
 * @param exceptId a nominal speed to ignore (the one being updated).
 */
export async function findPairHolders(
  scope: CompanyScope,
  pairs: readonly { machineId: number; skuId: string }[],
  exceptId?: string,
): Promise<PairHolder[]> {
  if (pairs.length === 0) return [];
  const machineIds = [...new Set(pairs.map((p) => p.machineId))];
  const skuIds = [...new Set(pairs.map((p) => p.skuId))];
  const candidates = await scope.db
    .select({
      id: nominalSpeeds.id,
      machineId: nominalSpeeds.machineId,
      skuId: nominalSpeeds.skuId,
    })
    .from(nominalSpeeds)
    .where(
      notDeleted(
        scope,
        nominalSpeeds,
        ...idListConditions(nominalSpeeds.machineId, { include: machineIds }),
        ...idListConditions(nominalSpeeds.skuId, { include: skuIds }),
        exceptId === undefined ? undefined : ne(nominalSpeeds.id, exceptId),
      ),
    )
    .all();
  const wanted = new Set(pairs.map((p) => `${p.machineId}|${p.skuId}`));
  return candidates.filter((c) => wanted.has(`${c.machineId}|${c.skuId}`));
}

/** True when `error` is D1's report of the active-pair unique index. */
export function isPairConflict(error: unknown): boolean {
  return String(error).includes("UNIQUE constraint failed: nominal_speeds");
}

/** A nominal speed to insert, references resolved. */
export interface NewNominalSpeed {
  machine: ResolvedMachine;
  sku: ResolvedSku;
  nominalSpeed: number;
  countingFactor: number;
}

/**
 * Inserts nominal speeds, all or none: one `INSERT ... SELECT FROM
 * json_each(?)` per chunk of rows (`src/db/json-rows.ts`), in one batch.
 *
 * @returns the created rows, in the order given.
 * @throws the D1 error of the unique index when a pair is taken meanwhile (see `isPairConflict`).
 */
export async function insertNominalSpeeds(
  scope: CompanyScope,
  items: readonly NewNominalSpeed[],
): Promise<NominalSpeedRow[]> {
  const now = Date.now();
  const rows: NominalSpeedRow[] = items.map((item) => ({
    id: crypto.randomUUID(),
    ...item,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  }));
  // Every column in table order, as drizzle's insert-select lists them.
  const [first, ...rest] = jsonRowSelects(
    scope,
    ["json", "company", "json", "json", "json", "json", "now", "now", "null"],
    rows.map((r) => [r.id, r.machine.id, r.sku.id, r.nominalSpeed, r.countingFactor]),
    { now },
  ).map((select) => scope.db.insert(nominalSpeeds).select(select));
  if (first) await scope.db.batch([first, ...rest]);
  return rows;
}

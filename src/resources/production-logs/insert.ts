/**
 * Creating production logs: the nominal speeds a create falls back on, and
 * the insert of every log of a call in a constant number of statements
 * (docs/bounded-work.md).
 */

import { sql } from "drizzle-orm";
import { type CompanyScope, notDeleted } from "../../db/company-scope";
import { jsonChunks, jsonColumn } from "../../db/json-rows";
import { nominalSpeeds, operators, productionLogs, workOrders } from "../../db/schema";
import { idListConditions } from "../../http/search";
import { noUnendedStored } from "../../shifts/unended";
import { type OperatorName, referenceStatements } from "./queries";
import type { LogType } from "./schemas";

/**
 * The live nominal speeds of these machine/SKU pairs, keyed `machineId|skuId`.
 *
 * @returns `{nominalSpeed, countingFactor}` per pair that has one.
 */
export async function pairNominalSpeeds(
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
export interface NewLog {
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
export async function insertLogs(
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

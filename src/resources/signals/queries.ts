/**
 * Signal queries; every one is scoped to a company.
 */

import { and, asc, eq, isNotNull, isNull } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type CompanyScope, owned } from "../../db/company-scope";
import { companies, machines, signals } from "../../db/schema";

export interface SignalRow {
  id: number;
  /** The machine's internal id (its `SignalStore` holds the samples). */
  machineId: number;
  publicId: string;
  name: string;
  displayName: string;
  descriptionEn: string | null;
  descriptionEs: string | null;
}

const signalColumns = {
  id: signals.id,
  machineId: signals.machineId,
  publicId: signals.publicId,
  name: signals.name,
  displayName: signals.displayName,
  descriptionEn: signals.descriptionEn,
  descriptionEs: signals.descriptionEs,
};

/** Listed signals of a machine: not deleted and with a kind, by name, display name, id. */
export function listMachineSignals(scope: CompanyScope, machineId: number): Promise<SignalRow[]> {
  const { db, companyId } = scope;
  return db
    .select(signalColumns)
    .from(signals)
    .where(
      owned(
        { companyId },
        signals,
        eq(signals.machineId, machineId),
        isNull(signals.deletedAt),
        isNotNull(signals.kind),
      ),
    )
    .orderBy(asc(signals.name), asc(signals.displayName), asc(signals.id))
    .all();
}

/**
 * One listed signal by the uuid of its machine and its own public id, in one query.
 *
 * @returns the signal, or undefined when the machine or the signal is unknown, deleted,
 *   not listed (no kind), of another machine, or of another company.
 */
export function findSignalByMachineUuid(
  scope: CompanyScope,
  machineUuid: string,
  publicId: string,
): Promise<SignalRow | undefined> {
  const { db, companyId } = scope;
  return db
    .select(signalColumns)
    .from(signals)
    .innerJoin(machines, eq(machines.id, signals.machineId))
    .where(
      owned(
        { companyId },
        signals,
        eq(signals.publicId, publicId),
        isNull(signals.deletedAt),
        isNotNull(signals.kind),
        owned({ companyId }, machines),
        eq(machines.uuid, machineUuid),
        isNull(machines.deletedAt),
      ),
    )
    .get();
}

/** What an ingestion call needs of its signal: where its samples go and their retention. */
export interface IngestTarget {
  id: number;
  companyId: number;
  machineId: number;
  name: string;
  /** The company's raw-sample retention, days; null = kept forever. */
  retentionDays: number | null;
  /** The company's hot window, days: older hours move to the archive on R2. */
  hotWindowDays: number;
}

/**
 * A live (not deleted) signal by its public id, with its company's retention and hot window (the operator
 * API's ingestion: any company, listed or not).
 *
 * @param publicId lower case.
 * @returns undefined when no live signal has that id.
 */
export function findIngestTarget(
  db: Database,
  publicId: string,
): Promise<IngestTarget | undefined> {
  return db
    .select({
      id: signals.id,
      companyId: signals.companyId,
      machineId: signals.machineId,
      name: signals.name,
      retentionDays: companies.signalRetentionDays,
      hotWindowDays: companies.signalHotWindowDays,
    })
    .from(signals)
    .innerJoin(companies, eq(companies.id, signals.companyId))
    .where(and(eq(signals.publicId, publicId), isNull(signals.deletedAt)))
    .get();
}

/**
 * The description in the asked language, falling back to English when there is no translation.
 */
export function describe(
  row: Pick<SignalRow, "descriptionEn" | "descriptionEs">,
  language: "en" | "es",
): string | null {
  if (language === "es" && row.descriptionEs) return row.descriptionEs;
  return row.descriptionEn;
}

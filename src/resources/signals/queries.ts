/**
 * Signal queries; every one is scoped to a company.
 */

import { and, asc, eq, isNotNull, isNull, or, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type CompanyScope, owned } from "../../db/company-scope";
import { inJsonList } from "../../db/json-list";
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
 * A signal that is not deleted, by its public id, with its company's retention and hot window (the operator
 * API's ingestion: any company, listed or not).
 *
 * @param publicId lower case.
 * @returns undefined when no signal that is not deleted has that id.
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
 * A company's signal settings as its shard's mirror holds them: the raw-sample retention
 * (days, null = forever) and the hot window (days). Read by each machine's store at its
 * hourly alarm, so that a new setting applies to machines that upload nothing.
 *
 * @returns the settings, or undefined when the shard has no such company.
 */
export function companySignalSettings(
  db: Database,
  companyId: number,
): Promise<{ retentionDays: number | null; hotWindowDays: number } | undefined> {
  return db
    .select({
      retentionDays: companies.signalRetentionDays,
      hotWindowDays: companies.signalHotWindowDays,
    })
    .from(companies)
    .where(eq(companies.id, companyId))
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

/** A listed signal with its machine's uuid: what a signal export reads and writes. */
export interface ListedSignal {
  /** The signal's internal id. */
  id: number;
  machineId: number;
  machineUuid: string;
  publicId: string;
  name: string;
}

/**
 * The listed signals (not deleted, with a kind) of the company's machines (not deleted)
 * that are named by their machine's uuid or by their own public id, in the order the
 * signal list gives them (machine id, then name, display name, id).
 *
 * @param machineUuids machine uuids, lower case: every listed signal of each.
 * @param publicIds signal public ids, lower case.
 */
export function listedSignalsOf(
  scope: CompanyScope,
  machineUuids: readonly string[],
  publicIds: readonly string[],
): Promise<ListedSignal[]> {
  const { db, companyId } = scope;
  const named: SQL[] = [];
  if (machineUuids.length > 0) named.push(inJsonList(machines.uuid, [...machineUuids]));
  if (publicIds.length > 0) named.push(inJsonList(signals.publicId, [...publicIds]));
  if (named.length === 0) return Promise.resolve([]);
  return db
    .select({
      id: signals.id,
      machineId: signals.machineId,
      machineUuid: sql<string>`${machines.uuid}`,
      publicId: signals.publicId,
      name: signals.name,
    })
    .from(signals)
    .innerJoin(machines, eq(machines.id, signals.machineId))
    .where(
      owned(
        { companyId },
        signals,
        isNull(signals.deletedAt),
        isNotNull(signals.kind),
        owned({ companyId }, machines),
        isNull(machines.deletedAt),
        isNotNull(machines.uuid),
        or(...named),
      ),
    )
    .orderBy(asc(signals.machineId), asc(signals.name), asc(signals.displayName), asc(signals.id))
    .all();
}

/**
 * Whether a signal is still listed (not deleted, with a kind) on a machine of the company
 * that is not deleted: a signal export asks before each batch of a signal it selected when
 * it started (docs/exports.md, "Signals deleted while an export runs").
 *
 * @param signalId the signal's internal id.
 */
export async function isSignalListed(scope: CompanyScope, signalId: number): Promise<boolean> {
  const { db, companyId } = scope;
  const row = await db
    .select({ id: signals.id })
    .from(signals)
    .innerJoin(machines, eq(machines.id, signals.machineId))
    .where(
      owned(
        { companyId },
        signals,
        eq(signals.id, signalId),
        isNull(signals.deletedAt),
        isNotNull(signals.kind),
        isNull(machines.deletedAt),
      ),
    )
    .get();
  return row !== undefined;
}

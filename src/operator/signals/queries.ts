/**
 * D1 queries of the operator's signal routes (./routes.ts): create and delete
 * signals. Samples go to the machine's signal store (src/resources/signals/ingest.ts).
 */

import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type CompanyScope, softDeleted } from "../../db/company-scope";
import { withKeys } from "../../db/directory-keys";
import { inJsonList } from "../../db/json-list";
import { signals } from "../../db/schema";
import type { DirectoryEnv } from "../../db/shards";
import { ApiError } from "../../http/errors";

/** A signal to create; `publicId` omitted = generated. */
export interface SignalInput {
  publicId?: string | undefined;
  name: string;
  displayName: string;
  kind: string | null;
  description?: { en?: string | null | undefined; es?: string | null | undefined } | undefined;
}

/** A created signal's row as stored (public id lower case). */
interface CreatedSignal {
  publicId: string;
  companyId: number;
  machineId: number;
  name: string;
  displayName: string;
  kind: string | null;
  descriptionEn: string | null;
  descriptionEs: string | null;
}

/**
 * Creates signals of a machine of the company in one batch (all or none).
 *
 * @returns the stored rows in order.
 * @throws ApiError 409 when a public id is used (by any signal, deleted ones included) or
 *   given twice, or a (name, display name) pair repeats in the call or on a not-deleted signal of
 *   the machine.
 */
export async function createSignals(
  env: DirectoryEnv,
  scope: CompanyScope,
  machineId: number,
  items: readonly SignalInput[],
): Promise<CreatedSignal[]> {
  const { db, companyId } = scope;
  const rows = items.map((s) => ({
    publicId: s.publicId?.toLowerCase() ?? crypto.randomUUID(),
    companyId,
    machineId,
    name: s.name,
    displayName: s.displayName,
    kind: s.kind,
    descriptionEn: s.description?.en ?? null,
    descriptionEs: s.description?.es ?? null,
  }));
  await refuseDuplicateSignals(db, machineId, rows);
  const [first, ...rest] = rows.map((r) => db.insert(signals).values(r));
  // A public id is unique across shards: the directory holds it (src/db/directory-keys.ts).
  const written = await withKeys(
    env,
    "signal",
    companyId,
    rows.map((r) => r.publicId),
    async () => {
      try {
        if (first) await db.batch([first, ...rest]);
      } catch (error) {
        if (String(error).includes("UNIQUE constraint failed: signals.public_id")) return "taken";
        throw error;
      }
      return "written";
    },
  );
  if (written === "taken") {
    throw new ApiError(409, "A signal with one of these publicIds already exists");
  }
  return rows;
}

/**
 * Soft-deletes the signal (not deleted) with this public id, of any company.
 *
 * @param publicId the signal's uuid, any case.
 * @returns its row id, or null when unknown or already deleted.
 */
export async function deleteSignal(db: Database, publicId: string): Promise<{ id: number } | null> {
  const row = await db
    .update(signals)
    .set(softDeleted(signals))
    .where(and(eq(signals.publicId, publicId.toLowerCase()), isNull(signals.deletedAt)))
    .returning({ id: signals.id })
    .get();
  return row ?? null;
}

/**
 * Refuses a signal create whose rows repeat a public id or a (name, display name) pair
 * among themselves, or a pair of a not-deleted signal of the machine (a used public id is left
 * to the unique index: it also covers deleted signals and other machines).
 *
 * @param db the database.
 * @param machineId the machine the signals are created on.
 * @param rows the rows about to be inserted (public ids already lower case).
 * @throws ApiError 409 naming the first repeated id or pair.
 */
async function refuseDuplicateSignals(
  db: Database,
  machineId: number,
  rows: readonly { publicId: string; name: string; displayName: string }[],
): Promise<void> {
  const ids = new Set<string>();
  const pairs = new Set<string>();
  for (const row of rows) {
    if (ids.has(row.publicId)) {
      throw new ApiError(409, `The publicId ${row.publicId} is given twice`);
    }
    ids.add(row.publicId);
    const pair = JSON.stringify([row.name, row.displayName]);
    if (pairs.has(pair)) {
      throw new ApiError(409, `The signal "${row.name}" / "${row.displayName}" is given twice`);
    }
    pairs.add(pair);
  }
  // One query whatever the number of rows: the names are bound as one JSON array (D1
  // takes at most 100 bound parameters, a call up to 1,000 signals).
  const names = JSON.stringify([...new Set(rows.map((row) => row.name))]);
  const existing = await db
    .select({ name: signals.name, displayName: signals.displayName })
    .from(signals)
    .where(
      and(
        eq(signals.machineId, machineId),
        isNull(signals.deletedAt),
        inJsonList(signals.name, names),
      ),
    )
    .all();
  const taken = existing.find((row) => pairs.has(JSON.stringify([row.name, row.displayName])));
  if (taken) {
    throw new ApiError(
      409,
      `The machine already has a signal "${taken.name}" / "${taken.displayName}"`,
    );
  }
}

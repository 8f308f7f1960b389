/**
 * D1 query of the operator's diagnostics route (./routes.ts).
 */
import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../../db/client";
import { signals } from "../../db/schema";

/**
 * The signal (not deleted) with this public id, of any company: the operator addresses
 * signals by their global public id.
 *
 * @param publicId the signal's uuid, any case.
 * @returns its row id, company and machine, or null.
 */
export async function findSignalOfAnyCompany(
  db: Database,
  publicId: string,
): Promise<{ id: number; companyId: number; machineId: number } | null> {
  const row = await db
    .select({ id: signals.id, companyId: signals.companyId, machineId: signals.machineId })
    .from(signals)
    .where(and(eq(signals.publicId, publicId.toLowerCase()), isNull(signals.deletedAt)))
    .get();
  return row ?? null;
}

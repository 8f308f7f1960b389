/**
 * D1 work of the operator's stop-detection route (./detection-routes.ts): the signal the
 * analog rule names.
 */
import { asc, eq, isNull } from "drizzle-orm";
import { type CompanyScope, owned } from "../../db/company-scope";
import { signals } from "../../db/schema";

/**
 * The machine's lowest-id signal of this name that is not deleted (as the count signal is
 * found), or null.
 */
export async function findSignalByName(
  scope: CompanyScope,
  machineId: number,
  name: string,
): Promise<number | null> {
  const row = await scope.db
    .select({ id: signals.id })
    .from(signals)
    .where(
      owned(
        scope,
        signals,
        eq(signals.machineId, machineId),
        eq(signals.name, name),
        isNull(signals.deletedAt),
      ),
    )
    .orderBy(asc(signals.id))
    .limit(1)
    .get();
  return row?.id ?? null;
}

/**
 * D1 query of the operator's shift routes (./routes.ts); the definitions
 * themselves are stored and listed by src/shifts/definitions.ts.
 */
import type { CompanyScope } from "../../db/company-scope";
import { machineIdsQuery } from "../../shifts/plan";

/**
 * The machines that new shift definitions apply to, so that their realtime objects can be
 * armed at the shifts' boundaries.
 *
 * @param machineIdLists each definition's machines; null or undefined = every machine of
 *   the company.
 * @returns distinct machine ids (every machine of the company when one list is null).
 */
export async function machinesOfShifts(
  scope: CompanyScope,
  machineIdLists: readonly (readonly number[] | null | undefined)[],
): Promise<number[]> {
  if (machineIdLists.some((ids) => ids == null)) {
    return (await machineIdsQuery(scope).all()).map((m) => m.id);
  }
  return [...new Set(machineIdLists.flatMap((ids) => ids ?? []))];
}

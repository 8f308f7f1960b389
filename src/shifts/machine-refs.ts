/**
 * Machines a shift definition or closure body names, checked against the company's: the one
 * wording of "not a machine of this company" for both (src/shifts/definitions.ts,
 * src/shifts/closures.ts).
 */
import { ApiError, type ValidationIssue } from "../http/errors";

/** A machine id a body names, at its place in the body (`["body", 0, "machineIds", 2]`). */
export interface MachineRef {
  loc: (string | number)[];
  id: number;
}

/**
 * Refuses a body that names a machine the company does not have (or has deleted).
 *
 * @param refs the machine ids the body names, each at its place.
 * @param known the company's machines (not deleted) among them, or all of them.
 * @throws ApiError 422 with one `not_found` issue per unknown ref, at its `loc`.
 */
export function assertCompanyMachines(
  refs: readonly MachineRef[],
  known: ReadonlySet<number>,
): void {
  const issues: ValidationIssue[] = refs
    .filter((ref) => !known.has(ref.id))
    .map((ref) => ({
      loc: ref.loc,
      msg: `Machine ${ref.id} is not a machine of this company`,
      type: "not_found",
    }));
  if (issues.length > 0) throw new ApiError(422, issues);
}

/**
 * Machine queries; every one is scoped to a company.
 */

import { asc, eq } from "drizzle-orm";
import { type CompanyScope, live } from "../../db/company-scope";
import { machines } from "../../db/schema";

export interface MachineRow {
  id: number;
  uuid: string | null;
  name: string;
  externalName: string | null;
  isCountEnabled: boolean;
}

const machineColumns = {
  id: machines.id,
  uuid: machines.uuid,
  name: machines.name,
  externalName: machines.externalName,
  isCountEnabled: machines.isCountEnabled,
};

/** The company's machines (not deleted), by id. */
export function listMachines(scope: CompanyScope): Promise<MachineRow[]> {
  return scope.db
    .select(machineColumns)
    .from(machines)
    .where(live(scope, machines))
    .orderBy(asc(machines.id))
    .all();
}

/** The company's machine with this uuid, or undefined (also for another company's uuid). */
export function findMachineByUuid(
  scope: CompanyScope,
  uuid: string,
): Promise<MachineRow | undefined> {
  return scope.db
    .select(machineColumns)
    .from(machines)
    .where(live(scope, machines, eq(machines.uuid, uuid)))
    .get();
}

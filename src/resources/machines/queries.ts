/**
 * Machine queries; every one is scoped to a company.
 */
import { and, asc, eq, isNull } from "drizzle-orm";
import type { Database } from "../../db/client";
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
export function listMachines(db: Database, companyId: number): Promise<MachineRow[]> {
  return db
    .select(machineColumns)
    .from(machines)
    .where(and(eq(machines.companyId, companyId), isNull(machines.deletedAt)))
    .orderBy(asc(machines.id))
    .all();
}

/** The company's machine with this uuid, or undefined (also for another company's uuid). */
export function findMachineByUuid(
  db: Database,
  companyId: number,
  uuid: string,
): Promise<MachineRow | undefined> {
  return db
    .select(machineColumns)
    .from(machines)
    .where(
      and(eq(machines.companyId, companyId), eq(machines.uuid, uuid), isNull(machines.deletedAt)),
    )
    .get();
}

/** The company's machine with this integer id, or undefined (also for another company's id). */
export function findMachineById(
  db: Database,
  companyId: number,
  id: number,
): Promise<MachineRow | undefined> {
  return db
    .select(machineColumns)
    .from(machines)
    .where(and(eq(machines.companyId, companyId), eq(machines.id, id), isNull(machines.deletedAt)))
    .get();
}

/**
 * The machine lookup, in one place and with one row type, for every layer: the public
 * routes (realtime, events, resources, reports through `http/filters.ts`) find a machine
 * of the caller's company through a {@link CompanyScope}; the operator API, which sees
 * every company, finds one by its global id.
 *
 * These queries only read: what a caller answers when a machine is missing (a 404 and its
 * wording) is the caller's, so each returns `undefined` rather than throwing.
 */

import { and, asc, eq, isNull } from "drizzle-orm";
import type { Database } from "./client";
import { type CompanyScope, notDeleted } from "./company-scope";
import { machines } from "./schema";

/**
 * A machine, by its company and internal id: what a per-machine object is for (its realtime
 * object, its signal store), checked by the Worker to exist and be the company's.
 */
export interface MachineKey {
  companyId: number;
  machineId: number;
}

/** A machine as the API shows it (`GET /v1/machines`). */
export interface MachineRow {
  /** Internal id, as paths and bodies give it. */
  id: number;
  /** The scanner-facing uuid (null until one is given). */
  uuid: string | null;
  name: string;
  externalName: string | null;
  /** Whether the machine's `count` signal counts production. */
  isCountEnabled: boolean;
}

/** The columns of a {@link MachineRow}. */
const machineColumns = {
  id: machines.id,
  uuid: machines.uuid,
  name: machines.name,
  externalName: machines.externalName,
  isCountEnabled: machines.isCountEnabled,
};

/** The company's machines (not deleted), by ascending id. */
export function listMachines(scope: CompanyScope): Promise<MachineRow[]> {
  return scope.db
    .select(machineColumns)
    .from(machines)
    .where(notDeleted(scope, machines))
    .orderBy(asc(machines.id))
    .all();
}

/**
 * The query of the company's machine (not deleted) with this id: zero or one row. A query
 * rather than a promise, so that a caller can run it in a D1 batch with its other reads.
 */
export function machineByIdQuery(scope: CompanyScope, machineId: number) {
  return scope.db
    .select(machineColumns)
    .from(machines)
    .where(notDeleted(scope, machines, eq(machines.id, machineId)));
}

/** The company's machine (not deleted) with this id, or undefined (also another company's). */
export async function findMachineById(
  scope: CompanyScope,
  machineId: number,
): Promise<MachineRow | undefined> {
  const [row] = await machineByIdQuery(scope, machineId);
  return row;
}

/** The company's machine (not deleted) with this uuid, or undefined (also another company's). */
export function findMachineByUuid(
  scope: CompanyScope,
  uuid: string,
): Promise<MachineRow | undefined> {
  return scope.db
    .select(machineColumns)
    .from(machines)
    .where(notDeleted(scope, machines, eq(machines.uuid, uuid)))
    .get();
}

/**
 * For the operator API, which addresses machines by their global id: the machine (not
 * deleted) with this id, whatever its company, and that company.
 *
 * @returns the machine with its `companyId`, or undefined.
 */
export function findMachineOfAnyCompany(
  db: Database,
  machineId: number,
): Promise<(MachineRow & { companyId: number }) | undefined> {
  return db
    .select({ ...machineColumns, companyId: machines.companyId })
    .from(machines)
    .where(and(eq(machines.id, machineId), isNull(machines.deletedAt)))
    .get();
}

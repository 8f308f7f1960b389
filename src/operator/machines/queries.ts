/**
 * D1 queries of the operator's machine route (./routes.ts).
 */

import type { CompanyScope } from "../../db/company-scope";
import { withKeys } from "../../db/directory-keys";
import { machines } from "../../db/schema";
import type { DirectoryEnv } from "../../db/shards";
import { ApiError } from "../../http/errors";

/** A machine to create; `uuid` omitted = generated, null = none (no signals access). */
export interface MachineInput {
  name: string;
  uuid?: string | null | undefined;
  externalName?: string | null | undefined;
  isCountEnabled?: boolean | undefined;
}

/** A created machine as the operator API shows it. */
interface CreatedMachine {
  id: number;
  uuid: string | null;
  name: string;
  externalName: string | null;
  isCountEnabled: boolean;
}

/**
 * Creates machines of the company in one batch (all or none); uuids are stored lower case.
 *
 * @returns the created machines in order.
 * @throws ApiError 409 when a uuid is given twice or already used.
 */
export async function createMachines(
  env: DirectoryEnv,
  scope: CompanyScope,
  items: readonly MachineInput[],
): Promise<CreatedMachine[]> {
  const { db, companyId } = scope;
  const rows = items.map((m) => ({
    companyId,
    name: m.name,
    uuid:
      m.uuid === undefined ? crypto.randomUUID() : m.uuid === null ? null : m.uuid.toLowerCase(),
    externalName: m.externalName ?? null,
    isCountEnabled: m.isCountEnabled ?? true,
  }));
  const uuids = rows.map((r) => r.uuid).filter((u): u is string => u !== null);
  if (new Set(uuids).size !== uuids.length) throw new ApiError(409, "The same uuid is given twice");
  const out = {
    id: machines.id,
    uuid: machines.uuid,
    name: machines.name,
    externalName: machines.externalName,
    isCountEnabled: machines.isCountEnabled,
  };
  const [first, ...rest] = rows.map((r) => db.insert(machines).values(r).returning(out));
  if (!first) return [];
  // A uuid is unique across shards: the directory holds it (src/db/directory-keys.ts).
  const created = await withKeys(env, "machine", companyId, uuids, async () => {
    try {
      return (await db.batch([first, ...rest])).flat();
    } catch (error) {
      if (String(error).includes("UNIQUE constraint failed: machines.uuid")) return "taken";
      throw error;
    }
  });
  if (created === "taken") {
    throw new ApiError(409, "A machine with one of these uuids already exists");
  }
  return created;
}

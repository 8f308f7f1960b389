/**
 * Operator route that creates the machines of a company. Their signals and samples are in
 * ./signals.ts.
 */

import { z } from "@hono/zod-openapi";
import { companyScope } from "../db/company-scope";
import { machines } from "../db/schema";
import { ApiError } from "../http/errors";
import { createRouter, jsonResponse } from "../http/openapi";
import { arrayBody, IntId } from "../http/schemas";
import { armMachines } from "../realtime/arm";
import { requireCompany } from "./lookups";
import { operatorRoute } from "./schemas";

const MachineCreate = z
  .object({
    name: z.string().trim().min(1).max(200),
    uuid: z.guid().nullable().optional().openapi({
      description: "Omitted = generated; null = a machine without uuid (no signals access).",
    }),
    externalName: z.string().max(200).nullable().optional(),
    isCountEnabled: z.boolean().optional(),
  })
  .strict();

const MachineOut = z
  .object({
    id: z.number().int(),
    uuid: z.string().nullable(),
    name: z.string(),
    externalName: z.string().nullable(),
    isCountEnabled: z.boolean(),
  })
  .openapi("OperatorMachine");

export const operatorMachinesRoutes = createRouter().openapi(
  operatorRoute({
    method: "post",
    path: "/companies/{company_id}/machines",
    tags: ["Machines"],
    summary: "Create machines",
    request: {
      params: z.object({ company_id: IntId("company_id") }),
      body: arrayBody(MachineCreate),
    },
    responses: {
      201: jsonResponse(z.array(MachineOut), "Created machines."),
      409: jsonResponse(z.object({ detail: z.string() }), "A uuid is already used."),
    },
  }),
  async (c) => {
    const { company_id } = c.req.valid("param");
    const items = c.req.valid("json");
    const db = c.var.db;
    await requireCompany(companyScope(db, company_id));
    const rows = items.map((m) => ({
      companyId: company_id,
      name: m.name,
      uuid:
        m.uuid === undefined ? crypto.randomUUID() : m.uuid === null ? null : m.uuid.toLowerCase(),
      externalName: m.externalName ?? null,
      isCountEnabled: m.isCountEnabled ?? true,
    }));
    const uuids = rows.map((r) => r.uuid).filter((u): u is string => u !== null);
    if (new Set(uuids).size !== uuids.length)
      throw new ApiError(409, "The same uuid is given twice");
    const out = {
      id: machines.id,
      uuid: machines.uuid,
      name: machines.name,
      externalName: machines.externalName,
      isCountEnabled: machines.isCountEnabled,
    };
    const [first, ...rest] = rows.map((r) => db.insert(machines).values(r).returning(out));
    if (!first) return c.json([], 201);
    try {
      const created = (await db.batch([first, ...rest])).flat();
      // Shifts for all machines apply to new machines too: their boundaries are published.
      await armMachines(
        c.env,
        company_id,
        created.map((m) => m.id),
      );
      return c.json(created, 201);
    } catch (error) {
      if (String(error).includes("UNIQUE constraint failed: machines.uuid")) {
        throw new ApiError(409, "A machine with one of these uuids already exists");
      }
      throw error;
    }
  },
);

/**
 * Operator route that creates the machines of a company (its queries in ./queries.ts). Their
 * signals and samples are in ../signals/routes.ts (docs/operator-api.md, "Machines, signals
 * and samples").
 */

import { z } from "@hono/zod-openapi";
import { createRouter, jsonResponse } from "../../http/openapi";
import { arrayBody } from "../../http/schemas";
import { armMachines } from "../../realtime/arm";
import { requireCompanyScope } from "../lookups";
import { companyRoute } from "../schemas";
import { createMachines } from "./queries";

const MachineCreate = z
  .object({
    name: z.string().trim().regex(/\S/, "Must not be blank").max(200),
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
  companyRoute({
    method: "post",
    path: "/companies/{company_id}/machines",
    tags: ["Machines"],
    summary: "Create machines",
    request: {
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
    const scope = await requireCompanyScope(c.env, company_id);
    const created = await createMachines(c.env, scope, items);
    if (created.length === 0) return c.json([], 201);
    // Shifts for all machines apply to new machines too: their boundaries are published.
    await armMachines(
      c.env,
      company_id,
      created.map((m) => m.id),
    );
    return c.json(created, 201);
  },
);

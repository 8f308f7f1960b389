/**
 * `GET /v1/machines`.
 */

import { z } from "@hono/zod-openapi";
import { publicRoute } from "../../app-chain/public-route";
import { scopeOf } from "../../app-env";
import { listMachines } from "../../db/machines";
import { createRouter, jsonResponse } from "../../http/openapi";
import { MachineSchema } from "./schemas";

const listMachinesRoute = publicRoute("machines.read", {
  method: "get",
  path: "/v1/machines",
  operationId: "listMachines",
  tags: ["Machines"],
  summary: "List machines",
  description:
    "Every machine of the caller's company, ordered by `id`. No parameters, no pagination. " +
    "Machines whose `uuid` is null are listed but cannot be queried for signals.",
  responses: { 200: jsonResponse(z.array(MachineSchema), "The company's machines.") },
});

export const machinesRoutes = createRouter().openapi(listMachinesRoute, async (c) =>
  c.json(await listMachines(scopeOf(c)), 200),
);

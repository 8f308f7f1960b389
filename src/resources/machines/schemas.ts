/**
 * The machine as the public API shows it: `GET /v1/machines` and the `list_machines` MCP tool.
 */
import { z } from "@hono/zod-openapi";

export const MachineSchema = z
  .object({
    id: z
      .number()
      .int()
      .openapi({ description: "Used by production logs, nominal speeds, realtime and reports." }),
    uuid: z.string().nullable().openapi({
      format: "uuid",
      description: "Stable public id for the signals endpoints; null = no signals.",
    }),
    name: z.string(),
    externalName: z.string().nullable(),
    isCountEnabled: z.boolean(),
  })
  .openapi("Machine");

/**
 * The public signal schemas: a machine's signal list (`GET /v1/machines/{machine_uuid}/signals`)
 * and a signal's aggregated data (`GET .../signals/{public_id}`, the `signal_data` MCP tool),
 * snake_case as the spec writes them. The window's rules are window.ts.
 */

import { z } from "@hono/zod-openapi";
import { EXAMPLE_MACHINE_UUID } from "../../http/examples";
import { dateTime } from "../../http/instants";
import { queryBoolean } from "../../http/query";
import { AGG_FUNCTIONS } from "./aggregate";
import { signalWindowQueryShape } from "./window";

// Ids are matched case-insensitively: stored uuids are lowercase.
export const Uuid = z
  .guid()
  .transform((s) => s.toLowerCase())
  .openapi({ type: "string", format: "uuid" });

export const SignalDataSchema = z
  .object({
    machine_uuid: z.string().openapi({ format: "uuid" }),
    public_id: z.string().openapi({ format: "uuid" }),
    name: z.string(),
    agg_unit: z.enum(["s", "m", "h", "d"]),
    agg_period: z.number().int(),
    agg_function: z.enum(AGG_FUNCTIONS),
    data: z
      .array(z.object({ timestamp: dateTime(), value: z.number() }))
      .optional()
      .openapi({ description: "Default form: one point per non-empty bucket, ascending." }),
    timestamps: z.array(dateTime()).optional().openapi({ description: "With `transpose=true`." }),
    values: z
      .array(z.number())
      .optional()
      .openapi({ description: "With `transpose=true`; `values[i]` belongs to `timestamps[i]`." }),
  })
  .openapi("SignalData");

export const MachineUuidParam = z.object({
  machine_uuid: Uuid.openapi({
    param: { name: "machine_uuid", in: "path" },
    example: EXAMPLE_MACHINE_UUID,
  }),
});

export const SignalSchema = z
  .object({
    public_id: z
      .string()
      .openapi({ format: "uuid", description: "Needed to read the signal's data." }),
    name: z.string().openapi({ example: "power" }),
    display_name: z.string().openapi({ example: "Power" }),
    description: z.string().nullable(),
  })
  .openapi("Signal");

export const SignalDataQuery = z.object({
  ...signalWindowQueryShape,
  transpose: queryBoolean(false, "true: parallel `timestamps` and `values` instead of `data`."),
});

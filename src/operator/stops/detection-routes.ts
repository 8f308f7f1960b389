/**
 * Operator routes for a machine's stop detection (docs/machine-state.md, "Settings"): read
 * and set the rules its signal store detects stops with.
 */
import { z } from "@hono/zod-openapi";
import { unprocessable } from "../../http/errors";
import { createRouter, jsonResponse } from "../../http/openapi";
import { IntId, objectBody } from "../../http/schemas";
import {
  DEFAULT_SETTINGS,
  MAX_SAMPLE_GAP_SECONDS,
  MAX_THRESHOLD_SECONDS,
  MIN_SAMPLE_GAP_SECONDS,
  MIN_THRESHOLD_SECONDS,
} from "../../machine-state/rules";
import { machineStateStore } from "../../machine-state/signal-store";
import { COUNT_SIGNAL_NAME } from "../../resources/signals/count-sums";
import { requireMachine } from "../lookups";
import { operatorRoute } from "../schemas";
import { findSignalByName } from "./detection-queries";

const AnalogRule = z
  .object({
    signal: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .openapi({
        description:
          "The `name` of one of the machine's signals (its lowest-id one that is not deleted), " +
          "for example `power` or `current`; not `count`, which the count rule reads.",
        example: "power",
      }),
    threshold: z.number().finite().openapi({
      description:
        "Below this value the machine is down. In the signal's own unit (kW for `power`, A for `current`).",
      example: 0.5,
    }),
    hysteresis: z
      .number()
      .finite()
      .min(0)
      .default(0)
      .openapi({
        description:
          "The machine is up again from `threshold + hysteresis` on; between the two it keeps " +
          "its state. In the signal's unit; default 0.",
        example: 0.2,
      }),
  })
  .strict()
  .openapi("AnalogStopRule");

const StopDetection = z
  .object({
    enabled: z.boolean().default(DEFAULT_SETTINGS.enabled).openapi({
      description: "Whether stops are detected from the machine's signals; default true.",
    }),
    stopThresholdSeconds: z
      .number()
      .int()
      .min(MIN_THRESHOLD_SECONDS)
      .max(MAX_THRESHOLD_SECONDS)
      .default(DEFAULT_SETTINGS.stopThresholdSeconds)
      .openapi({
        description:
          "Seconds: the shortest stop. A time without pieces (or below the analog threshold) " +
          "inside planned time that lasts at least this long is a detected stop; a shorter " +
          `one is speed loss. ${MIN_THRESHOLD_SECONDS} to ${MAX_THRESHOLD_SECONDS}; default ${DEFAULT_SETTINGS.stopThresholdSeconds}.`,
        example: 300,
      }),
    maxSampleGapSeconds: z
      .number()
      .int()
      .min(MIN_SAMPLE_GAP_SECONDS)
      .max(MAX_SAMPLE_GAP_SECONDS)
      .default(DEFAULT_SETTINGS.maxSampleGapSeconds)
      .openapi({
        description:
          "Seconds: the longest time between two samples that is still one stretch of data. A " +
          "longer silence is no data, never a stop. Set it above the gateway's sampling period " +
          `(a 1 Hz gateway can use 10). ${MIN_SAMPLE_GAP_SECONDS} to ${MAX_SAMPLE_GAP_SECONDS}; default ${DEFAULT_SETTINGS.maxSampleGapSeconds}.`,
        example: 300,
      }),
    analog: AnalogRule.nullable()
      .default(null)
      .openapi({
        description:
          "Optional: the machine is also down while this signal is below its threshold, even " +
          "when the count signal is silent for another reason; null for none (default).",
      }),
  })
  .strict()
  .openapi("StopDetection");

const MachineParam = z.object({ machine_id: IntId("machine_id") });

export const operatorStopDetectionRoutes = createRouter()
  .openapi(
    operatorRoute({
      method: "get",
      path: "/machines/{machine_id}/stop-detection",
      tags: ["Stops"],
      summary: "Read a machine's stop detection",
      description: "The rules the machine's stops are detected with (the defaults until set).",
      request: { params: MachineParam },
      responses: { 200: jsonResponse(StopDetection, "The settings in force.") },
    }),
    async (c) => {
      const { machine_id } = c.req.valid("param");
      const machine = await requireMachine(c.env, machine_id);
      const { analogSignalId: _, ...settings } = await machineStateStore(
        c.env,
        machine.companyId,
        machine.id,
      ).detectionSettings();
      return c.json(settings, 200);
    },
  )
  .openapi(
    operatorRoute({
      method: "put",
      path: "/machines/{machine_id}/stop-detection",
      tags: ["Stops"],
      summary: "Set a machine's stop detection",
      description:
        "Replaces the settings (a field left out takes its default). Detection is on for " +
        "every machine with a `count` signal from the start; this changes its rules. The last " +
        "7 days are evaluated again with the new settings at once (stops appear, move or go, " +
        "with their stream events); older stops keep the settings they were detected with. " +
        "An unknown analog signal, or `count`, is a 422.",
      request: { params: MachineParam, body: objectBody(StopDetection) },
      responses: { 200: jsonResponse(StopDetection, "The settings now in force.") },
    }),
    async (c) => {
      const { machine_id } = c.req.valid("param");
      const settings = c.req.valid("json");
      const machine = await requireMachine(c.env, machine_id);
      let analogSignalId: number | null = null;
      if (settings.analog) {
        if (settings.analog.signal === COUNT_SIGNAL_NAME) {
          throw unprocessable(["body", "analog", "signal"], "The count rule reads `count` already");
        }
        analogSignalId = await findSignalByName(machine.scope, machine.id, settings.analog.signal);
        if (analogSignalId === null) {
          throw unprocessable(
            ["body", "analog", "signal"],
            `Machine ${machine.id} has no signal named ${settings.analog.signal}`,
          );
        }
      }
      const { analogSignalId: _, ...stored } = await machineStateStore(
        c.env,
        machine.companyId,
        machine.id,
      ).configureDetection(
        { companyId: machine.companyId, machineId: machine.id },
        settings,
        analogSignalId,
      );
      return c.json(stored, 200);
    },
  );

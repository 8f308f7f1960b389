/**
 * OpenAPI schemas of the stream events: the envelope every event shares (the SSE `data` line,
 * or one WebSocket text message) and the payload of each event type.
 */
import { z } from "@hono/zod-openapi";
import { OeeFigureAndFlagFields } from "../reports/metrics-schemas";
import { StopOriginSchema } from "../reports/schemas";
import { EVENT_KINDS } from "./names";

const instant = () => z.string().openapi({ format: "date-time" });

const LiveShiftSchema = z
  .object({
    id: z.number().int().openapi({ description: "The shift instance id." }),
    name: z.string(),
    start: instant(),
    end: instant(),
    isConsidered: z.boolean(),
  })
  .openapi("LiveShift");

const SkuRef = z.object({
  id: z.string(),
  sku: z.string(),
  name: z.string().nullable(),
  unit: z.string().nullable().optional(),
});
const WorkOrderRef = z.object({ id: z.string(), name: z.string() });

const SegmentChangedSchema = z
  .object({
    revision: z.number().int().openapi({ description: "The machine's realtime revision." }),
    sku: SkuRef,
    simpleWorkOrder: WorkOrderRef.nullable(),
    quantity: z.number().nullable(),
    custom: z.record(z.string(), z.unknown()).nullable(),
    start: instant().nullable().openapi({ description: "null = when the write was applied." }),
    end: instant().nullable(),
  })
  .openapi("SegmentChangedEvent", { description: "`segment.changed`: a SKU write." });

const SegmentUpdatedSchema = z
  .object({
    revision: z.number().int(),
    simpleWorkOrder: WorkOrderRef.optional(),
    quantity: z.number().optional(),
    custom: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("SegmentUpdatedEvent", {
    description: "`segment.updated`: a write without a SKU; only the fields it changed.",
  });

const OperatorAssignedSchema = z
  .object({
    revision: z.number().int(),
    operator: z.object({
      id: z.number().int(),
      firstName: z.string().nullable(),
      lastName: z.string().nullable(),
    }),
    start: instant(),
  })
  .openapi("OperatorAssignedEvent", { description: "`operator.assigned`." });

const ProductionSchema = z
  .object({
    shiftId: z.number().int(),
    sensorCount: z.number().openapi({
      description: "The `count` signal's samples summed over the running shift instance so far.",
    }),
  })
  .openapi("ProductionEvent", {
    description: "`production`: the running shift's production so far; at most one a second.",
  });

const StopEventSchema = z
  .object({
    stop: z.object({
      id: z.number().int(),
      startTime: instant(),
      endTime: instant().nullable(),
      isProgrammed: z.boolean(),
      origin: StopOriginSchema,
    }),
  })
  .openapi("StopEvent", {
    description: "`stop.started`, `stop.ended`, `stop.updated`, `stop.deleted`.",
  });

const StopClassifiedSchema = z
  .object({ stopId: z.number().int(), classification: z.record(z.string(), z.unknown()) })
  .openapi("StopClassifiedEvent", {
    description: "`stop.classified`: the classification as `PUT .../classification` returns it.",
  });

const StopUnclassifiedSchema = z
  .object({ stopId: z.number().int() })
  .openapi("StopUnclassifiedEvent", {
    description:
      "`stop.unclassified`: the stop's classification was deleted (`reset` no longer shows it).",
  });

const ShiftEventSchema = z
  .object({ shift: LiveShiftSchema })
  .openapi("ShiftEvent", { description: "`shift.started`, `shift.ended`." });

const OeeEventSchema = z
  .object({
    shiftId: z.number().int(),
    final: z.boolean().openapi({
      description: "true on the last figures of an ended shift (equal to its report row).",
    }),
    ...OeeFigureAndFlagFields,
  })
  .openapi("OeeEvent", {
    description:
      "`oee`: the running shift's figures so far (over its elapsed planned time, as the metrics report's active row) when they change; at most one a second.",
  });

const ResetEventSchema = z
  .object({
    lastEventId: z.number().int(),
    machines: z.record(z.string(), z.record(z.string(), z.unknown())).openapi({
      description:
        "By machine id: the latest payload of each kind (`segment`, `segmentUpdate`, `operators`, " +
        "`production`, `oee`, `shift`, `stop`, `classification`).",
    }),
  })
  .openapi("ResetEvent", {
    description:
      "`reset`: the client is further behind than the stream keeps (or gave an id it never " +
      "had); the current state, then stream events after `lastEventId`.",
  });

export const StreamEventSchema = z
  .object({
    id: z.number().int().openapi({
      description: "Strictly increasing within the stream; also the SSE `id:` line.",
    }),
    type: z.enum(EVENT_KINDS).openapi({ description: "Also the SSE `event:` line." }),
    at: instant(),
    machineId: z.number().int().nullable(),
    machineEventId: z.number().int().optional().openapi({
      description: "On the company stream: the event's id in its machine's stream.",
    }),
    data: z.union([
      SegmentChangedSchema,
      SegmentUpdatedSchema,
      OperatorAssignedSchema,
      ProductionSchema,
      StopEventSchema,
      StopClassifiedSchema,
      StopUnclassifiedSchema,
      ShiftEventSchema,
      OeeEventSchema,
      ResetEventSchema,
    ]),
  })
  .openapi("StreamEvent", {
    description:
      "One event: the JSON of an SSE `data:` line, or one WebSocket text message. The payload " +
      "`data` depends on `type`.",
  });

export const TicketSchema = z
  .object({
    ticket: z.string().openapi({ description: "Pass as `?ticket=` to an events path, once." }),
    expiresAt: instant(),
    company: z
      .object({
        id: z.number().int(),
        name: z.string(),
        timezone: z.string().openapi({
          description: "IANA time zone of the company: its shifts and local days follow it.",
          example: "Europe/Rome",
        }),
      })
      .openapi({
        description:
          "The company the ticket's stream belongs to, with its time zone, so that a board " +
          "can write every time in the plant's clock before any event arrives.",
      }),
  })
  .openapi("RealtimeTicket");

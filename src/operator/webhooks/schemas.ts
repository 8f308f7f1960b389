/**
 * Request and response schemas of the operator's webhook routes (./routes.ts).
 */
import { z } from "@hono/zod-openapi";
import { DEFAULT_LIMIT, MAX_LIMIT } from "../../http/pagination";
import { MAX_ID, textInteger, UuidId } from "../../http/schemas";
import {
  MAX_THRESHOLD_MINUTES,
  MAX_THRESHOLDS,
  MIN_THRESHOLD_MINUTES,
  THRESHOLD_EVENT_TYPES,
  WEBHOOK_EVENT_TYPES,
} from "../../webhooks/event-types";
import { MAX_URL_LENGTH } from "../../webhooks/url-safety";

/** An ISO 8601 instant in the OpenAPI document. */
const dateTime = () => z.string().openapi({ format: "date-time" });

/** The event types whose registrations name no thresholds. */
const PLAIN_EVENT_TYPES = WEBHOOK_EVENT_TYPES.filter(
  (t): t is Exclude<(typeof WEBHOOK_EVENT_TYPES)[number], (typeof THRESHOLD_EVENT_TYPES)[number]> =>
    !(THRESHOLD_EVENT_TYPES as readonly string[]).includes(t),
);

const EVENT_TYPE_DESCRIPTION =
  'The one event type the registration receives (docs/webhooks.md, "Event types"): the ' +
  "classification events of a stop, or the alerts of a stop's state: `MachineStopStarted`, " +
  "`MachineStopEnded`, and the threshold types `MachineStopLongerThan` and " +
  "`MachineStopReasonMissing`, which name their thresholds.";

/** The fields of every registration. */
const registrationFields = {
  name: z
    .string()
    .trim()
    .regex(/\S/, "Must not be blank")
    .max(200)
    .openapi({ description: "A label." }),
  url: z.string().openapi({
    // The syntax a JSON Schema can state; the rest (credentials, fragment, resolution) are
    // the documented `value_error.url.<rule>` refusals.
    maxLength: MAX_URL_LENGTH,
    pattern: "^[Hh][Tt][Tt][Pp][Ss]://",
    description:
      `https:// only, at most ${MAX_URL_LENGTH} characters, no credentials, no #fragment; the ` +
      "host must resolve only to public addresses (a refusal is a 422 of `type` " +
      "`value_error.url.<rule>`). Local development also takes the origins of " +
      "`WEBHOOK_EXEMPT_ORIGINS` over `http://`, which the `pattern` leaves out.",
    example: "https://hooks.example.com/production-monitoring",
  }),
};

/**
 * The thresholds of a threshold event type, minutes: distinct integers, stored (and shown)
 * ascending.
 */
const ThresholdsMinutes = z
  .array(z.number().int().min(MIN_THRESHOLD_MINUTES).max(MAX_THRESHOLD_MINUTES))
  .min(1)
  .max(MAX_THRESHOLDS)
  .refine((list) => new Set(list).size === list.length, "Each threshold may appear once")
  .openapi({
    uniqueItems: true,
    description:
      `The thresholds, in minutes since the stop's start (${MIN_THRESHOLD_MINUTES} to ` +
      `${MAX_THRESHOLD_MINUTES}, 1 to ${MAX_THRESHOLDS} distinct values): one event per stop ` +
      "and threshold, when the stop has been down that long (`MachineStopLongerThan`) or " +
      "has had no reason that long (`MachineStopReasonMissing`).",
    example: [15, 60],
  });

export const WebhookCreate = z
  .discriminatedUnion("eventType", [
    z
      .object({
        ...registrationFields,
        eventType: z.enum(PLAIN_EVENT_TYPES).openapi({ description: EVENT_TYPE_DESCRIPTION }),
      })
      .strict(),
    z
      .object({
        ...registrationFields,
        eventType: z.enum(THRESHOLD_EVENT_TYPES).openapi({ description: EVENT_TYPE_DESCRIPTION }),
        thresholdsMinutes: ThresholdsMinutes,
      })
      .strict(),
  ])
  .openapi("WebhookCreate", {
    example: {
      name: "maintenance pager",
      url: "https://hooks.example.com/production-monitoring",
      eventType: "MachineStopLongerThan",
      thresholdsMinutes: [15, 60],
    },
  });

export const WebhookSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    name: z.string(),
    url: z.string(),
    eventType: z.enum(WEBHOOK_EVENT_TYPES),
    thresholdsMinutes: z.array(z.number().int()).nullable().openapi({
      description:
        "The thresholds of a threshold event type, minutes, ascending; null for the other types.",
    }),
    createdAt: dateTime(),
  })
  .openapi("Webhook");

const AttemptSchema = z
  .object({
    requestId: z.string().openapi({ description: "`X-Service-Request-Id` of the attempt." }),
    at: dateTime().openapi({ description: "When the attempt started." }),
    durationMs: z.number().int(),
    statusCode: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "null when no response came (time-out, network, refused)." }),
    error: z.string().nullable().openapi({
      description: "`timeout`, `network error: ...`, `unsafe destination`, a DNS error, ...",
    }),
  })
  .openapi("WebhookAttempt");

export const DELIVERY_STATUSES = ["pending", "delivered", "failed"] as const;

export const DeliverySchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    eventId: z.string().openapi({ format: "uuid" }),
    eventType: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    rounds: z.number().int().openapi({ description: "Rounds of attempts completed (0 to 8)." }),
    attemptsInRound: z.number().int().openapi({
      description: "Attempts made in the current round (0 to 3; 0 between rounds and once ended).",
    }),
    nextAttemptAt: dateTime()
      .nullable()
      .openapi({
        description:
          "When the next attempt is due, as the retry policy scheduled it (`Retry-After` and " +
          "jitter included); null before the first attempt and once the delivery ended.",
      }),
    attempts: z.array(AttemptSchema).openapi({ description: "Oldest first." }),
  })
  .openapi("WebhookDelivery");

export const DeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional(),
  page: textInteger(1, MAX_ID)
    .default(1)
    .openapi({ default: 1, description: "Page number, from 1." }),
  limit: textInteger(1, MAX_LIMIT)
    .default(DEFAULT_LIMIT)
    .openapi({ default: DEFAULT_LIMIT, description: `Rows per page, 1 to ${MAX_LIMIT}.` }),
});

export const webhookParam = z.object({ webhook_id: UuidId("webhook_id") });

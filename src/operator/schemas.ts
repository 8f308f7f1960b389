/**
 * Shared pieces of operator route definitions.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { OPERATOR_MAX_BODY_BYTES, tooLargeDetail } from "../http/json-body";
import { ErrorSchema, jsonResponse, ValidationErrorSchema } from "../http/openapi";
import { operatorAuth } from "./auth";

/** Most items in one operator create call. */
export const MAX_CREATE_ITEMS = 1000;

const OPERATOR_ERRORS = {
  401: jsonResponse(ErrorSchema, "Missing or wrong operator token.", {
    detail: "Not authenticated",
  }),
  404: jsonResponse(ErrorSchema, "Unknown id.", { detail: "Not Found" }),
  422: jsonResponse(ValidationErrorSchema, "Invalid path, query or body."),
  503: jsonResponse(ErrorSchema, "The operator API is not configured (no OPERATOR_TOKEN)."),
} as const;

/** Responses of operator routes that take a body (src/http/json-body.ts). */
const OPERATOR_BODY_ERRORS = {
  413: jsonResponse(
    ErrorSchema,
    `The body is larger than ${OPERATOR_MAX_BODY_BYTES.toLocaleString("en")} bytes (8 MiB): ` +
      `\`${tooLargeDetail(OPERATOR_MAX_BODY_BYTES)}\`.`,
  ),
  415: jsonResponse(ErrorSchema, "A body whose `Content-Type` is not JSON."),
} as const;

/**
 * Defines an operator route: operator token required, standard error responses
 * added (413 and 415 too on POST, PUT and PATCH).
 */
export function operatorRoute<R extends Omit<RouteConfig, "security" | "middleware">>(route: R) {
  const bodyErrors = ["post", "put", "patch"].includes(route.method) ? OPERATOR_BODY_ERRORS : {};
  return createRoute({
    ...route,
    security: [{ OperatorToken: [] }],
    middleware: [operatorAuth()] as const,
    responses: { ...OPERATOR_ERRORS, ...bodyErrors, ...route.responses },
  });
}

/** A JSON array body of 1..MAX_CREATE_ITEMS items. */
export function arrayBody<T extends z.ZodType>(item: T) {
  return {
    required: true,
    content: { "application/json": { schema: z.array(item).min(1).max(MAX_CREATE_ITEMS) } },
  };
}

/** A JSON object body. */
export function objectBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

export const IntId = (name: string) =>
  z.coerce
    .number()
    .int()
    .positive()
    .openapi({ type: "integer", param: { name, in: "path" } });

export const UuidId = (name: string) =>
  z.guid().openapi({ format: "uuid", param: { name, in: "path" } });

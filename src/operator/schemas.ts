/**
 * Shared pieces of operator route definitions: `operatorRoute` (the operator token and
 * the operator's error responses). The body and id pieces both APIs use are in
 * src/http/schemas.ts.
 */
import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import { OPERATOR_MAX_BODY_BYTES, tooLargeDetail } from "../http/json-body";
import { ErrorSchema, jsonResponse, ValidationErrorSchema } from "../http/openapi";
import { operatorAuth } from "./auth";

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

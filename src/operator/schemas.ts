/**
 * Shared pieces of operator route definitions: `operatorRoute` (the operator token and
 * the operator's error responses) and `companyRoute` (one under `/companies/{company_id}`).
 * The body and id pieces both APIs use are in src/http/schemas.ts.
 */
import { createRoute, type RouteConfig, z } from "@hono/zod-openapi";
import { OPERATOR_MAX_BODY_BYTES, tooLargeDetail } from "../http/json-body";
import { ErrorSchema, jsonResponse, ValidationErrorSchema } from "../http/openapi";
import { IntId } from "../http/schemas";
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

/** The path parameter of every route under `/companies/{company_id}`. */
const CompanyParam = z.object({ company_id: IntId("company_id") });

/** A route of a company's: its path under `/companies/{company_id}`, no params of its own. */
type CompanyRouteConfig = Omit<RouteConfig, "security" | "middleware" | "request"> & {
  path: `/companies/{company_id}${string}`;
  request?: Omit<NonNullable<RouteConfig["request"]>, "params">;
};

/**
 * Defines an operator route of one company's (`/companies/{company_id}/...`): `operatorRoute`
 * with the company's path parameter (`company_id`, a positive integer), before the route's
 * own request parts. The handler finds the company with `requireCompanyScope` (./lookups.ts).
 */
export function companyRoute<R extends CompanyRouteConfig>(route: R) {
  type Request = { params: typeof CompanyParam } & NonNullable<R["request"]>;
  const request = { params: CompanyParam, ...route.request } as Request;
  return operatorRoute({ ...route, request } as Omit<R, "request"> & { request: Request });
}

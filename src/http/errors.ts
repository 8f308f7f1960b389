/**
 * The one error type of the service and the bodies it becomes.
 *
 * Handlers throw `ApiError`; `onError` in `app.ts` turns it into the spec's body:
 * `{"detail": "..."}` for every status but 422, and
 * `{"detail": [{"loc", "msg", "type"}]}` (FastAPI's form) for 422.
 */
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** One entry of a 422 body; `loc` in FastAPI's form, for example `["body", 0, "nominalSpeed"]`. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** An error with a status and the body the client sees. */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;
  readonly detail: string | ValidationIssue[];
  readonly headers: Record<string, string>;

  constructor(
    status: ContentfulStatusCode,
    detail: string | ValidationIssue[],
    headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : "Validation error");
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

/** 401 with the `WWW-Authenticate` challenge for both credential forms. */
export function notAuthenticated(): ApiError {
  return new ApiError(401, "Not authenticated", {
    "WWW-Authenticate": 'Bearer realm="production-monitoring", ApiKey header="x-api-key"',
  });
}

/** 403 naming the missing scope, as the spec words it. */
export function missingScope(scope: string): ApiError {
  return new ApiError(403, `Not enough permissions. Missing scope: ${scope}`);
}

/** 404 for an id that does not exist or belongs to another company (never 403). */
export function notFound(what = "Not Found"): ApiError {
  return new ApiError(404, what);
}

/**
 * 422 for one rule that a schema cannot express (for example a window too long).
 *
 * @param loc FastAPI-style location, for example `["query", "end_time"]`.
 * @param msg the rule, in words a caller can act on.
 * @param type a machine-readable kind, for example `value_error`.
 */
export function unprocessable(
  loc: (string | number)[],
  msg: string,
  type = "value_error",
): ApiError {
  return new ApiError(422, [{ loc, msg, type }]);
}

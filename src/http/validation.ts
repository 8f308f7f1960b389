/**
 * The 422 hook: turns a Zod failure of any request part into FastAPI's body,
 * `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`.
 */
import type { Context } from "hono";
import type { ZodError } from "zod";
import { ApiError, type ValidationIssue } from "./errors";

const TARGET_TO_LOC: Record<string, string> = {
  json: "body",
  query: "query",
  param: "path",
  header: "header",
  cookie: "cookie",
  form: "body",
};

/**
 * Maps Zod issues to FastAPI-style validation issues.
 *
 * @param error the Zod error of one request part.
 * @param target the Hono validation target (`json`, `query`, `param`, ...).
 * @returns one entry per problem; an unknown key becomes its own entry naming the key.
 */
export function toValidationIssues(error: ZodError, target: string): ValidationIssue[] {
  const root = TARGET_TO_LOC[target] ?? target;
  const issues: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        issues.push({
          loc: [root, ...path, key],
          msg: "Extra inputs are not permitted",
          type: "extra_forbidden",
        });
      }
      continue;
    }
    const missing = issue.code === "invalid_type" && /received undefined$/.test(issue.message);
    issues.push({
      loc: [root, ...path],
      msg: missing ? "Field required" : issue.message,
      type: missing ? "missing" : issueType(issue.code),
    });
  }
  return issues;
}

function issueType(code: string): string {
  switch (code) {
    case "invalid_type":
      return "type_error";
    case "invalid_value":
      return "enum";
    case "too_small":
    case "too_big":
      return "value_error.range";
    case "invalid_format":
      return "value_error.format";
    default:
      return "value_error";
  }
}

/**
 * `defaultHook` of every OpenAPIHono app: throws a 422 `ApiError` on failure so
 * that one `onError` renders every error.
 */
export function validationHook(
  result:
    | { success: true; data: unknown; target: string }
    | { success: false; error: ZodError; target: string },
  _c: Context,
): void {
  if (!result.success) {
    throw new ApiError(422, toValidationIssues(result.error, result.target));
  }
}

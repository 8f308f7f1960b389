/**
 * The 422 hook: turns a Zod failure of any request part into FastAPI's body,
 * `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}`.
 */
import type { RouteConfig } from "@hono/zod-openapi";
import type { Context } from "hono";
import { routePath } from "hono/route";
import type { ZodError, ZodType } from "zod";
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
    // A refinement may name its type (`params: {type: "missing"}`), as a handler's 422 does.
    const named =
      issue.code === "custom" ? (issue.params as { type?: unknown } | undefined)?.type : undefined;
    issues.push({
      loc: [root, ...path],
      msg: missing ? "Field required" : issue.message,
      type: typeof named === "string" ? named : missing ? "missing" : issueType(issue.code),
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

/** The request parts of a route, in the order FastAPI lists their problems. */
const PART_ORDER = ["param", "query", "header", "json"] as const;
type Part = (typeof PART_ORDER)[number];

/** The request schemas of the registered routes, by `METHOD /hono/:path`. */
const routeRequests = new Map<string, Partial<Record<Part, ZodType>>>();

/**
 * Registers a route's request schemas so that a 422 on it lists the problems of
 * every part at once (`validationHook`). Called once per route at start-up.
 *
 * @param method the HTTP method; `path` the OpenAPI path (`/v1/skus/{sku_id}`).
 */
export function registerRequestSchemas(
  method: string,
  path: string,
  request: RouteConfig["request"],
): void {
  if (!request) return;
  const media = request.body?.content?.["application/json"];
  const json = media && "schema" in media ? media.schema : undefined;
  routeRequests.set(`${method.toUpperCase()} ${path.replaceAll(/\{(.+?)\}/g, ":$1")}`, {
    param: request.params as ZodType | undefined,
    query: request.query as ZodType | undefined,
    header: request.headers as ZodType | undefined,
    json: json instanceof Object && "safeParse" in json ? (json as ZodType) : undefined,
  });
}

/** A request part's raw value, read as Hono's validator reads it (undefined: no such part). */
async function rawPart(c: Context, part: Part): Promise<unknown> {
  switch (part) {
    case "param":
      return c.req.param();
    case "query":
      return Object.fromEntries(
        Object.entries(c.req.queries()).map(([k, v]) => (v.length === 1 ? [k, v[0]] : [k, v])),
      );
    case "header":
      return c.req.header();
    case "json": {
      const type = c.req.header("content-type")?.split(";")[0]?.trim() ?? "";
      if (!/^application\/([\w.-]+\+)?json$/i.test(type)) return {};
      try {
        return await c.req.json();
      } catch {
        return undefined; // malformed JSON has its own 422, before validation
      }
    }
  }
}

/**
 * Every problem of the request, part by part (path, query, header, body), given
 * the error of the part whose validation failed first: what FastAPI answers.
 */
async function everyIssue(
  c: Context,
  failed: ZodError,
  target: string,
): Promise<ValidationIssue[]> {
  const schemas = routeRequests.get(`${c.req.method} ${routePath(c)}`);
  if (!schemas) return toValidationIssues(failed, target);
  const issues: ValidationIssue[] = [];
  for (const part of PART_ORDER) {
    if (part === target) {
      issues.push(...toValidationIssues(failed, target));
      continue;
    }
    const schema = schemas[part];
    if (!schema) continue;
    const value = await rawPart(c, part);
    if (value === undefined) continue;
    const result = await schema.safeParseAsync(value);
    if (!result.success) issues.push(...toValidationIssues(result.error, part));
  }
  return issues;
}

/**
 * `defaultHook` of every OpenAPIHono app: throws a 422 `ApiError` on failure so
 * that one `onError` renders every error. On a registered route
 * (`registerRequestSchemas`, every public route) the 422 lists the problems of
 * every request part at once; parts validate one after the other, so this runs
 * only on the first failure, and a valid request pays nothing for it.
 */
export async function validationHook(
  result:
    | { success: true; data: unknown; target: string }
    | { success: false; error: ZodError; target: string },
  c: Context,
): Promise<void> {
  if (!result.success) {
    throw new ApiError(422, await everyIssue(c, result.error, result.target));
  }
}

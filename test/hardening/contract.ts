/**
 * The contract as the OpenAPI document states it, read from `/openapi.json`
 * through the harness, and the check that one answer keeps it: a documented
 * status, never a 500, and the documented body (`{detail: string}` or
 * `{detail: [{loc, msg, type}]}`) for every error.
 */
import { expect } from "vitest";
import { bodyText } from "../fixtures/body-text";
import { call } from "../fixtures/direct-client";

/** The HTTP methods of the public operations. */
export type Method = "GET" | "POST" | "PATCH" | "DELETE";

/** One public operation as the document describes it. */
export interface Operation {
  method: Method;
  /** The templated path, for example `/v1/skus/{sku_id}`. */
  path: string;
  /** `x-required-scope`. */
  scope: string;
  /** Documented statuses, as numbers. */
  statuses: number[];
  /** Per documented status, the name of the `$ref`'d body schema (`Error`, `ValidationError`, ...). */
  bodySchemas: Record<number, string | undefined>;
  /** Per documented status, the media types of its body (an export file: Parquet or CSV). */
  mediaTypes: Record<number, string[]>;
  /** True when the operation documents a JSON request body. */
  hasBody: boolean;
  /** True when that body is required. */
  bodyRequired: boolean;
  /** Names of the path parameters, in order. */
  pathParams: string[];
  /** Names of the query parameters. */
  queryParams: string[];
}

interface OpenApiOperation {
  "x-required-scope"?: string;
  /** The exports: the scope a body field picks (`dataset`). */
  "x-required-scope-by"?: { field: string; scopes: Record<string, string> };
  parameters?: { name: string; in: string }[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

let cached: Promise<Operation[]> | undefined;

/**
 * Every operation of the public OpenAPI document (`GET /openapi.json`), read once per file.
 *
 * @returns the operations, in document order.
 */
export function publicOperations(): Promise<Operation[]> {
  cached ??= (async () => {
    const res = await call("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as OpenApiDocument;
    const out: Operation[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses).map(Number);
        const bodySchemas: Record<number, string | undefined> = {};
        const mediaTypes: Record<number, string[]> = {};
        for (const [status, response] of Object.entries(op.responses)) {
          const ref = response.content?.["application/json"]?.schema?.$ref;
          bodySchemas[Number(status)] = ref?.split("/").pop();
          mediaTypes[Number(status)] = Object.keys(response.content ?? {});
        }
        out.push({
          method: method.toUpperCase() as Method,
          path,
          // The exports' scope is their dataset's; the worlds' exports and cases are metrics.
          scope: op["x-required-scope"] ?? op["x-required-scope-by"]?.scopes.metrics ?? "",
          statuses,
          bodySchemas,
          mediaTypes,
          hasBody: op.requestBody?.content?.["application/json"] !== undefined,
          bodyRequired: op.requestBody?.required === true,
          pathParams: (op.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name),
          queryParams: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        });
      }
    }
    return out;
  })();
  return cached;
}

/** The operation `METHOD path` of the document; fails the test when it is not documented. */
export async function operation(method: Method, path: string): Promise<Operation> {
  const op = (await publicOperations()).find((o) => o.method === method && o.path === path);
  if (!op) throw new Error(`${method} ${path} is not in /openapi.json`);
  return op;
}

/** What one request was, for failure messages. */
export interface Sent {
  method: string;
  url: string;
  contentType?: string;
  body?: string;
}

function describeSent(sent: Sent): string {
  const body = sent.body === undefined ? "" : ` body=${sent.body.slice(0, 300)}`;
  const type = sent.contentType === undefined ? "" : ` content-type=${sent.contentType}`;
  return `${sent.method} ${sent.url.slice(0, 300)}${type}${body}`;
}

/** The parsed answer of a request that kept the contract. */
export interface Answer {
  status: number;
  /** The parsed JSON body, or undefined for an empty one. */
  body: unknown;
}

/**
 * Asserts that an answer keeps the documented contract of `op`:
 * its status is documented (and is not a 500); a 204 has no body; every
 * error has the documented error body: `{detail: [{loc, msg, type}, ...]}`
 * where the document names `ValidationError`, `{detail: "..."}` (and nothing
 * else) where it names `Error`; a success is JSON, or a body of a media type documented for
 * its status without JSON (an export file).
 *
 * @param op the operation, from the document.
 * @param res the response.
 * @param sent the request, quoted in failure messages.
 * @returns the status and parsed body.
 */
export async function expectDocumentedAnswer(
  op: Operation,
  res: Response,
  sent: Sent,
): Promise<Answer> {
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    // A stream event stream never ends: its status is checked, then it is dropped.
    await res.body?.cancel();
    expect(op.statuses, `documented status of ${op.method} ${op.path}`).toContain(res.status);
    return { status: res.status, body: undefined };
  }
  const text = await bodyText(res);
  const where = `${describeSent(sent)}\n-> ${res.status} ${text.slice(0, 500)}`;
  expect(res.status, `never a 500: ${where}`).not.toBe(500);
  expect(op.statuses, `documented status of ${op.method} ${op.path}: ${where}`).toContain(
    res.status,
  );
  if (res.status === 204) {
    expect(text, where).toBe("");
    return { status: 204, body: undefined };
  }
  const documented = op.mediaTypes[res.status] ?? [];
  const contentType = (res.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  if (res.status < 300 && documented.length > 0 && !documented.includes("application/json")) {
    expect(documented, where).toContain(contentType);
    return { status: res.status, body: undefined };
  }
  expect(res.headers.get("content-type") ?? "", where).toMatch(/^application\/json/);
  const body: unknown = JSON.parse(text);
  if (res.status >= 400) expectErrorBody(op.bodySchemas[res.status], body, where);
  return { status: res.status, body };
}

/**
 * Asserts the shape of an error body.
 *
 * @param schema `ValidationError` or `Error`, as the document names it.
 */
export function expectErrorBody(schema: string | undefined, body: unknown, where = ""): void {
  expect(body, where).toBeTypeOf("object");
  expect(body, where).not.toBeNull();
  const record = body as Record<string, unknown>;
  expect(Object.keys(record), where).toEqual(["detail"]);
  if (schema === "ValidationError") {
    const detail = record.detail;
    expect(Array.isArray(detail), where).toBe(true);
    const issues = detail as unknown[];
    expect(issues.length, where).toBeGreaterThan(0);
    for (const issue of issues) {
      expect(issue, where).toEqual({
        loc: expect.any(Array),
        msg: expect.any(String),
        type: expect.any(String),
      });
      const loc = (issue as { loc: unknown[] }).loc;
      expect(loc.length, where).toBeGreaterThan(0);
      for (const part of loc) expect(["string", "number"], where).toContain(typeof part);
      expect(["body", "query", "path", "header"], where).toContain(loc[0]);
    }
  } else {
    expect(schema, `an error body must be documented: ${where}`).toBe("Error");
    expect(typeof record.detail, where).toBe("string");
    expect((record.detail as string).length, where).toBeGreaterThan(0);
  }
}

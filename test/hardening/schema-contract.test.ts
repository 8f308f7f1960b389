/**
 * Both OpenAPI documents exactly as strict as the API, for every operation of each, read
 * from the documents themselves (so a new route is covered the day it is documented):
 *
 * - what the schema allows is accepted: requests generated from the path, query, header and
 *   body schemas get no 422 from validation; a 422 is only one of the rules a JSON Schema
 *   cannot state, each documented in its operation's description (RULES below); business
 *   answers (404, 409) are fine;
 * - what the schema forbids is refused: a request breaking one constraint of one schema
 *   (a type, a bound, a length, a pattern, a format, an enum, a required or an unknown
 *   property, an item count, a branch) is a 422 naming that place in `loc`.
 *
 * The generator and the violations are test/fixtures/schema-arbitrary.ts.
 */
import { Validator } from "@cfworker/json-schema";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Issue, isRule } from "../fixtures/contract-rules";
import { call } from "../fixtures/direct-client";
import {
  arbitraryOf,
  type Document,
  type Operation,
  type Parameter,
  parameterOf,
  resolve,
  type Schema,
  type Violation,
  violationsOf,
} from "../fixtures/schema-arbitrary";
import { OPERATOR_TOKEN } from "../harness";
import { buildWorld, type World } from "./world";

/** Generated requests per operation (both documents: about 75 operations). */
const RUNS = 10;

interface Target {
  doc: Document;
  name: string;
  method: string;
  path: string;
  prefix: string;
  op: Operation;
  headers: Record<string, string>;
}

let world: World;
const targets: Target[] = [];

async function fetchDocument(path: string): Promise<Document> {
  const res = await call(path, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as Document;
}

beforeAll(async () => {
  world = await buildWorld("schema");
  const documents: [Document, string, Record<string, string>][] = [
    [await fetchDocument("/openapi.json"), "", { "x-api-key": world.co.key }],
    [
      await fetchDocument("/operator/v1/openapi.json"),
      "/operator/v1",
      { authorization: `Bearer ${OPERATOR_TOKEN}` },
    ],
  ];
  for (const [doc, prefix, headers] of documents) {
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        targets.push({
          doc,
          name: `${method.toUpperCase()} ${prefix}${path}`,
          method: method.toUpperCase(),
          path,
          prefix,
          op,
          headers,
        });
      }
    }
  }
}, 60_000);

/** A request as generated: a value per parameter, and the body. */
interface Generated {
  params: Record<string, unknown>;
  body?: unknown;
}

/**
 * Parameters that are credentials (a stream's `ticket`, "instead of a header"): judged before
 * validation, and a made-up one is a failed authentication, which the API also limits per
 * client address. The test sends its key instead.
 */
const CREDENTIALS = new Set(["ticket"]);

function parametersOf(target: Target): Parameter[] {
  return (target.op.parameters ?? [])
    .map((p) => parameterOf(target.doc, p))
    .filter((p) => !CREDENTIALS.has(p.name));
}

function bodySchemaOf(target: Target): Schema | undefined {
  return target.op.requestBody?.content?.["application/json"]?.schema;
}

/** Ids the test's own world stands on: a generated operator call must not move or revoke them. */
function protectedIds(): Set<number> {
  return new Set([world.co.id]);
}

/** A header value is text of visible ASCII (HTTP); a schema without a pattern gets such text. */
function parameterArbitrary(
  target: Target,
  p: Parameter,
  complete: boolean,
): fc.Arbitrary<unknown> {
  if (p.in === "header" && p.schema.type === "string" && !p.schema.pattern) {
    return fc.string({ unit: "grapheme-ascii", maxLength: 40 }).map((s) => s.trim());
  }
  const arbitrary = arbitraryOf(target.doc, p.schema, complete);
  if (target.prefix !== "" && p.in === "path" && p.schema.type === "integer") {
    const ids = protectedIds();
    return arbitrary.filter((v) => !ids.has(v as number));
  }
  return arbitrary;
}

/**
 * The arbitrary of an operation's requests. `complete`, the base of a violation: every
 * property of the body present, and the required parameters only (an optional one can be a
 * credential, such as a stream's `ticket`, judged before validation; each optional one is
 * added by the violation that breaks it).
 */
function requestArbitrary(target: Target, complete = false): fc.Arbitrary<Generated> {
  const params = parametersOf(target).filter((p) => !complete || p.required);
  const record = fc.record(
    Object.fromEntries(params.map((p) => [p.name, parameterArbitrary(target, p, complete)])),
    { requiredKeys: params.filter((p) => complete || p.required).map((p) => p.name) },
  );
  const schema = bodySchemaOf(target);
  const body = schema ? arbitraryOf(target.doc, schema, complete) : fc.constant(undefined);
  return fc.record({ params: record, body });
}

let sentCount = 0;

/**
 * The first `n` characters of a text for a failure message, cut between code points and with
 * escapes for anything outside printable ASCII (the pool's messages must stay valid UTF-8).
 */
const cut = (text: string, n: number) =>
  [...text]
    .slice(0, n)
    .map((ch) => (/^[\x20-\x7E]$/.test(ch) ? ch : `\\u{${ch.codePointAt(0)?.toString(16)}}`))
    .join("");

const onWire = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value));

/** Sends a generated request; the body read as text. */
async function send(
  target: Target,
  request: Generated,
  fresh = true,
): Promise<{ status: number; text: string; sent: string }> {
  const params = parametersOf(target);
  const path = target.path.replace(/\{(\w+)\}/g, (_, name: string) =>
    encodeURIComponent(onWire(request.params[name])),
  );
  const query = new URLSearchParams();
  const headers = new Headers(target.headers);
  for (const p of params) {
    const value = request.params[p.name];
    if (value === undefined) continue;
    if (p.in === "query") query.append(p.name, onWire(value));
    if (p.in === "header") headers.set(p.name, onWire(value));
  }
  // Each request its own Idempotency-Key (still one the pattern allows), unless the key is what
  // the request breaks: fast-check sends a value again with another body.
  const key = headers.get("idempotency-key");
  if (key !== null && fresh) headers.set("idempotency-key", `${++sentCount}.${key}`.slice(0, 255));
  const hasBody = request.body !== undefined;
  if (hasBody) headers.set("content-type", "application/json");
  const qs = query.toString();
  const url = `${target.prefix}${path}${qs ? `?${qs}` : ""}`;
  const res = await call(url, {
    method: target.method,
    headers,
    body: hasBody ? JSON.stringify(request.body) : undefined,
  });
  const sent = `${target.method} ${url} ${[...headers]
    .filter(([k]) => k !== "x-api-key" && k !== "authorization")
    .map(([k, v]) => `${k}: ${v}`)
    .join("; ")} ${hasBody ? cut(JSON.stringify(request.body), 600) : ""}`;
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    await res.body?.cancel();
    return { status: res.status, text: "", sent };
  }
  return { status: res.status, text: await res.text(), sent };
}

const issuesOf = (text: string): Issue[] => {
  const body = JSON.parse(text) as { detail: Issue[] | string };
  return Array.isArray(body.detail) ? body.detail : [];
};

describe.each(["public", "operator"] as const)("the %s document", (which) => {
  const mine = () => targets.filter((t) => (which === "public") === (t.prefix === ""));

  it("accepts what its schemas allow: no 422 from validation, on every operation", async () => {
    expect(mine().length).toBeGreaterThan(which === "public" ? 30 : 20);
    const problems: string[] = [];
    for (const target of mine()) {
      const details = await fc.check(
        fc.asyncProperty(requestArbitrary(target), async (request) => {
          const { status, text, sent } = await send(target, request);
          // A 5XX only where documented (a webhook host that cannot be checked: a 503). The
          // tests' resolver knows no name, so a generated webhook URL is a 422 of its rules.
          if (status >= 500 && !(String(status) in target.op.responses)) {
            throw new Error(`${status}: ${sent}\n-> ${cut(text, 300)}`);
          }
          if (status !== 422) return;
          const unexplained = issuesOf(text).filter((issue) => !isRule(issue));
          if (unexplained.length > 0) {
            throw new Error(`422 ${JSON.stringify(unexplained)}\n   for ${sent}`);
          }
        }),
        { numRuns: RUNS, seed: 42, endOnFailure: true },
      );
      if (details.failed) {
        const error = details.errorInstance;
        problems.push(`${target.name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    expect(problems, problems.join("\n\n")).toEqual([]);
  }, 600_000);

  it("refuses what its schemas forbid: a 422 at the loc of each broken constraint", async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const target of mine()) {
      const violations: Violation[] = [];
      for (const p of parametersOf(target)) {
        const loc = [p.in, p.name];
        if (p.required && p.in !== "path") {
          violations.push({
            what: `missing required ${p.name}`,
            loc,
            apply: () => undefined,
            remove: true,
          });
        }
        for (const v of violationsOf(target.doc, p.schema, loc, true)) {
          if (p.in === "path" && (v.apply(undefined) === "" || v.remove)) continue;
          violations.push(v);
        }
      }
      const schema = bodySchemaOf(target);
      if (schema) violations.push(...violationsOf(target.doc, schema, ["body"], false));
      const [base] = fc.sample(requestArbitrary(target, true), { numRuns: 1, seed: 7 });
      if (!base) throw new Error("no base request");
      for (const violation of violations) {
        const broken = breakRequest(base, violation);
        const { status, text, sent } = await send(
          target,
          broken,
          violation.loc[1] !== "Idempotency-Key",
        );
        checked++;
        const where = `${target.name}: ${violation.what} at ${JSON.stringify(violation.loc)}`;
        if (status !== 422) {
          problems.push(`${where}: answered ${status} ${cut(text, 200)}\n   for ${sent}`);
          continue;
        }
        const issues = issuesOf(text);
        // A value matching no branch may be refused inside it (a discriminated union names
        // its discriminator); every other violation at its own place.
        const at = (i: Issue) =>
          violation.what.startsWith("matches no branch")
            ? JSON.stringify(i.loc.slice(0, violation.loc.length)) === JSON.stringify(violation.loc)
            : JSON.stringify(i.loc) === JSON.stringify(violation.loc);
        if (!issues.some(at)) {
          problems.push(`${where}: 422 elsewhere ${cut(JSON.stringify(issues), 300)}`);
        }
      }
    }
    expect(checked).toBeGreaterThan(which === "public" ? 200 : 50);
    expect(problems, problems.join("\n\n")).toEqual([]);
  }, 600_000);
});

/** A copy of `request` with `violation` applied at its place. */
function breakRequest(request: Generated, violation: Violation): Generated {
  const [part, ...inside] = violation.loc;
  const copy: Generated = JSON.parse(JSON.stringify(request));
  if (part !== "body") {
    const name = inside[0] as string;
    if (violation.remove) delete copy.params[name];
    else copy.params[name] = violation.apply(copy.params[name]);
    return copy;
  }
  if (inside.length === 0) return { ...copy, body: violation.apply(copy.body) };
  let node = copy.body as Record<string | number, unknown>;
  for (const key of inside.slice(0, -1)) {
    node = node[key] as Record<string | number, unknown>;
    if (node === null || typeof node !== "object")
      throw new Error(`no place ${JSON.stringify(violation.loc)}`);
  }
  const last = inside[inside.length - 1] as string | number;
  if (violation.remove) delete node[last];
  else node[last] = violation.apply(node[last]);
  return copy;
}

/** `schema` with every `$ref` replaced by its target (the documents' schemas do not recurse). */
function deref(doc: Document, schema: unknown, depth = 0): unknown {
  if (depth > 20 || schema === null || typeof schema !== "object") return schema;
  if (Array.isArray(schema)) return schema.map((s) => deref(doc, s, depth + 1));
  const node = schema as Schema;
  if (typeof node.$ref === "string") return deref(doc, resolve(doc, node), depth + 1);
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, deref(doc, v, depth + 1)]));
}

/** Every `example` of a document with the schema it illustrates, and where it is. */
function examplesOf(doc: Document): { where: string; schema: Schema; example: unknown }[] {
  const out: { where: string; schema: Schema; example: unknown }[] = [];
  const walk = (node: unknown, where: string) => {
    if (node === null || typeof node !== "object") return;
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) walk(n, `${where}[${i}]`);
      return;
    }
    const record = node as Record<string, unknown>;
    // A parameter or a media type: the example illustrates its `schema`.
    if ("schema" in record && "example" in record && typeof record.schema === "object") {
      out.push({ where, schema: record.schema as Schema, example: record.example });
    } else if ("example" in record && ("type" in record || "$ref" in record || "anyOf" in record)) {
      out.push({ where, schema: record as Schema, example: record.example });
    }
    for (const [key, value] of Object.entries(record)) {
      if (key !== "example") walk(value, `${where}/${key}`);
    }
  };
  walk(doc.paths, "#/paths");
  walk(doc.components, "#/components");
  return out;
}

/**
 * The body a sampler builds from a schema (openapi-sampler's rules): a node's `example`, else
 * its `default`, `const` or first `enum` value, else a value of its first type (a `date-time`
 * and a `uuid` of their own, a string matching the `pattern`, the lowest number allowed);
 * objects with their required properties and the optional ones that have an example or a
 * default; arrays of one item.
 */
function sampleFromExamples(doc: Document, schema: Schema, depth = 0): unknown {
  const node = resolve(doc, schema);
  if (depth > 8) return undefined;
  if (node.example !== undefined) return node.example;
  if (node.default !== undefined) return node.default;
  if (node.const !== undefined) return node.const;
  if (Array.isArray(node.enum)) return node.enum[0];
  const alternatives = (node.anyOf ?? node.oneOf) as Schema[] | undefined;
  if (node.type === undefined && alternatives?.[0]) {
    return sampleFromExamples(doc, alternatives[0], depth + 1);
  }
  const types = (Array.isArray(node.type) ? node.type : [node.type]).filter((t) => t !== "null");
  const type = types[0] ?? (node.properties ? "object" : undefined);
  switch (type) {
    case "string":
      if (typeof node.pattern === "string") {
        return fc.sample(arbitraryOf(doc, node), { numRuns: 1, seed: 1 })[0];
      }
      if (node.format === "date-time") return "2019-08-24T14:15:22Z";
      if (node.format === "uuid") return "3fa85f64-5717-4562-b3fc-2c963f66afa6";
      return "string".padEnd((node.minLength as number | undefined) ?? 0, "g");
    case "integer":
    case "number": {
      if (typeof node.minimum === "number") return node.minimum;
      if (typeof node.exclusiveMinimum === "number") return node.exclusiveMinimum + 1;
      return 0;
    }
    case "boolean":
      return true;
    case "array":
      return node.items ? [sampleFromExamples(doc, node.items as Schema, depth + 1)] : [];
    case "object": {
      const out: Record<string, unknown> = {};
      const branch = ((node.anyOf ?? node.oneOf) as Schema[] | undefined)?.[0];
      // The node's own property schemas (a branch only says which are required).
      const properties = (node.properties ?? {}) as Record<string, Schema>;
      const required = new Set([
        ...((node.required as string[] | undefined) ?? []),
        ...((branch ? (resolve(doc, branch).required as string[] | undefined) : []) ?? []),
      ]);
      for (const [name, property] of Object.entries(properties)) {
        if (isObject(property.not)) continue;
        // An optional property only with a value of its own (example, default): made-up
        // values of optional fields are not what an example promises.
        const own = resolve(doc, property);
        if (!required.has(name) && own.example === undefined && own.default === undefined) {
          continue;
        }
        const value = sampleFromExamples(
          doc,
          { ...resolve(doc, (node.properties as Record<string, Schema>)?.[name] ?? property) },
          depth + 1,
        );
        if (value !== undefined) out[name] = value;
      }
      return out;
    }
    default:
      return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

describe.each(["public", "operator"] as const)("the examples of the %s document", (which) => {
  const mine = () => targets.filter((t) => (which === "public") === (t.prefix === ""));

  it("are each valid against the schema they illustrate", () => {
    const doc = mine()[0]?.doc;
    if (!doc) throw new Error("no document");
    const examples = examplesOf(doc);
    expect(examples.length).toBeGreaterThan(which === "public" ? 100 : 10);
    const invalid = examples.flatMap(({ where, schema, example }) => {
      const result = new Validator(deref(doc, schema) as object, "2020-12", false).validate(
        example,
      );
      return result.valid
        ? []
        : [`${where}: ${JSON.stringify(example)} ${JSON.stringify(result.errors.slice(-1))}`];
    });
    expect(invalid, invalid.join("\n")).toEqual([]);
  });

  it("make requests that are accepted, when a sampler builds them from the examples", async () => {
    const problems: string[] = [];
    for (const target of mine()) {
      const schema = bodySchemaOf(target);
      const media = target.op.requestBody?.content?.["application/json"];
      if (!schema || !media) continue;
      // The operation's own example, and the body built from its schema's property examples
      // (what a sampler or Swagger UI makes where the operation has none).
      const bodies = [media.example, sampleFromExamples(target.doc, schema)].filter(
        (b) => b !== undefined,
      );
      const params = Object.fromEntries(
        parametersOf(target)
          .filter((p) => p.required)
          .map((p) => [
            p.name,
            p.example ??
              p.schema.example ??
              fc.sample(arbitraryOf(target.doc, p.schema), { numRuns: 1, seed: 3 })[0],
          ]),
      );
      for (const body of bodies) {
        const { status, text, sent } = await send(target, { params, body });
        const validation = status === 422 ? issuesOf(text).filter((i) => !isRule(i, true)) : [];
        const undocumented5xx = status >= 500 && !(String(status) in target.op.responses);
        if (undocumented5xx || validation.length > 0) {
          problems.push(
            `${target.name}: ${status} ${cut(JSON.stringify(validation), 400)}\n   for ${sent}`,
          );
        }
      }
    }
    expect(problems, problems.join("\n\n")).toEqual([]);
  });
});

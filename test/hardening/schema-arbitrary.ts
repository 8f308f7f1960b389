/**
 * Requests built from an OpenAPI document alone: a fast-check arbitrary of the values a
 * JSON Schema allows (what a generated client or a property-based OpenAPI tester sends),
 * and the single-constraint violations of a schema (each with the `loc` its 422 must name).
 *
 * Written small, for the keywords the two documents use (`$ref`, `type` and its arrays,
 * `enum`, `const`, `anyOf`/`oneOf`/`allOf`, `properties`/`required`/`additionalProperties`,
 * `items`/`minItems`/`maxItems`, `minLength`/`maxLength`/`pattern`/`format`, the numeric
 * bounds): a maintained sampler gives one fixed sample per schema (openapi-sampler) or its
 * own random source (json-schema-faker), neither shrinks with fast-check nor says what
 * violates a schema. A keyword it does not know fails the suite, so that a document that
 * grows one cannot go untested.
 */
import fc from "fast-check";

/** A JSON Schema node, as the documents write them. */
export type Schema = Record<string, unknown>;

/** The parts of an OpenAPI document read here. */
export interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, Parameter> };
}

/** One parameter of an operation. */
export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema: Schema;
  example?: unknown;
}

/** One operation of a document. */
export interface Operation {
  operationId?: string;
  parameters?: (Parameter | { $ref: string })[];
  requestBody?: {
    required?: boolean;
    content?: Record<string, { schema?: Schema; example?: unknown }>;
  };
  responses: Record<string, unknown>;
}

/** Keywords that say nothing about which values are valid. */
const ANNOTATIONS = new Set(["description", "example", "examples", "default", "title", "format"]);
/** Keywords this module reads. */
const KNOWN = new Set([
  ...ANNOTATIONS,
  "$ref",
  "type",
  "enum",
  "const",
  "anyOf",
  "oneOf",
  "allOf",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "uniqueItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "not",
]);
/** Formats whose values this module knows how to make and to break. */
const FORMATS = new Set(["uuid", "date-time"]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A schema with its `$ref` followed (components/schemas of `doc`). */
export function resolve(doc: Document, schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.replace("#/components/schemas/", "");
  const target = doc.components?.schemas?.[name];
  if (!target) throw new Error(`unresolved ${ref}`);
  return resolve(doc, target);
}

/** A parameter with its `$ref` followed (components/parameters of `doc`). */
export function parameterOf(doc: Document, p: Parameter | { $ref: string }): Parameter {
  if ("$ref" in p) {
    const found = doc.components?.parameters?.[p.$ref.replace("#/components/parameters/", "")];
    if (!found) throw new Error(`unresolved ${p.$ref}`);
    return found;
  }
  return p;
}

/** The types a node allows (`type` as a string or an array; absent: any). */
function typesOf(schema: Schema): string[] | undefined {
  const type = schema.type;
  if (typeof type === "string") return [type];
  if (Array.isArray(type)) return type as string[];
  return undefined;
}

/**
 * The branches of a node with `anyOf`/`oneOf`, each merged with the node's own keywords
 * (`{properties, anyOf: [{required: [id]}, {required: [name]}]}` is two object schemas).
 */
function branchesOf(doc: Document, schema: Schema): Schema[] | undefined {
  const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (!alternatives) return undefined;
  const { anyOf: _a, oneOf: _o, ...own } = schema;
  return alternatives.map((branch) => merge(own, resolve(doc, branch)));
}

/**
 * Two schemas that must both hold, as one (the keywords the documents combine): the types
 * both allow, the properties of both (a property in both: both schemas, merged), the
 * required of both; other keywords of `b` over those of `a`.
 */
function merge(a: Schema, b: Schema): Schema {
  const out: Schema = { ...a, ...b };
  const ta = typesOf(a);
  const tb = typesOf(b);
  if (ta && tb)
    out.type = ta.filter((t) => tb.includes(t) || (t === "number" && tb.includes("integer")));
  // `not: {type: null}` (a branch requiring a value): the types of `a` but null.
  const not = b.not as Schema | undefined;
  if (not && ta && JSON.stringify(typesOf(not)) === '["null"]') {
    out.type = ta.filter((t) => t !== "null");
    delete out.not;
  }
  if (a.properties || b.properties) {
    const pa = (a.properties ?? {}) as Record<string, Schema>;
    const pb = (b.properties ?? {}) as Record<string, Schema>;
    const properties: Record<string, Schema> = { ...pa };
    for (const [name, schema] of Object.entries(pb)) {
      const left = pa[name];
      properties[name] = left && !isNever(schema) ? merge(left, schema) : schema;
    }
    out.properties = properties;
  }
  if (a.required || b.required) {
    out.required = [
      ...new Set([...((a.required as string[]) ?? []), ...((b.required as string[]) ?? [])]),
    ];
  }
  return out;
}

/** The node with its `allOf` merged in. */
function flatten(doc: Document, schema: Schema): Schema {
  const resolved = resolve(doc, schema);
  const all = resolved.allOf as Schema[] | undefined;
  if (!all) return resolved;
  const { allOf: _, ...own } = resolved;
  return all.map((s) => flatten(doc, s)).reduce(merge, own);
}

function checkKeywords(schema: Schema): void {
  for (const key of Object.keys(schema)) {
    if (!KNOWN.has(key))
      throw new Error(`keyword ${key} is not handled: ${JSON.stringify(schema)}`);
  }
  if (typeof schema.format === "string" && !FORMATS.has(schema.format) && !schema.pattern) {
    throw new Error(`format ${schema.format} is not handled`);
  }
}

/** A schema no value matches (`not: {}`): its property must be absent. */
const isNever = (schema: Schema) => isObject(schema.not) && Object.keys(schema.not).length === 0;

/** Longest string or array made for a schema without a tighter bound: keeps requests small. */
const SPAN = 6;

/** An arbitrary of the strings a string schema allows. */
function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = schema.maxLength as number | undefined;
  const fits = (s: string) =>
    [...s].length >= minLength && (maxLength === undefined || [...s].length <= maxLength);
  if (typeof schema.pattern === "string") {
    return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);
  }
  if (schema.format === "uuid") return fc.uuid();
  if (schema.format === "date-time") {
    // Every year RFC 3339 can write, as a tester reading `format` alone would send.
    return fc
      .date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z") })
      .map((d) => d.toISOString());
  }
  return fc.string({
    unit: "grapheme",
    minLength,
    maxLength: Math.min(maxLength ?? minLength + SPAN * 4, minLength + SPAN * 4),
  });
}

/** An arbitrary of the numbers a numeric schema allows. */
function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = schema.minimum as number | undefined;
  const max = schema.maximum as number | undefined;
  const xMin = schema.exclusiveMinimum as number | undefined;
  const xMax = schema.exclusiveMaximum as number | undefined;
  if (integer) {
    const lo = Math.max(
      min ?? Number.MIN_SAFE_INTEGER,
      xMin === undefined ? Number.MIN_SAFE_INTEGER : Math.floor(xMin) + 1,
    );
    const hi = Math.min(
      max ?? Number.MAX_SAFE_INTEGER,
      xMax === undefined ? Number.MAX_SAFE_INTEGER : Math.ceil(xMax) - 1,
    );
    return fc.integer({ min: lo, max: hi });
  }
  return fc.double({
    min: min ?? xMin ?? -1e300,
    max: max ?? xMax ?? 1e300,
    minExcluded: min === undefined && xMin !== undefined,
    maxExcluded: max === undefined && xMax !== undefined,
    noNaN: true,
    noDefaultInfinity: true,
  });
}

/**
 * An arbitrary of the JSON values `schema` allows.
 *
 * @param doc the document its `$ref`s point into.
 * @param complete every property present, no `null` where another type is allowed, arrays
 *   of at least one item: the base of a violation, so that every place it breaks exists.
 * @throws Error for a keyword or format this module does not handle.
 */
export function arbitraryOf(
  doc: Document,
  schema: Schema,
  complete = false,
): fc.Arbitrary<unknown> {
  const node = flatten(doc, schema);
  checkKeywords(node);
  const branches = branchesOf(doc, node);
  if (branches) {
    const arbitraries = branches.map((b) => arbitraryOf(doc, b, complete));
    return complete ? (arbitraries[0] as fc.Arbitrary<unknown>) : fc.oneof(...arbitraries);
  }
  if (node.const !== undefined) return fc.constant(node.const);
  if (Array.isArray(node.enum)) return fc.constantFrom(...node.enum);
  const all = typesOf(node) ?? ["string", "number", "boolean", "object", "array", "null"];
  const types = complete && all.length > 1 ? all.filter((t) => t !== "null") : all;
  return fc.oneof(...types.map((type) => arbitraryOfType(doc, node, type, complete)));
}

function arbitraryOfType(
  doc: Document,
  node: Schema,
  type: string,
  complete: boolean,
): fc.Arbitrary<unknown> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "string":
      return stringArbitrary(node);
    case "integer":
      return numberArbitrary(node, true);
    case "number":
      return numberArbitrary(node, false);
    case "array": {
      const minItems = Math.max((node.minItems as number | undefined) ?? 0, complete ? 1 : 0);
      const maxItems = (node.maxItems as number | undefined) ?? minItems + SPAN;
      const items = isObject(node.items) ? arbitraryOf(doc, node.items, complete) : fc.jsonValue();
      const lengths = { minLength: minItems, maxLength: Math.min(maxItems, minItems + 3) };
      return node.uniqueItems === true
        ? fc.uniqueArray(items, { ...lengths, selector: (v) => JSON.stringify(v) })
        : fc.array(items, lengths);
    }
    case "object": {
      // A property whose schema is `not: {}` (matches nothing) must be absent.
      const properties = Object.fromEntries(
        Object.entries((node.properties ?? {}) as Record<string, Schema>).filter(
          ([, p]) => !isNever(p),
        ),
      );
      const required = (node.required ?? []) as string[];
      const record = fc.record(
        Object.fromEntries(
          Object.entries(properties).map(([name, s]) => [name, arbitraryOf(doc, s, complete)]),
        ),
        { requiredKeys: complete ? Object.keys(properties) : required },
      );
      const extra = node.additionalProperties;
      if (isObject(extra)) {
        const values = fc.dictionary(
          fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !(k in properties)),
          arbitraryOf(doc, extra, complete),
          { minKeys: complete ? 1 : 0, maxKeys: 3 },
        );
        return fc.tuple(record, values).map(([r, v]) => ({ ...v, ...r }));
      }
      return record;
    }
    default:
      throw new Error(`type ${type} is not handled`);
  }
}

/** One way to break a request: a change at `path` inside one part, and the `loc` it must get. */
export interface Violation {
  /** What was broken, for failure messages. */
  what: string;
  /** The request part (`body`, `query`, `path`, `header`) and the path inside it. */
  loc: (string | number)[];
  /** The broken value, given the valid one at that place (undefined: the place is absent). */
  apply: (valid: unknown) => unknown;
  /** Remove the place instead of setting it (a required property or parameter). */
  remove?: boolean;
}

/**
 * A value of a JSON type that `types` does not allow (undefined when every type is allowed,
 * or, on the wire, when text is allowed: a path, query or header value is always text).
 */
function wrongType(types: string[] | undefined, onTheWire: boolean): unknown {
  if (!types) return undefined;
  if (onTheWire) return types.includes("string") ? undefined : "zz";
  const candidates: [string, unknown][] = [
    ["string", "zz"],
    ["number", 1.5],
    ["boolean", true],
    ["object", { zz: 1 }],
    ["array", ["zz"]],
    ["null", null],
  ];
  return candidates.find(([type]) => !types.includes(type))?.[1];
}

/**
 * A string that `pattern` refuses; none with spaces at its ends on the wire (HTTP strips
 * those from a header's value, so the server would never see them), and on the wire an ASCII
 * one before a non-ASCII one: a tab inside a value is legal in an HTTP field (RFC 9110), while
 * a header value with `é` makes workerd print a warning (it sends it as UTF-8, which a browser
 * would refuse), for a violation the tab shows as well.
 */
function offPattern(pattern: string, onTheWire: boolean): string | undefined {
  const re = new RegExp(pattern);
  const candidates = [
    "!",
    "zz!",
    "0",
    "a:b",
    "Z",
    "a b",
    ...(onTheWire ? ["a\tb", "é"] : ["é", "", " "]),
  ];
  return candidates.find((s) => !re.test(s));
}

/**
 * Every single-constraint violation of a value of `schema`, each located under `loc`.
 *
 * @param onTheWire true for a path, query or header value (sent as text).
 * @param depth nesting guard.
 */
export function violationsOf(
  doc: Document,
  schema: Schema,
  loc: (string | number)[],
  onTheWire: boolean,
  depth = 0,
): Violation[] {
  if (depth > 6) return [];
  const node = flatten(doc, schema);
  checkKeywords(node);
  const out: Violation[] = [];
  const set = (what: string, value: unknown, at = loc): Violation => ({
    what,
    loc: at,
    apply: () => value,
  });
  const text = (value: unknown) => (onTheWire && typeof value !== "string" ? String(value) : value);
  const branches = branchesOf(doc, node);
  if (branches) {
    // A value that none of the branches takes: an empty object where each branch requires a
    // key; else a value of a type no branch has.
    const requiring = branches.every(
      (b) => typesOf(b)?.includes("object") && (b.required as string[] | undefined)?.length,
    );
    if (requiring) out.push(set("matches no branch (anyOf)", {}));
    const union = branches.flatMap((b) => typesOf(b) ?? []);
    const wrong = wrongType(branches.every((b) => typesOf(b)) ? union : undefined, onTheWire);
    if (wrong !== undefined && !requiring)
      out.push(set(`wrong type (${JSON.stringify(wrong)})`, wrong));
    return out;
  }
  const wrong = wrongType(typesOf(node), onTheWire);
  if (wrong !== undefined) out.push(set(`wrong type (${JSON.stringify(wrong)})`, wrong));
  if (Array.isArray(node.enum) && node.enum.every((v) => typeof v === "string")) {
    out.push(set("not in enum", "zz-not-in-enum"));
  }
  const types = typesOf(node) ?? [];
  if (types.includes("string") && !node.enum) {
    const min = node.minLength as number | undefined;
    const max = node.maxLength as number | undefined;
    if (min !== undefined && min > 0) out.push(set(`shorter than ${min}`, "a".repeat(min - 1)));
    if (max !== undefined) out.push(set(`longer than ${max}`, "a".repeat(max + 1)));
    if (typeof node.pattern === "string") {
      const off = offPattern(node.pattern, onTheWire);
      if (off !== undefined) out.push(set(`off pattern (${JSON.stringify(off)})`, off));
    } else if (node.format === "uuid") out.push(set("not a uuid", "not-a-uuid"));
    else if (node.format === "date-time") out.push(set("not a date-time", "not-a-date-time"));
  }
  if (types.includes("integer") || types.includes("number")) {
    const integer = !types.includes("number");
    const step = (x: number) => (integer ? 1 : Math.max(Math.abs(x) * 1e-3, 1e-9));
    if (typeof node.minimum === "number") {
      out.push(set(`below minimum ${node.minimum}`, text(node.minimum - step(node.minimum))));
    }
    if (typeof node.exclusiveMinimum === "number") {
      out.push(set(`at exclusiveMinimum ${node.exclusiveMinimum}`, text(node.exclusiveMinimum)));
    }
    if (typeof node.maximum === "number") {
      out.push(set(`above maximum ${node.maximum}`, text(node.maximum + step(node.maximum))));
    }
    if (typeof node.exclusiveMaximum === "number") {
      out.push(set(`at exclusiveMaximum ${node.exclusiveMaximum}`, text(node.exclusiveMaximum)));
    }
    if (integer && !onTheWire) out.push(set("not an integer (1.5)", 1.5));
    if (integer && onTheWire) out.push(set("not an integer (1.5)", "1.5"));
  }
  if (types.includes("array")) {
    const min = node.minItems as number | undefined;
    const max = node.maxItems as number | undefined;
    if (min !== undefined && min > 0) {
      out.push({
        what: `fewer than ${min} items`,
        loc,
        apply: (v) => (v as unknown[]).slice(0, min - 1),
      });
    }
    if (max !== undefined) {
      out.push({
        what: `more than ${max} items`,
        loc,
        apply: (v) => Array.from({ length: max + 1 }, () => (v as unknown[])[0]),
      });
    }
    if (node.uniqueItems === true) {
      out.push({
        what: "a repeated item",
        loc,
        apply: (v) => [(v as unknown[])[0], (v as unknown[])[0]],
      });
    }
    if (isObject(node.items)) {
      out.push(...violationsOf(doc, node.items, [...loc, 0], false, depth + 1));
    }
  }
  if (types.includes("object")) {
    const properties = (node.properties ?? {}) as Record<string, Schema>;
    for (const name of (node.required ?? []) as string[]) {
      out.push({
        what: `missing required ${name}`,
        loc: [...loc, name],
        apply: () => undefined,
        remove: true,
      });
    }
    if (node.additionalProperties === false) {
      out.push(set("an unknown property", 1, [...loc, "zzUnknown"]));
    }
    for (const [name, s] of Object.entries(properties)) {
      if (isNever(s)) continue;
      out.push(...violationsOf(doc, s, [...loc, name], false, depth + 1));
    }
  }
  return out;
}

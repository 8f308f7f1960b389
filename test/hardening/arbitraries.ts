/**
 * fast-check arbitraries of hostile input: odd strings and numbers, arbitrary
 * and deeply nested JSON, malformed JSON texts, wrong content types, odd path
 * segments and query strings, and mutations of a valid body (a field replaced
 * by a wrong value, removed, or joined by a field a caller must not set).
 */
import fc from "fast-check";

/** Strings that have broken parsers and queries before. */
export const NASTY_STRINGS = [
  "",
  " ",
  "   \t\n",
  "NaN",
  "Infinity",
  "-Infinity",
  "1e309",
  "-0",
  "0x1F",
  "1_000",
  "null",
  "undefined",
  "true",
  "[]",
  "{}",
  "１２３",
  "\u0000",
  "a\u0000b",
  "\uFEFFbom",
  "\u202Eevil",
  "e\u0301",
  "💩",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
  "\uD800",
  "Ω≈ç√∫",
  "%",
  "_",
  "\\",
  "%_%\\",
  "'; DROP TABLE skus; --",
  '" OR 1=1 --',
  "../../etc/passwd",
  "<script>alert(1)</script>",
  "\u0024{jndi:ldap://x}",
  "2026-02-30T25:61:61Z",
  "2026-03-02T06:00:00Z",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999Z",
  "1969-12-31T23:59:59Z",
  "+275760-09-13T00:00:00Z",
  "00000000-0000-0000-0000-000000000000",
] as const;

/** Numbers at the edges: huge, tiny, negative, unsafe integers. */
export const NASTY_NUMBERS = [
  0,
  -0,
  -1,
  0.5,
  1.5,
  -1.5,
  1e308,
  -1e308,
  5e-324,
  1e21,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  2 ** 53 + 2,
  2 ** 63,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
] as const;

/** Keys a caller must never be able to set. */
export const FORBIDDEN_KEYS = [
  "id",
  "company",
  "companyId",
  "company_id",
  "createdAt",
  "updatedAt",
  "deletedAt",
  "isAutomated",
  "live",
  "machineId",
  "sensorCount",
  "constructor",
  "prototype",
] as const;

/** A long string of one (possibly multi-byte) character. */
export const longString = fc
  .tuple(fc.constantFrom("a", "é", "💩", "%", "_", " "), fc.integer({ min: 51, max: 20_000 }))
  .map(([c, n]) => c.repeat(n));

/** Odd strings: the list above, any Unicode, lone surrogates, long runs. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: longString },
);

/** Odd numbers: the edges above and any finite double or integer. */
export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_NUMBERS) },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 1, arbitrary: fc.integer() },
);

/** Any JSON value, a few levels deep. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 4 });

/** A value of a wrong (or right) kind for any field. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 1, arbitrary: anyJson },
  { weight: 1, arbitrary: fc.array(nastyNumber, { maxLength: 5 }) },
);

/** Deeply nested arrays or objects, as JSON text (10 to 20,000 levels). */
export const deepJsonText = fc
  .tuple(fc.integer({ min: 10, max: 20_000 }), fc.boolean())
  .map(([depth, objects]) =>
    objects
      ? `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`
      : "[".repeat(depth) + "]".repeat(depth),
  );

/** Texts that are not JSON, or JSON that JavaScript reads in odd ways. */
export const malformedJsonText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "{",
    "[",
    "}",
    '{"a":1,}',
    "[1,2,]",
    "{'a':1}",
    "{a:1}",
    "NaN",
    "[NaN]",
    '{"count": Infinity}',
    "// comment\n{}",
    "\uFEFF{}",
    '{"a":"\\x41"}',
    '{"a":"\\uD800"}',
    '"unterminated',
    "undefined",
    "nul",
    "<xml/>",
    "a=1&b=2",
    "\u0000",
    '{"__proto__": {"admin": true}}',
    '{"count": 1e999, "limit": -1e999, "page": 1e-999}',
    '[{"count": 123456789012345678901234567890}]',
    '{"limit": 10, "limit": 1000}',
  ),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  deepJsonText,
);

/** Content types that are not JSON, and JSON ones written oddly. */
export const CONTENT_TYPES = [
  "text/plain",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/octet-stream",
  "application/jsonx",
  "application/json-patch",
  "text/json",
  "APPLICATION/JSON",
  "application/json; charset=utf-8",
  "application/json; charset=utf-16",
  "application/merge-patch+json",
  "",
] as const;

/** A request body: what is sent and under which `Content-Type` (undefined = none). */
export interface BodySpec {
  text?: string;
  contentType?: string;
}

type Path = (string | number)[];

function paths(value: unknown, prefix: Path = []): Path[] {
  const out: Path[] = [prefix];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      out.push(...paths(item, [...prefix, i]));
    });
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, k]));
  }
  return out;
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** One change to a valid body. */
type Mutation =
  | { kind: "replace"; at: number; value: unknown }
  | { kind: "remove"; at: number }
  | { kind: "add"; at: number; key: string; value: unknown }
  | { kind: "repeat"; at: number; times: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant("replace"), at: fc.nat(), value: nastyValue }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("remove"), at: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("add"),
      at: fc.nat(),
      key: fc.oneof(fc.constantFrom(...FORBIDDEN_KEYS), fc.string({ maxLength: 10 })),
      value: nastyValue,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("repeat"),
      at: fc.nat(),
      times: fc.constantFrom(2, 101, 1001),
    }),
  },
);

function apply(body: unknown, m: Mutation): unknown {
  const all = paths(body);
  const path = all[m.at % all.length] ?? [];
  if (path.length === 0) {
    if (m.kind === "replace") return m.value;
    if (m.kind === "repeat" && Array.isArray(body)) {
      return Array.from({ length: m.times }, () => body[0]);
    }
    if (m.kind === "add" && body !== null && typeof body === "object" && !Array.isArray(body)) {
      return { ...body, [m.key]: m.value };
    }
    return body;
  }
  const root = clone(body);
  let parent: unknown = root;
  for (const part of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[part];
  const last = path[path.length - 1] as string | number;
  const container = parent as Record<string | number, unknown>;
  switch (m.kind) {
    case "replace":
      container[last] = m.value;
      break;
    case "remove":
      if (Array.isArray(container)) container.splice(Number(last), 1);
      else delete container[last];
      break;
    case "add": {
      const target = container[last];
      if (target !== null && typeof target === "object" && !Array.isArray(target)) {
        (target as Record<string, unknown>)[m.key] = m.value;
      } else if (!Array.isArray(container)) {
        container[m.key] = m.value;
      }
      break;
    }
    case "repeat": {
      const target = container[last];
      if (Array.isArray(target) && target.length > 0) {
        container[last] = Array.from({ length: m.times }, () => target[0]);
      }
      break;
    }
  }
  return root;
}

/** The valid body with zero to three mutations applied. */
export function mutatedBody(valid: unknown): fc.Arbitrary<unknown> {
  return fc
    .array(mutation, { maxLength: 3 })
    .map((ms) => ms.reduce<unknown>((body, m) => apply(body, m), clone(valid)));
}

/**
 * Request bodies for an operation whose valid body is `valid`: mostly mutated
 * valid bodies, also arbitrary JSON, malformed texts, odd content types and no body.
 */
export function bodySpec(valid: unknown): fc.Arbitrary<BodySpec> {
  const json = (value: unknown): BodySpec => ({
    text: JSON.stringify(value),
    contentType: "application/json",
  });
  return fc.oneof(
    { weight: 8, arbitrary: mutatedBody(valid).map(json) },
    { weight: 2, arbitrary: anyJson.map(json) },
    {
      weight: 2,
      arbitrary: malformedJsonText.map((text) => ({ text, contentType: "application/json" })),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...CONTENT_TYPES)
        .map((contentType) => ({ text: JSON.stringify(valid), contentType })),
    },
    { weight: 1, arbitrary: fc.constant<BodySpec>({}) },
    { weight: 1, arbitrary: fc.constant<BodySpec>({ text: "", contentType: "application/json" }) },
    { weight: 1, arbitrary: fc.constant<BodySpec>({ text: JSON.stringify(valid) }) },
  );
}

/** Already-encoded odd path segments (some with broken percent-encoding). */
export const RAW_SEGMENTS = [
  "0",
  "-1",
  "1.5",
  "1e3",
  "NaN",
  "Infinity",
  "9007199254740993",
  "99999999999999999999999999",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "%00",
  "%2F",
  "%2e%2e",
  "%E0%A4%A",
  "%",
  "%ZZ",
  "%C0%AE",
  "null",
  "0x10",
  "+1",
  "%20",
  "a".repeat(5000),
] as const;

/** An odd path segment: a raw one above, or any string percent-encoded. */
export const oddSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...RAW_SEGMENTS),
  nastyString
    .filter((s) => s.length > 0)
    // encodeURIComponent throws on a lone surrogate (slice may also cut a pair in two).
    .map((s) => encodeURIComponent(s.slice(0, 2000).replace(/[\uD800-\uDFFF]/gu, "\uFFFD"))),
  fc.uuid().map((u) => u.toUpperCase()),
);

/**
 * A query string: documented parameters with valid or odd values, repeated
 * keys, and keys nobody asked for.
 *
 * @param valid valid values of the documented parameters.
 */
export function queryString(valid: Record<string, string>): fc.Arbitrary<string> {
  const names = Object.keys(valid);
  const value = (name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant(valid[name] ?? "") },
      { weight: 2, arbitrary: nastyString },
      { weight: 1, arbitrary: nastyNumber.map(String) },
    );
  const someOdd =
    names.length === 0
      ? fc.constant<[string, string][]>([])
      : fc
          .subarray(names)
          .chain((chosen) =>
            fc.tuple(...chosen.map((n) => value(n).map((v): [string, string] => [n, v]))),
          );
  // Half the time every documented parameter, at most one of them odd: the request
  // gets past the required ones and reaches the handler.
  const allValid = fc
    .tuple(fc.nat(), nastyString, fc.boolean())
    .map(([at, odd, replace]): [string, string][] =>
      names.map((n, i) => [n, replace && i === at % names.length ? odd : (valid[n] ?? "")]),
    );
  const documented = fc.oneof(allValid, someOdd);
  const extra = fc.array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...names, "limit", "page", "__proto__", "a[b]"), fc.string()),
      nastyString.map((s) => s.slice(0, 500)),
    ),
    { maxLength: 3 },
  );
  return fc
    .tuple(documented, extra, fc.boolean())
    .map(([pairs, more, raw]) =>
      raw && pairs.length > 0
        ? `?${pairs.map(([k, v]) => `${k}=${v.replace(/[#\s]/g, "")}`).join("&")}`
        : `?${new URLSearchParams([...pairs, ...more]).toString()}`,
    );
}

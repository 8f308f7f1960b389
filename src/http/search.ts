/**
 * Shared building blocks of `/filters` bodies: fuzzy text search, LIKE patterns, id lists and
 * numeric comparisons, each a Zod schema and a function to Drizzle conditions. "Fuzzy" is
 * case- and accent-insensitive containment: each searchable column has a `*_search` twin
 * holding `normalizeForSearch(value)`, and the term, normalized alike, is found with `instr()`
 * (SQLite's `lower()` folds ASCII only and it has no `unaccent`). docs/resources.md.
 */
import { z } from "@hono/zod-openapi";
import { type Column, type SQL, sql } from "drizzle-orm";
import { inJsonList, notInJsonList } from "../db/json-list";

/**
 * Longest search term or LIKE pattern, in UTF-8 bytes: D1 rejects LIKE
 * patterns longer than 50 bytes (SQLITE_LIMIT_LIKE_PATTERN_LENGTH) with an
 * error, so longer terms are a 422 up front, the same for every search.
 */
export const MAX_SEARCH_BYTES = 50;

/** Most ids in one `include` or `exclude` list (they are bound as one JSON parameter). */
const MAX_ID_LIST = 1000;

/** Longest string id accepted in a filter (ids are 36-character uuids). */
const MAX_ID_LENGTH = 100;

const encoder = new TextEncoder();

/** UTF-8 length of a string, in bytes. */
function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/**
 * The form of a text stored in `*_search` columns and compared with search terms.
 *
 * Lowercases (every script, not only ASCII), decomposes (NFKD: accents become
 * combining marks, compatibility forms such as "ﬁ" or full-width letters become
 * their plain letters) and drops the combining marks. Letters that do not
 * decompose (ø, ß, æ, ł) are kept as they are.
 *
 * @param text any text, or null.
 * @returns the normalized text, or null for null.
 */
export function normalizeForSearch(text: string): string;
export function normalizeForSearch(text: string | null): string | null;
export function normalizeForSearch(text: string | null): string | null {
  if (text === null) return null;
  return text.toLowerCase().normalize("NFKD").replace(/\p{M}/gu, "");
}

/** A search term: trimmed, at most `MAX_SEARCH_BYTES` UTF-8 bytes (422 above). */
export const SearchTerm = z
  .string()
  .trim()
  .refine((s) => utf8Length(s) <= MAX_SEARCH_BYTES, {
    message: `Must be at most ${MAX_SEARCH_BYTES} bytes (UTF-8)`,
  });

/**
 * `{search}`: a fuzzy filter on one text field; `null`, `{}`, `{search: null}`
 * and a blank term all mean "no filter".
 */
export const FuzzySearchFilter = z
  .object({
    search: SearchTerm.nullish().openapi({
      description:
        "Case- and accent-insensitive containment (`jose` finds `José`); trimmed; " +
        `at most ${MAX_SEARCH_BYTES} UTF-8 bytes; blank = no filter.`,
      example: "jose",
    }),
  })
  .strict()
  .nullish();

/**
 * The condition of a fuzzy filter on a `*_search` column.
 *
 * @param searchColumn the column holding `normalizeForSearch(value)`; a row whose
 *   value is null never matches a non-blank term.
 * @param term the (trimmed) term, or null/undefined.
 * @returns the SQL condition, or undefined when there is nothing to filter.
 */
export function fuzzyContains(
  searchColumn: Column,
  term: string | null | undefined,
): SQL | undefined {
  if (term === undefined || term === null || term === "") return undefined;
  return sql`instr(${searchColumn}, ${normalizeForSearch(term)}) > 0`;
}

/**
 * A LIKE pattern in which `%` is the only wildcard: `_` and `\` are escaped so
 * that they match themselves (names such as `WO_2024_001` are common).
 *
 * @param pattern the caller's pattern.
 * @returns the escaped pattern, to be used with `ESCAPE '\'`.
 */
function escapeLikeExceptPercent(pattern: string): string {
  return pattern.replace(/[\\_]/g, (c) => `\\${c}`);
}

/**
 * A `{search}` body field holding a LIKE pattern (`%` = any run of characters,
 * everything else literal); at most `MAX_SEARCH_BYTES` bytes once `_` and `\`
 * are escaped, as D1 measures the pattern it receives.
 */
export const LikePattern = z
  .string()
  .refine((s) => utf8Length(escapeLikeExceptPercent(s)) <= MAX_SEARCH_BYTES, {
    message: `Must be at most ${MAX_SEARCH_BYTES} bytes (UTF-8), each "_" or "\\" counting twice`,
  });

/**
 * The condition `column LIKE pattern` with `%` as the only wildcard.
 *
 * SQLite's LIKE folds ASCII letters only, so the match is case-insensitive for
 * A-Z and exact for every other character.
 *
 * @returns the SQL condition, or undefined for a null/undefined/empty pattern.
 */
export function likePattern(column: Column, pattern: string | null | undefined): SQL | undefined {
  if (pattern === undefined || pattern === null || pattern === "") return undefined;
  return sql`${column} LIKE ${escapeLikeExceptPercent(pattern)} ESCAPE '\\'`;
}

/** The `include`/`exclude` fields of a filter on string ids (for example UUIDs), to spread into an object. */
export const stringIdListFields = {
  include: z
    .array(z.string().max(MAX_ID_LENGTH))
    .max(MAX_ID_LIST)
    .nullish()
    .openapi({ description: "Only these ids; null or `[]` = no restriction." }),
  exclude: z
    .array(z.string().max(MAX_ID_LENGTH))
    .max(MAX_ID_LIST)
    .nullish()
    .openapi({ description: "Never these ids." }),
};

/** The `include`/`exclude` fields of a filter on integer ids, to spread into an object. */
export const integerIdListFields = {
  include: z
    .array(z.number().int())
    .max(MAX_ID_LIST)
    .nullish()
    .openapi({ description: "Only these ids; null or `[]` = no restriction." }),
  exclude: z
    .array(z.number().int())
    .max(MAX_ID_LIST)
    .nullish()
    .openapi({ description: "Never these ids." }),
};

/**
 * The conditions of an include/exclude filter. Each list is bound as one JSON
 * parameter read with `json_each`, so a list of 1,000 ids stays within D1's
 * 100 bound parameters per statement.
 *
 * @param column the id column.
 * @param filter the parsed filter; an empty `include` means no restriction.
 * @returns zero, one or two conditions.
 */
export function idListConditions(
  column: Column,
  filter:
    | { include?: (string | number)[] | null; exclude?: (string | number)[] | null }
    | null
    | undefined,
): SQL[] {
  const out: SQL[] = [];
  if (filter?.include && filter.include.length > 0) {
    out.push(inJsonList(column, filter.include));
  }
  if (filter?.exclude && filter.exclude.length > 0) {
    out.push(notInJsonList(column, filter.exclude));
  }
  return out;
}

const finiteNumber = z.number().refine(Number.isFinite, { message: "Must be a finite number" });

/**
 * Numeric comparisons, the operators of the stops report's `stopId` filter;
 * every operator given applies (AND).
 */
export const NumericComparisonFilter = z
  .object({
    greaterThan: finiteNumber.nullish(),
    greaterThanOrEqual: finiteNumber.nullish(),
    lessThan: finiteNumber.nullish(),
    lessThanOrEqual: finiteNumber.nullish(),
    equal: finiteNumber.nullish(),
    notEqual: finiteNumber.nullish(),
  })
  .strict()
  .nullish();

type NumericComparison = z.infer<typeof NumericComparisonFilter>;

const COMPARISON_SQL = {
  greaterThan: ">",
  greaterThanOrEqual: ">=",
  lessThan: "<",
  lessThanOrEqual: "<=",
  equal: "=",
  notEqual: "<>",
} as const;

/**
 * The conditions of a numeric comparison filter.
 *
 * @param column a numeric column.
 * @param filter the parsed filter; operators that are null or absent are skipped.
 * @returns one condition per operator given.
 */
export function numericConditions(column: Column, filter: NumericComparison): SQL[] {
  if (!filter) return [];
  const out: SQL[] = [];
  for (const [name, op] of Object.entries(COMPARISON_SQL) as [
    keyof typeof COMPARISON_SQL,
    string,
  ][]) {
    const value = filter[name];
    if (value === undefined || value === null) continue;
    out.push(sql`${column} ${sql.raw(op)} ${value}`);
  }
  return out;
}

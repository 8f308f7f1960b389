/**
 * Filter building blocks of the reports and the production-log search: the date operators
 * (`after`, `before`, `between`, `equal`), the stops report's `stopId` operators, and the
 * schema of the `machines {search, include, exclude}` filter (applied by
 * src/reports/machine-filter.ts: a shared-kernel file reads no table). Each a Zod schema and a
 * function to Drizzle conditions. docs/api-guide.md ("Time windows").
 */

import { z } from "@hono/zod-openapi";
import { type Column, type SQL, sql } from "drizzle-orm";
import { inJsonList } from "../db/json-list";
import { epochMsOf, INSTANT_PATTERN, NO_OFFSET_IS_UTC } from "./instants";
import { idListConditions, integerIdListFields, numericConditions, SearchTerm } from "./search";

/**
 * An ISO 8601 date-time, parsed to ms since the epoch: with a `Z` or an offset, or without
 * one, which is read as UTC (`2022-09-05T00:00:00` is `2022-09-05T00:00:00Z`), the one rule
 * of every date-time a request carries, in a body as in a query (docs/decisions.md).
 * Instants before 1970 are refused (every stored instant is after it).
 */
export const DateTimeMs = z.iso
  .datetime({ offset: true, local: true })
  .transform(epochMsOf)
  .openapi({
    type: "string",
    format: "date-time",
    pattern: INSTANT_PATTERN,
    example: "2026-03-02T06:00:00Z",
    description: `ISO 8601, on or after 1970-01-01T00:00:00Z (the \`pattern\`). ${NO_OFFSET_IS_UTC}`,
  });

/**
 * The date operators. Every operator given applies (AND):
 * `after` = strictly later, `before` = strictly earlier, `between` = the half-open
 * window `[start, end)` (`start < end`; docs/api-guide.md, "Time windows"), `equal` =
 * the same instant (ms). Half-open so that consecutive windows (days, shifts) tile time:
 * an instant at the boundary belongs to the later window only.
 */
export const DateComparisonFilter = z
  .object({
    after: DateTimeMs.nullish().openapi({ description: "Strictly after this instant." }),
    before: DateTimeMs.nullish().openapi({ description: "Strictly before this instant." }),
    between: z
      .object({ start: DateTimeMs, end: DateTimeMs })
      .strict()
      .refine((b) => b.start < b.end, {
        message: "end must be after start (the window is [start, end))",
        path: ["end"],
      })
      .nullish()
      .openapi({
        description:
          "The half-open window `[start, end)`: `start` included, `end` excluded, so that " +
          "`{start: <a midnight>, end: <the next midnight>}` is exactly one day.",
      }),
    equal: DateTimeMs.nullish().openapi({
      description: "Exactly this instant (to the millisecond).",
    }),
  })
  .strict()
  .nullish();

export type DateComparison = z.infer<typeof DateComparisonFilter>;

/**
 * The conditions of a date filter on an instant column (ms since the epoch).
 * A null column value (for example the end of an open stop) matches no operator.
 *
 * @param column an integer ms column.
 * @param filter the parsed filter; absent operators are skipped.
 * @returns one condition per operator given (two for `between`).
 */
export function dateConditions(column: Column, filter: DateComparison): SQL[] {
  if (!filter) return [];
  const out: SQL[] = [];
  if (filter.after !== undefined && filter.after !== null)
    out.push(sql`${column} > ${filter.after}`);
  if (filter.before !== undefined && filter.before !== null)
    out.push(sql`${column} < ${filter.before}`);
  if (filter.between) {
    out.push(sql`${column} >= ${filter.between.start}`);
    out.push(sql`${column} < ${filter.between.end}`);
  }
  if (filter.equal !== undefined && filter.equal !== null)
    out.push(sql`${column} = ${filter.equal}`);
  return out;
}

/** A half-open range `[from, to)` of instants in ms; either side may be open. */
interface InstantRange {
  /** Inclusive lower bound, or undefined = unbounded. */
  from?: number;
  /** Exclusive upper bound, or undefined = unbounded. */
  to?: number;
}

/**
 * The tightest half-open range `[from, to)` that contains every instant a date
 * filter accepts (used to bound work, for example which shift instances to
 * materialize; the exact conditions still come from `dateConditions`).
 *
 * @returns the range; `from > to` or `from === to` means nothing matches.
 */
export function dateRange(filter: DateComparison): InstantRange {
  const range: InstantRange = {};
  const raiseFrom = (v: number) => {
    range.from = range.from === undefined ? v : Math.max(range.from, v);
  };
  const lowerTo = (v: number) => {
    range.to = range.to === undefined ? v : Math.min(range.to, v);
  };
  if (!filter) return range;
  if (filter.after !== undefined && filter.after !== null) raiseFrom(filter.after + 1);
  if (filter.before !== undefined && filter.before !== null) lowerTo(filter.before);
  if (filter.between) {
    raiseFrom(filter.between.start);
    lowerTo(filter.between.end);
  }
  if (filter.equal !== undefined && filter.equal !== null) {
    raiseFrom(filter.equal);
    lowerTo(filter.equal + 1);
  }
  return range;
}

const finiteNumber = z.number().refine(Number.isFinite, { message: "Must be a finite number" });

/**
 * Integer ids by list and by comparison (the stops report's `stopId`):
 * `include`, `exclude`, `greaterThan`, `greaterThanOrEqual`, `lessThan`,
 * `lessThanOrEqual`, `equal`, `notEqual`; every operator given applies (AND).
 */
export const IdComparisonFilter = z
  .object({
    ...integerIdListFields,
    greaterThan: finiteNumber.nullish(),
    greaterThanOrEqual: finiteNumber.nullish(),
    lessThan: finiteNumber.nullish(),
    lessThanOrEqual: finiteNumber.nullish(),
    equal: finiteNumber.nullish(),
    notEqual: finiteNumber.nullish(),
  })
  .strict()
  .nullish();

type IdComparison = z.infer<typeof IdComparisonFilter>;

/**
 * The conditions of an `IdComparisonFilter` on an integer id column.
 *
 * @returns zero or more conditions (lists bound as one JSON parameter each).
 */
export function idComparisonConditions(column: Column, filter: IdComparison): SQL[] {
  if (!filter) return [];
  const { include, exclude, ...comparisons } = filter;
  return [
    ...idListConditions(column, { include, exclude }),
    ...numericConditions(column, comparisons),
  ];
}

/**
 * `machines {search, include, exclude}`: `search` is fuzzy on the machine name
 * (case- and accent-insensitive containment), `include`/`exclude` take integer
 * machine ids; all combine with AND.
 */
export const MachinesFilter = z
  .object({
    search: SearchTerm.nullish().openapi({
      description:
        "Fuzzy search on the machine name: case- and accent-insensitive containment; blank = no filter.",
      example: "press",
    }),
    ...integerIdListFields,
  })
  .strict()
  .nullish();

export type MachinesFilterValue = z.infer<typeof MachinesFilter>;

/**
 * Longest id list written into the SQL text as integer literals: about 8 KB of
 * text, well within D1's 100 KB statement limit.
 */
export const LITERAL_LIST_MAX = 1_000;

/**
 * `column IN (ids)`. Up to `LITERAL_LIST_MAX` safe integers are written into the
 * statement as literals; a longer list is bound as one JSON parameter read with
 * `json_each` (either way within D1's 100 bound parameters). Literals because D1
 * counts every `json_each` row it steps through as a row read, once per
 * statement: a report over 50 machines paid 50 rows read per statement for its
 * machine list alone (docs/scaling.md, "Rows read").
 *
 * @param column an integer column.
 * @param ids the values to match; an empty list matches nothing.
 */
export function inIntegerList(column: Column, ids: readonly number[]): SQL {
  const literals = integerLiterals(ids);
  if (literals !== null) return sql`${column} IN (${sql.raw(literals)})`;
  return inJsonList(column, ids);
}

/**
 * The text of `inIntegerList`'s literal list, for a statement written as text (`1, 2, 3`),
 * or null when the list must travel as a JSON parameter (longer than `LITERAL_LIST_MAX`,
 * or not all safe integers). Safe integers only: their decimal text cannot carry anything
 * but a number.
 */
export function integerLiterals(ids: readonly number[]): string | null {
  return ids.length <= LITERAL_LIST_MAX && ids.every(Number.isSafeInteger) ? ids.join(", ") : null;
}

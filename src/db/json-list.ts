/**
 * "The column is one of these values", the values bound as one JSON parameter:
 * `column IN (SELECT value FROM json_each(?))`. One parameter whatever the number of values
 * (D1 allows 100 bound parameters per statement), so any list fits one statement. The one
 * place the idiom is written, for drizzle conditions and for the text of D1 prepared
 * statements alike (test/architecture.test.ts fails on another).
 *
 * Cost: D1 counts every row of a `json_each` table as a row read, once per statement; a short
 * list of integers can go as literals instead (`inIntegerList`, src/http/filters.ts).
 */
import { type SQL, type SQLWrapper, sql } from "drizzle-orm";

/** The values as the JSON text bound to the statement (a text given is used as it is). */
const asJson = (values: readonly unknown[] | string): string =>
  typeof values === "string" ? values : JSON.stringify(values);

/**
 * `column IN (values)` for a drizzle query.
 *
 * @param column a column or SQL expression.
 * @param values the values, or their JSON array text; an empty list matches nothing.
 */
export function inJsonList(column: SQLWrapper, values: readonly unknown[] | string): SQL {
  return sql`${column} IN (SELECT value FROM json_each(${asJson(values)}))`;
}

/** `column NOT IN (values)` for a drizzle query (an empty list excludes nothing). */
export function notInJsonList(column: SQLWrapper, values: readonly unknown[] | string): SQL {
  return sql`${column} NOT IN (SELECT value FROM json_each(${asJson(values)}))`;
}

/**
 * `column IN (values)` as the text of a D1 prepared statement, the values' JSON text bound by
 * the caller at `param`.
 *
 * @param column the column as the statement names it (`machine_id`, `l.id`).
 * @param param the parameter carrying the JSON array (`?2`).
 */
export function inJsonListText(column: string, param: `?${number}`): string {
  return `${column} IN (SELECT value FROM json_each(${param}))`;
}

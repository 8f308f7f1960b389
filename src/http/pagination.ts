/**
 * Pagination of search endpoints and reports: the `page`/`limit` body fields,
 * the paged response envelope, and `paginate`, which runs the count and the
 * page query side by side.
 *
 * Not in one `db.batch`: drizzle-orm 0.45 maps D1 batch results through
 * column *names*, so a joined page query selecting two columns of the same
 * name (`id`, `name`, `created_at` of two tables) comes back shifted.
 */
import { z } from "@hono/zod-openapi";

const DEFAULT_PAGE = 1;
export const DEFAULT_LIMIT = 10;
/** Largest `limit` a caller may ask for (422 above). */
export const MAX_LIMIT = 100;

/** `page` and `limit` fields of a filter body; null or absent = the default. */
export const PageFields = {
  page: z
    .number()
    .int()
    .min(1)
    .nullish()
    .openapi({ description: "Page number, from 1.", default: DEFAULT_PAGE, example: 1 }),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_LIMIT)
    .nullish()
    .openapi({
      description: `Rows per page, 1 to ${MAX_LIMIT}.`,
      default: DEFAULT_LIMIT,
      example: DEFAULT_LIMIT,
    }),
};

/** A resolved page request. */
export interface PageRequest {
  /** 1-based page number. */
  page: number;
  /** Rows per page. */
  limit: number;
}

/** Resolves `page`/`limit` from a parsed body, applying the defaults for null or absent values. */
export function pageRequest(body: { page?: number | null; limit?: number | null }): PageRequest {
  return { page: body.page ?? DEFAULT_PAGE, limit: body.limit ?? DEFAULT_LIMIT };
}

/** One page of rows and the totals of the whole result. */
export interface Page<Row> {
  totalCount: number;
  /** `ceil(totalCount / limit)`; 0 when nothing matches. */
  totalPages: number;
  currentPage: number;
  rows: Row[];
}

/** The totals of a page, as every paged answer starts. */
type PageTotals = Omit<Page<unknown>, "rows">;

/**
 * The empty page of a request that can match nothing (no machine passes the filter, an
 * empty window): no rows, zero totals, the requested page number.
 */
export function emptyPage<Row>(request: PageRequest): Page<Row> {
  return { totalCount: 0, totalPages: 0, currentPage: request.page, rows: [] };
}

/**
 * The body of a paged answer (REST and MCP alike): `{totalCount, totalPages, currentPage,
 * <key>: rows}`, the shape {@link pagedResponseSchema} documents.
 *
 * @param key the endpoint's name for its list, for example `skus`.
 * @param page the page and its totals.
 * @param toOut maps a row to what the answer shows (default: the row as it is).
 */
export function pageEnvelope<K extends string, Row, Out = Row>(
  key: K,
  page: Page<Row>,
  toOut?: (row: Row) => Out,
): PageTotals & { [P in K]: Out[] } {
  const rows = toOut ? page.rows.map(toOut) : (page.rows as unknown as Out[]);
  const { totalCount, totalPages, currentPage } = page;
  return { totalCount, totalPages, currentPage, ...({ [key]: rows } as { [P in K]: Out[] }) };
}

/**
 * Runs a count query and a page query concurrently.
 *
 * A page past the last is an empty `rows` with the same totals. The page query
 * must order by a unique key (for example name, then id) so that pages never
 * overlap.
 *
 * @param request the page and limit.
 * @param countQuery a query returning one row `{count}` for the whole filtered set.
 * @param pageQuery builds the page query from `{limit, offset}` (rows, not pages).
 * @returns the page and the totals.
 */
export async function paginate<Row>(
  request: PageRequest,
  countQuery: PromiseLike<{ count: number }[]>,
  pageQuery: (window: { limit: number; offset: number }) => PromiseLike<Row[]>,
): Promise<Page<Row>> {
  // (page - 1) * limit can exceed 2^53 for absurd pages; any offset that large is past the end.
  const offset = Math.min((request.page - 1) * request.limit, Number.MAX_SAFE_INTEGER);
  const [counted, rows] = await Promise.all([
    countQuery,
    pageQuery({ limit: request.limit, offset }),
  ]);
  const totalCount = Number(counted[0]?.count ?? 0);
  return {
    totalCount,
    totalPages: Math.ceil(totalCount / request.limit),
    currentPage: request.page,
    rows,
  };
}

/**
 * The response schema of a paged endpoint: `{totalCount, totalPages, currentPage, <key>: [...]}`.
 *
 * @param key the endpoint-specific name of the list, for example `skus`.
 * @param row the schema of one row.
 * @param name the OpenAPI component name.
 */
export function pagedResponseSchema<K extends string, T extends z.ZodType>(
  key: K,
  row: T,
  name: string,
) {
  const shape = {
    totalCount: z.number().int().openapi({ description: "Rows matching the filters." }),
    totalPages: z.number().int().openapi({ description: "`ceil(totalCount / limit)`." }),
    currentPage: z.number().int(),
  };
  return z
    .object({ ...shape, ...({ [key]: z.array(row) } as { [P in K]: z.ZodArray<T> }) })
    .openapi(name);
}

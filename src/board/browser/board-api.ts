/**
 * The board's door to the public API: the project's typed client (clients/typescript,
 * openapi-fetch over the generated types) with the key a person entered, sent as
 * `x-api-key`, never in a URL. No retries: a retried POST would carry an `Idempotency-Key`,
 * and the board's POSTs are mostly report reads that the API need not keep; the next
 * refresh is the retry. The client sends back the latest `x-d1-bookmark`, so a report read
 * after a reason given from the board shows that reason.
 */
import { createClient, type ProductionMonitoringClient } from "@production-monitoring/client";

/** A non-2XX answer: its status (401: the key is not valid; 403: a scope is missing). */
export class BoardApiError extends Error {
  constructor(
    readonly status: number,
    path: string,
  ) {
    super(`${path}: ${status}`);
  }
}

let client: ProductionMonitoringClient | null = null;

/** Makes every later call use `key` (null: none, after the key was forgotten). */
export function useKey(key: string | null): void {
  client =
    key === null ? null : createClient({ baseUrl: location.origin, apiKey: key, maxRetries: 0 });
}

/**
 * The client with the current key.
 *
 * @throws Error when no key was entered.
 */
export function api(): ProductionMonitoringClient {
  if (!client) throw new Error("No API key");
  return client;
}

/**
 * The data of a 2XX answer with a body.
 *
 * @throws BoardApiError with the status of any other answer.
 */
export function answer<T>(result: { data?: T; response: Response }): T {
  if (!result.response.ok || result.data === undefined) {
    throw new BoardApiError(result.response.status, new URL(result.response.url).pathname);
  }
  return result.data;
}

/** At most this many pages of a report or search are read (100 rows each). */
const MAX_PAGES = 10;

/**
 * Every row of a paged report or search, page after page (at most {@link MAX_PAGES}).
 *
 * @param read reads one page (from 1): its rows and `totalPages`.
 */
export async function allPages<Row>(
  read: (page: number) => Promise<{ rows: Row[]; totalPages: number }>,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const next = await read(page);
    rows.push(...next.rows);
    if (page >= next.totalPages) break;
  }
  return rows;
}

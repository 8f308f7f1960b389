/**
 * The request's D1 session (src/db/session.ts) as middleware: reads the client's
 * `x-d1-bookmark`, opens the session on the database where it starts, and puts the
 * session's bookmark on the answer.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import {
  BOOKMARK_HEADER,
  MAX_BOOKMARK_LENGTH,
  openSession,
  parseBookmark,
  type RequestSession,
  sessionStartOf,
} from "../db/session";
import { unprocessable } from "./errors";

/** The 422 of a header that is not a bookmark this API wrote. */
function malformed() {
  return unprocessable(
    ["header", BOOKMARK_HEADER],
    `Must be a bookmark as this API sends it in ${BOOKMARK_HEADER} (at most ` +
      `${MAX_BOOKMARK_LENGTH} characters), sent back unchanged`,
  );
}

/**
 * Opens the request's session on a database: where the request's kind starts it
 * (`sessionStartOf`), or at the bookmark the client sent.
 *
 * @param c the request.
 * @param binding the database's D1 binding.
 * @param database its name, as bookmarks carry it.
 * @throws ApiError 422 at `["header", "x-d1-bookmark"]` when the header is not a bookmark
 *   this API wrote.
 */
export function requestSession(
  c: Context<AppEnv>,
  binding: D1Database,
  database: string,
): RequestSession {
  const bookmark = parseBookmark(c.req.header(BOOKMARK_HEADER));
  if (bookmark === "malformed") throw malformed();
  return openSession(binding, database, sessionStartOf(c.req.method, c.req.path), bookmark);
}

/**
 * Middleware, on every request: refuses a malformed `x-d1-bookmark` (422) before any work,
 * and once the answer is made, puts on it the bookmark of the request's session (opened on
 * the company's shard by `authenticate`, `requestSession`) when it used the database.
 */
export function d1Session(): MiddlewareHandler<AppEnv> {
  return async function bookmarkAnswers(c, next) {
    if (parseBookmark(c.req.header(BOOKMARK_HEADER)) === "malformed") throw malformed();
    await next();
    const bookmark = c.get("session")?.bookmark() ?? null;
    // A WebSocket upgrade (101) keeps its own answer; nothing to add to it.
    if (bookmark === null || c.res.status === 101) return;
    try {
      c.res.headers.set(BOOKMARK_HEADER, bookmark);
    } catch {
      // An answer passed through from a Durable Object has immutable headers.
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set(BOOKMARK_HEADER, bookmark);
    }
  };
}

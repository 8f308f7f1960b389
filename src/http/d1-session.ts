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
  type OpenedSession,
  openSession,
  parseBookmark,
  sessionStartOf,
} from "../db/session";
import { unprocessable } from "./errors";

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
): OpenedSession {
  const bookmark = parseBookmark(c.req.header(BOOKMARK_HEADER));
  if (bookmark === "malformed") {
    throw unprocessable(
      ["header", BOOKMARK_HEADER],
      `Must be a bookmark as this API sends it in ${BOOKMARK_HEADER} (at most ` +
        `${MAX_BOOKMARK_LENGTH} characters), sent back unchanged`,
    );
  }
  return openSession(binding, database, sessionStartOf(c.req.method, c.req.path), bookmark);
}

/**
 * Middleware: sets the request's database (`c.var.db`, over the session of
 * {@link requestSession} on `DB`) and, once the answer is made, its `x-d1-bookmark`
 * header when the request used the database.
 */
export function d1Session(): MiddlewareHandler<AppEnv> {
  return async function attachSession(c, next) {
    const { session, db } = requestSession(c, c.env.DB, "DB");
    c.set("db", db);
    c.set("session", session);
    await next();
    const bookmark = c.var.session.bookmark();
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

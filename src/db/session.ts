/**
 * D1 sessions: every request reads and writes its company's database through one session (the
 * Sessions API, `withSession`): reads that tolerate a few seconds of lag go to the nearest
 * replica, and a client that sends an earlier answer's bookmark sees at least what it saw.
 * A bookmark is `<database>:<D1 bookmark>`, so one of another database (a company moved since)
 * never anchors a session: the request then starts at the primary.
 * docs/api-guide.md ("Consistency: nearby replicas and `x-d1-bookmark`").
 */
import type { Database } from "./client";
import { createSessionDb } from "./client";

/** Where a session's first query goes (D1's `D1SessionConstraint`). */
type SessionStart = "first-primary" | "first-unconstrained";

/** The header that carries a bookmark, in requests and in answers. */
export const BOOKMARK_HEADER = "x-d1-bookmark";

/** Longest bookmark header accepted, characters. */
export const MAX_BOOKMARK_LENGTH = 256;

/**
 * A D1 bookmark as D1 writes them: hexadecimal groups joined by `-` (locally
 * `00000000-0000000e-00000000-<32 hex>`), lexicographically ordered by age.
 */
const D1_BOOKMARK = "[0-9a-f]{1,32}(?:-[0-9a-f]{1,64}){0,7}";

/** A database name as bookmarks carry it (a D1 binding's name). */
const DATABASE_NAME = "[A-Za-z][A-Za-z0-9_]{0,63}";

/**
 * An `x-d1-bookmark` header this API takes, as a regular expression (ECMA-262, the one the
 * OpenAPI document states too): empty (no bookmark), or `<database>:<D1 bookmark>`, at most
 * {@link MAX_BOOKMARK_LENGTH} characters.
 */
export const BOOKMARK_PATTERN = `^(?:${DATABASE_NAME}:${D1_BOOKMARK})?$`;
const BOOKMARK = new RegExp(BOOKMARK_PATTERN);

/** A bookmark header, read: the database it was taken on and D1's bookmark. */
interface ClientBookmark {
  readonly database: string;
  readonly bookmark: string;
}

/**
 * Reads an `x-d1-bookmark` request header.
 *
 * @param value the header's value (undefined when absent).
 * @returns null when absent or empty (D1's own examples echo an empty bookmark as ""), the
 *   bookmark, or "malformed" when it is not `<database>:<D1 bookmark>` as this API writes them.
 */
export function parseBookmark(value: string | undefined): ClientBookmark | null | "malformed" {
  const text = value?.trim() ?? "";
  if (text === "") return null;
  if (text.length > MAX_BOOKMARK_LENGTH) return "malformed";
  if (!BOOKMARK.test(text)) return "malformed";
  const colon = text.indexOf(":");
  return { database: text.slice(0, colon), bookmark: text.slice(colon + 1) };
}

/** The later of two D1 bookmarks (they sort by age); null when both are null. */
function later(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.localeCompare(b) < 0 ? b : a;
}

/**
 * One request's D1 session over a database's binding, usable where a D1 binding is
 * (`prepare`, `batch`): the request's Drizzle client is built over it, and SQL text reaches
 * it through that client's `$client`. It can move forward to a later bookmark (the realtime
 * read barrier, after Durable Objects wrote to the primary outside the session): D1 sessions
 * cannot be re-anchored, so a new session starts at the later bookmark and takes over; every
 * read after it is at least that fresh, and the session stays sequentially consistent.
 */
export class RequestSession implements D1Database {
  /** The database's binding: the primary, for what must not lag (`exec`, the barrier's marks). */
  readonly binding: D1Database;
  /** The database's name, as bookmarks carry it. */
  readonly database: string;
  /** How the session started: a constraint, or the client's bookmark. */
  readonly start: SessionStart | "bookmark";
  private current: D1DatabaseSession;
  /** The latest bookmark of the sessions replaced by {@link advanceTo}. */
  private earlier: string | null = null;
  /** The Drizzle client over this session, once asked for. */
  private client: Database | undefined;

  constructor(binding: D1Database, database: string, start: SessionStart | ClientBookmark) {
    this.binding = binding;
    this.database = database;
    this.start = typeof start === "string" ? start : "bookmark";
    this.current = binding.withSession(typeof start === "string" ? start : start.bookmark);
  }

  /**
   * The typed Drizzle client over this session, made on first use: a request that never
   * queries its shard (a realtime write answered from caches and its machine's object)
   * does not build one (`createSessionDb` allocates a query builder per table; its cost:
   * docs/benchmarks.md, "Costs behind choices in the code").
   */
  get db(): Database {
    this.client ??= createSessionDb(this);
    return this.client;
  }

  prepare(query: string): D1PreparedStatement {
    return this.current.prepare(query);
  }

  batch<T = unknown>(statements: D1PreparedStatement[]): Promise<D1Result<T>[]> {
    return this.current.batch<T>(statements);
  }

  /** Not part of a session: D1 runs `exec` on the primary (migrations, tests). */
  exec(query: string): Promise<D1ExecResult> {
    return this.binding.exec(query);
  }

  withSession(constraintOrBookmark?: string): D1DatabaseSession {
    return this.binding.withSession(constraintOrBookmark);
  }

  /** @deprecated D1's `dump`, for the deprecated alpha databases only. */
  dump(): Promise<ArrayBuffer> {
    return this.binding.dump();
  }

  /** D1's bookmark of the session: the latest its queries saw; null before its first query. */
  d1Bookmark(): string | null {
    return later(this.earlier, this.current.getBookmark());
  }

  /**
   * The bookmark an answer carries (`x-d1-bookmark`): `<database>:<D1 bookmark>`, or null
   * when the request sent no query.
   */
  bookmark(): string | null {
    const d1 = this.d1Bookmark();
    return d1 === null ? null : `${this.database}:${d1}`;
  }

  /**
   * Moves the session forward: every later query reads a copy at least as fresh as
   * `bookmark` (a no-op when the session is already there).
   *
   * @param bookmark a D1 bookmark of this database.
   */
  advanceTo(bookmark: string): void {
    const mine = this.d1Bookmark();
    if (mine !== null && mine.localeCompare(bookmark) >= 0) return;
    this.earlier = mine;
    this.current = this.binding.withSession(bookmark);
  }

  /**
   * Moves the session to the primary's present: one read on the primary, whose bookmark
   * covers every write committed before it, wherever it came from (a Durable Object's
   * write-behind writes to the primary outside this session).
   */
  async catchUpWithPrimary(): Promise<void> {
    const primary = this.binding.withSession("first-primary");
    await primary.prepare("SELECT 1").run();
    const bookmark = primary.getBookmark();
    if (bookmark !== null) this.advanceTo(bookmark);
  }
}

/**
 * Opens a request's session on a database: at the client's bookmark when it sent one of
 * this database, else at the primary when it sent one of another database (it asked to see
 * its writes, and the primary has them), else as the request's kind wants.
 *
 * @param binding the database's D1 binding.
 * @param database its name (the binding's name), as bookmarks carry it.
 * @param start where a session without a usable bookmark starts (`sessionStartOf`).
 * @param bookmark the request's bookmark (`parseBookmark`), or null.
 * @returns the session (its Drizzle client is `session.db`, made on first use).
 */
export function openSession(
  binding: D1Database,
  database: string,
  start: SessionStart,
  bookmark: ClientBookmark | null,
): RequestSession {
  const anchor =
    bookmark === null ? start : bookmark.database === database ? bookmark : "first-primary";
  return new RequestSession(binding, database, anchor);
}

/**
 * The request session behind a Drizzle client, when it has one (a request's client);
 * null for a client of a binding (work outside a request, which reads the primary).
 */
export function sessionOf(db: Database): RequestSession | null {
  return db.$client instanceof RequestSession ? db.$client : null;
}

/**
 * The primary of a client's database: the binding itself, or the binding behind the
 * request's session. For reads that must not lag (the realtime barrier's marks).
 */
export function primaryOf(db: Database): D1Database {
  return sessionOf(db)?.binding ?? db.$client;
}

/** Paths whose POST only reads: searches (`.../filters`), reports, MCP, event tickets. */
const READING_POST = /^\/(?:v1\/reports\/[^/]+|v1\/[^/]+\/filters|mcp|v1\/realtime\/tickets)\/?$/;

/**
 * Where a request's session starts, by its method and path.
 *
 * - `first-unconstrained` (the nearest replica, maybe seconds behind): the public API's
 *   reads (GET), searches (`POST .../filters`), reports (`POST /v1/reports/...`), MCP (its
 *   tools only read) and event tickets;
 * - `first-primary`: every other request (creates, updates, deletes, realtime writes: their
 *   checks, such as "this machine exists", see the latest rows) and the whole operator API
 *   (operators' scripts create and then read, without bookmarks).
 *
 * @param method the HTTP method.
 * @param path the URL's path.
 */
export function sessionStartOf(method: string, path: string): SessionStart {
  if (path.startsWith("/operator/")) return "first-primary";
  if (method === "GET" || method === "HEAD") return "first-unconstrained";
  if (method === "POST" && READING_POST.test(path)) return "first-unconstrained";
  return "first-primary";
}

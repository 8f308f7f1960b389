/**
 * 405 Method Not Allowed, with `Allow`, for a known path asked with a verb it does not
 * take: one mechanism for every route of the app (public, operator, pages), derived from
 * the routes the app registered, so that a route added anywhere is covered at once
 * (docs/api-guide.md, "Errors"). An unknown path stays a 404.
 */
import type { Context, MiddlewareHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { ApiError } from "./errors";

/** A registered route as Hono lists it (`app.routes`). */
interface RegisteredRoute {
  method: string;
  path: string;
}

/** The body of every 405, as the other errors: `{"detail": ...}`. */
const METHOD_NOT_ALLOWED = "Method Not Allowed";

/** How many segments of a path pattern are literal (`/v1/skus/filters`: 3, `/v1/skus/:sku_id`: 2). */
const literalSegments = (pattern: string) =>
  pattern.split("/").filter((part) => part !== "" && !part.startsWith(":") && part !== "*").length;

/**
 * The methods each path of the app takes: a matcher over the routes' path patterns (Hono's
 * own router, so `:param` and `*` match exactly as they do for the real dispatch). Where
 * several patterns match, the most literal ones name the path, as OpenAPI reads its paths
 * ("concrete paths are matched before their templated counterparts"): `/v1/skus/filters`
 * is that path, not a `/v1/skus/{sku_id}`, so a GET of it is a 405, not a 422 about the id.
 */
class AllowedMethods {
  readonly #router = new TrieRouter<RegisteredRoute>();

  /**
   * @param routes the app's routes; `ALL` entries (middleware, and `/mcp`, which answers
   *   every verb itself) are left out: they do not make a path known.
   */
  constructor(routes: readonly RegisteredRoute[]) {
    // Hono lists a route once per handler (an OpenAPI route with its middleware: ten
    // entries); each method and path once keeps every match short (487 entries became 90:
    // a match 20 times faster, measured with the app's routes; docs/benchmarks.md).
    const added = new Set<string>();
    for (const route of routes) {
      if (route.method === "ALL") continue;
      const key = `${route.method} ${route.path}`;
      if (added.has(key)) continue;
      added.add(key);
      // One pseudo-method for every route: a match gives the routes of every pattern.
      this.#router.add("ANY", route.path, route);
    }
  }

  /**
   * The methods `path` takes, as an `Allow` header lists them: sorted, `HEAD` beside `GET`
   * (Hono answers a HEAD with the GET route), and `OPTIONS`.
   *
   * @returns the methods, or an empty list for a path no route knows.
   */
  allowed(path: string): string[] {
    const [matches] = this.#router.match("ANY", path);
    const routes = matches.map(([route]) => route);
    const best = Math.max(...routes.map((r) => literalSegments(r.path)));
    const methods = new Set(
      routes.filter((r) => literalSegments(r.path) === best).map((r) => r.method.toUpperCase()),
    );
    if (methods.size === 0) return [];
    if (methods.has("GET")) methods.add("HEAD");
    methods.add("OPTIONS");
    return [...methods].sort();
  }
}

/**
 * Middleware: a request whose path is known but whose method no route of that path takes
 * is answered 405 `{"detail": "Method Not Allowed"}` with `Allow`; an `OPTIONS` request to
 * a known path is answered 204 with `Allow`. Everything else passes on (an unknown path
 * reaches the 404).
 *
 * @param routes the app's routes, read on the first request (all are registered by then).
 * @param gate a check run before a path's methods are told, for paths it names (the operator
 *   API tells its paths only to the operator: 401 without the token, as its document).
 */
export function allowedMethods(
  routes: () => readonly RegisteredRoute[],
  gate?: { paths: (path: string) => boolean; check: MiddlewareHandler },
): MiddlewareHandler {
  let table: AllowedMethods | undefined;
  return async function allowedMethodsMiddleware(c, next) {
    table ??= new AllowedMethods(routes());
    const method = c.req.method.toUpperCase();
    const allow = table.allowed(c.req.path);
    const taken = allow.includes(method) && method !== "OPTIONS";
    if (allow.length === 0 || taken) return next();
    if (gate?.paths(c.req.path)) {
      let passed = false;
      const refused = await gate.check(c, async () => {
        passed = true;
      });
      if (!passed) return refused instanceof Response ? refused : c.res;
    }
    return refuse(c, method, allow);
  };
}

function refuse(c: Context, method: string, allow: string[]): Response {
  if (method === "OPTIONS") {
    c.header("Allow", allow.join(", "));
    return c.body(null, 204);
  }
  throw new ApiError(405, METHOD_NOT_ALLOWED, { Allow: allow.join(", ") });
}

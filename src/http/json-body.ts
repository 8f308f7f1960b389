/**
 * Middleware: request bodies are JSON, well-formed and not too large: 413 over the limit
 * (`Content-Length` first, then while reading), 415 for another `Content-Type`, 422
 * `json_invalid` for malformed JSON and `value_error.unicode` for a lone surrogate. On `/v1`
 * only the declared size is checked before authentication (`declaredBodyLimit`); `jsonBody`
 * reads the body after it. docs/api-guide.md ("Limits", the error table).
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "./errors";

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/**
 * Largest body of a public (`/v1`) request, in bytes: 4 MiB. A create call of
 * 1,000 items fits with room to spare (1,000 SKUs whose every text is at its
 * longest in ASCII is about 2.4 MB; a typical 1,000-item call is under 300 KB).
 */
export const PUBLIC_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Largest body of an operator request, in bytes: 8 MiB. An ingestion call of
 * 10,000 samples is about 0.8 MB as `samples` objects with offsets and
 * 17-digit values (about 1.3 MB pretty-printed).
 */
export const OPERATOR_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The 413 body's `detail` for a limit, in words a caller can act on. */
export function tooLargeDetail(maxBytes: number): string {
  return `Request body is larger than ${maxBytes} bytes (${maxBytes / 1024 / 1024} MiB); split it into several calls`;
}

/**
 * Creates a middleware that refuses a body whose declared `Content-Length` is above
 * `maxBytes` (413), without reading anything. A body sent without `Content-Length`
 * passes; `jsonBody` counts it while reading.
 *
 * @param maxBytes largest body accepted, in bytes.
 * @throws ApiError 413.
 */
export function declaredBodyLimit(maxBytes: number): MiddlewareHandler {
  return async function declaredBodyLimitMiddleware(c, next) {
    const declared = c.req.header("content-length");
    if (declared !== undefined && Number.parseInt(declared, 10) > maxBytes) {
      throw new ApiError(413, tooLargeDetail(maxBytes));
    }
    await next();
  };
}

/**
 * Creates a middleware that refuses a body larger than `maxBytes` (413 with
 * `tooLargeDetail`), counting it as it is read when no `Content-Length` says so; the body is
 * left for the handler to read (`jsonBody` reads it as JSON; `/mcp` as one JSON-RPC message).
 *
 * @param maxBytes largest body accepted, in bytes.
 * @throws ApiError 413.
 */
export function sizedBody(maxBytes: number): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, tooLargeDetail(maxBytes));
    },
  });
}

// With the `u` flag a surrogate pair is one code point (not Cs): only lone halves match.
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The path of the first string or object key in a parsed JSON value that holds a lone
 * UTF-16 surrogate (which no UTF-8 store can keep: D1 would store U+FFFD instead).
 *
 * @param value a value from `JSON.parse`.
 * @returns the path below the body (a key's own name is its last step), or null when
 *   every string is well-formed Unicode.
 */
function illFormedTextPath(value: unknown): (string | number)[] | null {
  // Iterative, with parent links: a body may nest 10,000 levels deep (JSON.parse allows it),
  // which recursion here would turn into a stack overflow.
  interface Node {
    value: unknown;
    step: string | number | null;
    parent: Node | null;
  }
  const pathOf = (node: Node, last?: string): (string | number)[] => {
    const path: (string | number)[] = last === undefined ? [] : [last];
    for (let at: Node | null = node; at !== null && at.step !== null; at = at.parent) {
      path.push(at.step);
    }
    return path.reverse();
  };
  const stack: Node[] = [{ value, step: null, parent: null }];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    const current = node.value;
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return pathOf(node);
    } else if (Array.isArray(current)) {
      // Pushed in reverse, so the first ill-formed text in document order is found first.
      for (let index = current.length - 1; index >= 0; index -= 1) {
        stack.push({ value: current[index], step: index, parent: node });
      }
    } else if (typeof current === "object" && current !== null) {
      const entries = Object.entries(current);
      for (const [key] of entries) if (LONE_SURROGATE.test(key)) return pathOf(node, key);
      for (let index = entries.length - 1; index >= 0; index -= 1) {
        const [key, item] = entries[index] as [string, unknown];
        stack.push({ value: item, step: key, parent: node });
      }
    }
  }
  return null;
}

/**
 * Creates the middleware that reads and checks the body.
 *
 * @param options.maxBytes largest body accepted, in bytes (default `PUBLIC_MAX_BODY_BYTES`).
 * @throws ApiError 413 above `maxBytes`; 415 for a declared non-JSON `Content-Type`;
 *   422 `json_invalid` for a body that is not JSON; 422 `value_error.unicode` at the
 *   first string or key holding a lone surrogate.
 */
export function jsonBody(options: { maxBytes?: number } = {}): MiddlewareHandler {
  const limit = sizedBody(options.maxBytes ?? PUBLIC_MAX_BODY_BYTES);
  return async function jsonBodyMiddleware(c, next) {
    if (!METHODS_WITH_BODY.has(c.req.method)) return next();
    // Size first: nothing larger than the limit is read into memory or parsed.
    return limit(c, async () => {
      const contentType = c.req.header("content-type");
      const mediaType = contentType?.split(";")[0]?.trim() ?? "";
      if (contentType !== undefined && !JSON_MEDIA_TYPE.test(mediaType)) {
        throw new ApiError(415, "Content-Type must be application/json");
      }
      if (contentType !== undefined) {
        const text = await c.req.text();
        if (text.trim() !== "") {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            throw new ApiError(422, [
              { loc: ["body"], msg: "Body is not valid JSON", type: "json_invalid" },
            ]);
          }
          const illFormed = illFormedTextPath(parsed);
          if (illFormed) {
            throw new ApiError(422, [
              {
                loc: ["body", ...illFormed],
                msg: "Text must be well-formed Unicode (a lone surrogate is not a character)",
                type: "value_error.unicode",
              },
            ]);
          }
        }
      }
      await next();
    });
  };
}

/**
 * Middleware: request bodies are JSON, and not too large.
 *
 * A body larger than the limit is a 413 (checked on `Content-Length` before
 * anything is read, and while reading a body sent without one); a body sent
 * with another declared `Content-Type` is a 415; a body that is not valid JSON
 * is a 422 (`json_invalid`, FastAPI's form) instead of a 400.
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
 * Creates the middleware.
 *
 * @param options.maxBytes largest body accepted, in bytes (default `PUBLIC_MAX_BODY_BYTES`).
 * @throws ApiError 413 above `maxBytes`; 415 for a declared non-JSON `Content-Type`;
 *   422 `json_invalid` for a body that is not JSON.
 */
export function jsonBody(options: { maxBytes?: number } = {}): MiddlewareHandler {
  const maxBytes = options.maxBytes ?? PUBLIC_MAX_BODY_BYTES;
  const limit = bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ApiError(413, tooLargeDetail(maxBytes));
    },
  });
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
          try {
            JSON.parse(text);
          } catch {
            throw new ApiError(422, [
              { loc: ["body"], msg: "Body is not valid JSON", type: "json_invalid" },
            ]);
          }
        }
      }
      await next();
    });
  };
}

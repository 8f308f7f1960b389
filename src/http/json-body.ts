/**
 * Middleware: request bodies are JSON.
 *
 * A body sent with another declared `Content-Type` is a 415; a body that is
 * not valid JSON is a 422 (`json_invalid`, FastAPI's form) instead of a 400.
 */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "./errors";

const JSON_MEDIA_TYPE = /^application\/([\w.-]+\+)?json$/i;
const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/** Creates the middleware. */
export function jsonBody(): MiddlewareHandler {
  return async function jsonBodyMiddleware(c, next) {
    if (METHODS_WITH_BODY.has(c.req.method)) {
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
    }
    await next();
  };
}

/**
 * `/docs`: the interactive reference page, Swagger UI rendered from `/openapi.json`.
 *
 * Swagger UI's two files come from the pinned `swagger-ui-dist` package and ship inside
 * the Worker as text modules (`[[rules]]` in wrangler.toml; the same rule for the tests
 * in vitest.config.ts): the page loads nothing from a CDN, so it works offline (`npm start`
 * on a machine without internet) and depends on no third party in production.
 *
 * Why not Workers static assets: with an `[assets]` folder, every request of the Worker
 * passes the assets router first. Locally that router runs on the same cores as the
 * Worker and cost 0.35 ms of CPU per request (1.14 to 1.48 ms for a bare route), about a
 * fifth of the throughput of every route, to serve a page few requests ask for. A text
 * module is not parsed as JavaScript; the Worker only holds the strings (1.9 MB).
 */
import type { Context } from "hono";
import swaggerUiCss from "swagger-ui-dist/swagger-ui.css";
import swaggerUiBundle from "swagger-ui-dist/swagger-ui-bundle.js";
import type { AppEnv } from "../app-env";
import { notFound } from "./errors";

/** URL prefix under which the page's Swagger UI files are served. */
export const DOCS_ASSETS_PREFIX = "/docs/assets/";

/** The page's files by name: their text and media type. Nothing else is served. */
const DOCS_ASSETS: Record<string, { text: string; contentType: string }> = {
  "swagger-ui-bundle.js": {
    text: swaggerUiBundle,
    contentType: "text/javascript; charset=utf-8",
  },
  "swagger-ui.css": { text: swaggerUiCss, contentType: "text/css; charset=utf-8" },
};

/** Strong ETags of the files, computed once per isolate on first use. */
const etags = new Map<string, Promise<string>>();

async function etagOf(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  const hex = [...new Uint8Array(digest).slice(0, 16)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `"${hex}"`;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/**
 * The HTML of the reference page.
 *
 * Swagger UI's online validator badge is off (`validatorUrl: null`): it would send the
 * document to validator.swagger.io. "Try it out" sends requests to this deployment only
 * (the document's server is `/`).
 *
 * @param title the page title (plain text; escaped here).
 * @param specUrl same-origin path of the OpenAPI document.
 * @returns a complete HTML document whose every script and style is under
 *   `DOCS_ASSETS_PREFIX`.
 */
export function docsPageHtml(title: string, specUrl: string): string {
  const config = JSON.stringify({
    url: specUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
  }).replace(/</g, "\\u003c");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${DOCS_ASSETS_PREFIX}swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS_PREFIX}swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle(${config});</script>
</body>
</html>
`;
}

/**
 * Serves one of the page's Swagger UI files, with a strong ETag; a request whose
 * `If-None-Match` names it gets a 304 without the body.
 *
 * @param file the name after `DOCS_ASSETS_PREFIX`.
 * @returns 200 with the file, or 304.
 * @throws ApiError 404 for any other name.
 */
export async function serveDocsAsset(c: Context<AppEnv>, file: string): Promise<Response> {
  const asset = Object.hasOwn(DOCS_ASSETS, file) ? DOCS_ASSETS[file] : undefined;
  if (!asset) throw notFound("Not Found");
  let etag = etags.get(file);
  if (!etag) {
    etag = etagOf(asset.text);
    etags.set(file, etag);
  }
  const headers = {
    ETag: await etag,
    // Revalidated on every use: a deployment with a newer Swagger UI is seen at once.
    "Cache-Control": "no-cache",
  };
  const ifNoneMatch = c.req.header("if-none-match");
  if (ifNoneMatch?.split(",").some((tag) => tag.trim() === headers.ETag)) {
    return c.body(null, 304, headers);
  }
  return c.body(asset.text, 200, { ...headers, "Content-Type": asset.contentType });
}

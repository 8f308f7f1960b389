/**
 * `/docs`: the interactive reference page, Swagger UI rendered from `/openapi.json`.
 *
 * Swagger UI's files come from the pinned `swagger-ui-dist` package, which is the
 * Worker's static-assets directory (`[assets]` in wrangler.toml), and are served by this
 * Worker under `/docs/assets/`: the page loads nothing from a CDN, so it works offline
 * (`npm start` on a machine without internet) and depends on no third party in production.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode, StatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import { notFound } from "./errors";

/** URL prefix under which the page's Swagger UI files are served. */
export const DOCS_ASSETS_PREFIX = "/docs/assets/";

/**
 * The files of `swagger-ui-dist` the page uses; every other file of the package (its demo
 * `index.html`, source maps, `package.json`) stays unreachable.
 */
const DOCS_ASSET_FILES = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"]);

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
 * @returns a complete HTML document whose every script, style and icon is under
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
<link rel="icon" type="image/png" href="${DOCS_ASSETS_PREFIX}favicon-32x32.png">
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
 * Serves one Swagger UI file from the static assets (`env.ASSETS`), with the request's
 * conditional headers, so a browser revalidates it by ETag.
 *
 * @returns the asset's response (200, or 304 for a matching `If-None-Match`) with the
 *   headers the app's middleware set (`X-Request-Id`).
 * @throws ApiError 404 for a name outside the page's files, or when the asset is missing.
 */
export async function serveDocsAsset(c: Context<AppEnv>, file: string): Promise<Response> {
  if (!DOCS_ASSET_FILES.has(file)) throw notFound("Not Found");
  const url = new URL(`/${file}`, c.req.url);
  const res = await c.env.ASSETS.fetch(new Request(url, { headers: c.req.raw.headers }));
  if (res.status === 404) throw notFound("Not Found");
  // Through the context, so that the headers set by middleware (X-Request-Id) are kept.
  const headers = Object.fromEntries(res.headers);
  if (res.body === null) return c.body(null, res.status as StatusCode, headers); // 304
  return c.body(res.body, res.status as ContentfulStatusCode, headers);
}

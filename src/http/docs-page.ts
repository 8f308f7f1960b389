/**
 * `/docs`: the interactive reference page, Swagger UI rendered from `/openapi.json`. Its two
 * files come from the pinned `swagger-ui-dist` and ship inside the Worker as text modules
 * (`[[rules]]` in wrangler.toml and vitest.config.ts), so the page needs no CDN and works
 * offline; why not Workers static assets: docs/decisions.md ("Interactive reference page").
 */
import type { Context } from "hono";
import swaggerUiCss from "swagger-ui-dist/swagger-ui.css";
import swaggerUiBundle from "swagger-ui-dist/swagger-ui-bundle.js";
import type { AppEnv } from "../app-env";
import { notFound } from "./errors";
import type { TryItFill } from "./try-it-fills";

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
 * The HTML of a reference page.
 *
 * Swagger UI's online validator badge is off (`validatorUrl: null`): it would send the
 * document to validator.swagger.io. "Try it out" sends requests to this deployment only
 * (the document's server is relative).
 *
 * With `options.bearerPrompt` (the operator API, whose document itself needs the
 * operator token), the page first asks for the token in a password field, keeps it in
 * the tab's session storage (never in a URL), and sends it as `Authorization: Bearer`
 * with every request Swagger UI makes, the document's included.
 *
 * With `options.tryItFills` (the public API, ./try-it-fills.ts), "Try it out" reads the
 * answers it gets and fills other operations in with them (a create's id into its DELETE,
 * the realtime read into the realtime writes), and a line above the reference says so.
 *
 * @param title the page title (plain text; escaped here).
 * @param specUrl same-origin path of the OpenAPI document.
 * @param options.bearerPrompt the label of the token field, when the page needs one.
 * @param options.tryItFills the operations whose answers fill others in.
 * @returns a complete HTML document whose every script and style is under
 *   `DOCS_ASSETS_PREFIX`.
 */
export function docsPageHtml(
  title: string,
  specUrl: string,
  options: { bearerPrompt?: string; tryItFills?: readonly TryItFill[] } = {},
): string {
  const config = JSON.stringify({
    url: specUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
  }).replace(/</g, "\\u003c");
  const start = options.bearerPrompt
    ? `<form id="token-form" style="font:16px sans-serif;margin:2rem">
<label for="token">${escapeHtml(options.bearerPrompt)}</label>
<input id="token" type="password" autocomplete="off" required style="margin:0 .5rem">
<button type="submit">Open</button>
</form>
<script>
(function () {
  var KEY = "pm-docs-token:" + ${JSON.stringify(specUrl)};
  function open(token) {
    document.getElementById("token-form").hidden = true;
    var config = ${config};
    config.requestInterceptor = function (req) {
      req.headers.Authorization = "Bearer " + token;
      return req;
    };
    window.ui = SwaggerUIBundle(config);
  }
  var saved = sessionStorage.getItem(KEY);
  if (saved) return open(saved);
  document.getElementById("token-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var token = document.getElementById("token").value;
    sessionStorage.setItem(KEY, token);
    open(token);
  });
})();
</script>`
    : options.tryItFills
      ? tryItScript(config, options.tryItFills)
      : `<script>window.ui = SwaggerUIBundle(${config});</script>`;
  const note = options.tryItFills
    ? `<p style="font:14px sans-serif;margin:1rem 2rem 0">Try it out on the demo of <code>npm start</code>
("Authorize" with its <code>demo-full-access</code> key) leaves it as it was when each create is
followed by the DELETE below it, which this page fills in with the id the create answered, and when
<code>GET /v1/realtime/{machine_id}</code> is pressed before the two realtime writes, which it fills
in with what the machine is already doing.</p>\n`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${DOCS_ASSETS_PREFIX}swagger-ui.css">
</head>
<body>
${note}<div id="swagger-ui"></div>
<script src="${DOCS_ASSETS_PREFIX}swagger-ui-bundle.js"></script>
${start}
</body>
</html>
`;
}

/**
 * The page's script with "Try it out" fills (./try-it-fills.ts): Swagger UI's request
 * interceptor notes each request's method by URL, its response interceptor reads a 2XX answer
 * of a `from` operation and sets the `to` operation's path parameter (`changeParam`) or JSON
 * body (`setRequestBodyValue`, kept when "Try it out" is pressed), as a person would type them.
 */
function tryItScript(config: string, fills: readonly TryItFill[]): string {
  const json = JSON.stringify(fills).replace(/</g, "\\u003c");
  return `<script>
(function () {
  var FILLS = ${json};
  var methods = new Map();
  function valueAtPlace(answer, place) {
    return place.split(".").reduce(function (value, step) {
      return value !== null && typeof value === "object" ? value[step] : undefined;
    }, answer);
  }
  function matches(template, pathname) {
    return new RegExp("^" + template.replace(/\\{[^}]+\\}/g, "[^/]+") + "$").test(pathname);
  }
  var config = ${config};
  config.requestInterceptor = function (req) {
    methods.set(req.url, String(req.method).toLowerCase());
    return req;
  };
  config.responseInterceptor = function (res) {
    if (!res.ok) return res;
    var method = methods.get(res.url);
    var pathname = new URL(res.url, location.href).pathname;
    var answer = res.body;
    FILLS.forEach(function (fill) {
      if (fill.from.method !== method || !matches(fill.from.path, pathname)) return;
      var pathMethod = [fill.to.path, fill.to.method];
      if (fill.param) {
        var id = valueAtPlace(answer, fill.param.value);
        if (id != null) window.ui.specActions.changeParam(pathMethod, fill.param.name, "path", String(id));
      }
      if (fill.body) {
        var names = Object.keys(fill.body);
        if (names.length === 0 || valueAtPlace(answer, fill.body[names[0]]) == null) return;
        var body = {};
        names.forEach(function (name) {
          var value = valueAtPlace(answer, fill.body[name]);
          body[name] = value === undefined ? null : value;
        });
        // Kept when "Try it out" is pressed (which otherwise starts from the example); the
        // operation then shows a Reset button that brings the example back.
        window.ui.oas3Actions.setRetainRequestBodyValueFlag({ value: true, pathMethod: pathMethod });
        window.ui.oas3Actions.setRequestBodyValue({ value: JSON.stringify(body, null, 2), pathMethod: pathMethod });
      }
    });
    return res;
  };
  window.ui = SwaggerUIBundle(config);
})();
</script>`;
}

/** The pages a person opens in a browser, linked from the landing page. */
const BROWSER_PAGES = [
  {
    path: "/board",
    title: "Plant board",
    about: "every machine's shift, SKU, live OEE and stops (asks for an API key)",
  },
  { path: "/docs", title: "Public API reference", about: "every /v1 operation, with Try it out" },
  {
    path: "/openapi.json",
    title: "Public OpenAPI document",
    about: "OpenAPI 3.1, for client generators",
  },
  {
    path: "/operator/docs",
    title: "Operator API reference",
    about: "companies, keys, plant data, webhooks (asks for the operator token)",
  },
] as const;

/**
 * The landing page at `/`: what this is and links to the reference pages.
 *
 * @param title the API's name (plain text; escaped here).
 * @param version the interface version shown.
 */
export function landingPageHtml(title: string, version: string): string {
  const links = BROWSER_PAGES.map(
    (p) =>
      `<li><a href="${p.path}">${escapeHtml(p.title)}</a> <span>(${escapeHtml(p.about)})</span></li>`,
  ).join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.5rem}span{color:#555}code{background:#f2f2f2;padding:0 .2rem}
</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)} <small>${escapeHtml(version)}</small></h1>
<p>Machine signals, production facts and OEE for shop-floor scanners and partner
integrations. Every <code>/v1</code> request needs an <code>x-api-key</code> header (or a
Bearer access token) and one scope.</p>
<ul>
${links}
</ul>
</main>
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
  return serveText(c, `docs/${file}`, asset);
}

/**
 * Serves a file the Worker holds as text, with a strong ETag (computed once per isolate
 * and `name`); a request whose `If-None-Match` names it gets a 304 without the body.
 *
 * @param name a unique name of the file (the ETag cache key).
 * @param asset its text and media type.
 */
export async function serveText(
  c: Context<AppEnv>,
  name: string,
  asset: { text: string; contentType: string },
): Promise<Response> {
  let etag = etags.get(name);
  if (!etag) {
    etag = etagOf(asset.text);
    etags.set(name, etag);
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

/**
 * Builds the app: middleware order, route mounting, the OpenAPI document and
 * the one error path.
 */
import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { requestId } from "hono/request-id";
import {
  BOOKMARK_COMPONENT,
  BOOKMARK_HEADER_COMPONENT,
  BOOKMARK_PARAMETER_COMPONENT,
} from "./app-chain/public-route";
import type { AppEnv } from "./app-env";
import {
  BOARD_SCRIPT_PATH,
  boardPageHtml,
  serveBoardScript,
  serveFavicon,
} from "./board/board-page";
import { createDb } from "./db/client";
import { isFenceError } from "./db/move-fence";
import { isCompanyMoving, UnknownCompanyError } from "./db/shards";
import { exportsRoutes } from "./exports/routes";
import { allowedMethods } from "./http/allowed-methods";
import { d1Session } from "./http/d1-session";
import {
  DOCS_ASSETS_PREFIX,
  docsPageHtml,
  landingPageHtml,
  serveDocsAsset,
} from "./http/docs-page";
import { ApiError } from "./http/errors";
import { withOperationExamples } from "./http/examples";
import { NO_OFFSET_IS_UTC } from "./http/instants";
import {
  declaredBodyLimit,
  jsonBody,
  OPERATOR_MAX_BODY_BYTES,
  PUBLIC_MAX_BODY_BYTES,
} from "./http/json-body";
import { createRouter } from "./http/openapi";
import { TRY_IT_FILLS } from "./http/try-it-fills";
import { mcpRoutes } from "./mcp/routes";
import { log } from "./observability/log";
import { createOperatorApp } from "./operator";
import { operatorAuth } from "./operator/auth";
import { heldWritesOf, liveLogOwnersOf } from "./realtime/machine-stub";
import { realtimeRoutes } from "./realtime/routes";
import { stopReasonRoutes } from "./realtime/stop-reasons/routes";
import { streamRoutes } from "./realtime/streams/routes";
import { reportsRoutes } from "./reports/routes";
import { machinesRoutes } from "./resources/machines/routes";
import { nominalSpeedsRoutes } from "./resources/nominal-speeds/routes";
import { operatorsRoutes } from "./resources/operators/routes";
import { productionLogsRoutes } from "./resources/production-logs/routes";
import { signalsRoutes } from "./resources/signals/routes";
import { simpleWorkOrdersRoutes } from "./resources/simple-work-orders/routes";
import { skusRoutes } from "./resources/skus/routes";

const API_VERSION = "0.1.0";

const SCOPE_TABLE_INTRO =
  "Every request acts for the company of its credential: `x-api-key: <API_KEY>` or " +
  "`Authorization: Bearer <ACCESS_TOKEN>` (exactly one of them). Each operation needs one scope " +
  "`section.action`, named in its description and in `x-required-scope`. Date-times are " +
  `ISO 8601, in a path, a query or a body alike: ${NO_OFFSET_IS_UTC}`;

/**
 * Logs a 5XX answer: one JSON line with the request id the client got in `X-Request-Id`, the
 * request, the status and the cause, so that every 5XX can be traced (docs/api-guide.md,
 * "Errors"). 4XX answers are the client's and are not logged.
 */
function logServerError(c: Context<AppEnv>, status: number, error: Error): void {
  log("error", "server_error", {
    requestId: c.get("requestId"),
    method: c.req.method,
    path: c.req.path,
    status,
    error: String(error),
    // An unexpected error's stack says where; an expected 503's message says why.
    ...(status === 500 ? { stack: error.stack } : {}),
  });
}

/**
 * Renders any thrown error as the spec's body.
 *
 * `ApiError` keeps its status and detail; a company whose shard this Worker does not
 * bind is a 503; Hono's own 4XX errors become our bodies; anything else is a 500 whose
 * body never carries the message or stack. Every 5XX is logged with its cause and the
 * request id ({@link logServerError}).
 */
export function renderError(error: Error, c: Context<AppEnv>): Response {
  if (error instanceof ApiError) {
    for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
    if (error.status >= 500) logServerError(c, error.status, error);
    return c.json({ detail: error.detail }, error.status);
  }
  if (isFenceError(error) || isCompanyMoving(error)) {
    // A write that reached a company's old database during its move (docs/scaling.md): the
    // batch was refused whole, nothing was written; or a move that did not switch within the
    // wait. The retry reaches the company's database.
    logServerError(c, 503, error);
    c.header("retry-after", "1");
    return c.json({ detail: "This company's data is being moved; retry in a second" }, 503);
  }
  if (error instanceof UnknownCompanyError) {
    // A company the directory places on a shard this Worker does not bind (a deployment
    // that dropped a binding): its data exists but cannot be reached now.
    logServerError(c, 503, error);
    return c.json({ detail: "Service Unavailable" }, 503);
  }
  if (error instanceof HTTPException) {
    if (error.status === 400 && /JSON/i.test(error.message)) {
      return c.json(
        { detail: [{ loc: ["body"], msg: "Body is not valid JSON", type: "json_invalid" }] },
        422,
      );
    }
    if (error.status < 500) return c.json({ detail: error.message || "Bad Request" }, error.status);
  }
  logServerError(c, 500, error);
  return c.json({ detail: "Internal Server Error" }, 500);
}

/** The Worker's HTTP app: the router {@link createRouter} makes, with every route mounted. */
type App = ReturnType<typeof createRouter>;

/**
 * The steps every request passes before its route, in order (docs/architecture.md, "Two
 * requests, followed"): `/healthz` first (the benchmarks' floor), the request id, 405 for a known
 * path asked with another verb, the directory database, the D1 session and its bookmark, then
 * the declared body limit of /v1 and the operator's JSON body.
 */
function useRequestSteps(app: App): void {
  // Liveness, and the floor of the benchmarks: no auth, no storage, no body.
  app.get("/healthz", (c) => c.body(null, 204));
  app.use("*", requestId());
  // A known path asked with another verb: 405 with `Allow`, before anything reads the request
  // (an operator path only to the operator, whose routes are not public).
  app.use(
    "*",
    allowedMethods(() => app.routes, {
      paths: (path) => path.startsWith("/operator/v1/"),
      check: operatorAuth(),
    }),
  );
  app.use("*", async function attachDirectory(c, next) {
    c.set("directory", createDb(c.env.DB));
    await next();
  });
  // x-d1-bookmark checked, and the request's session's bookmark on the answer (the session is
  // opened on the company's shard by authenticate; docs/api-guide.md, "Consistency").
  app.use("*", d1Session());
  // Public bodies are read after authentication (publicRoute); only the declared size here.
  app.use("/v1/*", declaredBodyLimit(PUBLIC_MAX_BODY_BYTES));
  app.use("/operator/*", jsonBody({ maxBytes: OPERATOR_MAX_BODY_BYTES }));
}

/**
 * Registers the OpenAPI components every public operation refers to: the `x-d1-bookmark`
 * parameter and header, and the two security schemes (an API key, a bearer access token).
 */
function registerSharedComponents(app: App): void {
  // x-d1-bookmark, referenced by every public operation and response (app-chain/public-route.ts).
  app.openAPIRegistry.registerComponent(
    "parameters",
    BOOKMARK_COMPONENT,
    BOOKMARK_PARAMETER_COMPONENT,
  );
  app.openAPIRegistry.registerComponent("headers", BOOKMARK_COMPONENT, BOOKMARK_HEADER_COMPONENT);
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKeyAuth", {
    type: "apiKey",
    in: "header",
    name: "x-api-key",
    description: "An API key issued by the service operator.",
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "JWT",
    description: "An access token from the company's identity provider.",
  });
}

/** Mounts the API's routers: the public resources, reports, exports, realtime and the operator's. */
function mountApiRoutes(app: App): void {
  app.route("/", machinesRoutes);
  app.route("/", signalsRoutes);
  app.route("/", skusRoutes);
  app.route("/", operatorsRoutes);
  app.route("/", simpleWorkOrdersRoutes);
  app.route("/", nominalSpeedsRoutes);
  // The readers of production logs below src/realtime/ get their way to its objects here.
  app.route(
    "/",
    productionLogsRoutes({ heldWrites: heldWritesOf, liveLogOwners: liveLogOwnersOf }),
  );
  app.route("/", reportsRoutes(heldWritesOf));
  app.route("/", exportsRoutes);
  // Before realtimeRoutes: `/v1/realtime/events` is not a `{machine_id}`.
  app.route("/", streamRoutes);
  app.route("/", realtimeRoutes);
  app.route("/", stopReasonRoutes);
  // Mounted through a plain Hono app so that the operator routes stay out of the
  // public OpenAPI document (OpenAPIHono.route merges the registries of OpenAPIHono
  // sub-apps); the operator API has its own document at /operator/v1/openapi.json.
  app.route("/", new Hono<AppEnv>().route("/operator/v1", createOperatorApp()));
}

/** The public OpenAPI document's header: title, version, servers and the tags of its operations. */
const PUBLIC_DOCUMENT_CONFIG = {
  openapi: "3.1.0",
  info: {
    title: "Production Monitoring Public API",
    version: API_VERSION,
    description: SCOPE_TABLE_INTRO,
  },
  // Relative: the document describes the deployment that serves it (local, sandbox, production).
  servers: [{ url: "/", description: "The deployment serving this document." }],
  tags: [
    { name: "Machines", description: "The company's machines." },
    { name: "Signals", description: "Machine signals and their aggregated samples." },
    { name: "SKUs", description: "Products made by the machines." },
    { name: "Operators", description: "The people who run the machines." },
    { name: "Simple work orders", description: "Work orders known by name." },
    { name: "Nominal speeds", description: "Rated speed of each machine/SKU pair." },
    { name: "Production logs", description: "Counts produced over intervals." },
    { name: "Reports", description: "OEE metrics per machine and shift, and stops." },
    { name: "Realtime", description: "What a machine runs now, written and read live." },
    {
      name: "Exports",
      description: "Whole datasets as Parquet or CSV files, written in the background.",
    },
  ],
};

/**
 * Mounts what is read by people and tools rather than integrations: /openapi.json (generated
 * once per isolate), the MCP endpoint, the landing page, /docs and its assets, the operator's
 * docs, the plant board and its script, and the favicons.
 */
function mountDocumentsAndPages(app: App): void {
  // Generated once per isolate (the routes do not change), with the examples that make
  // "Try it out" on /docs work with the demo key (src/http/examples.ts).
  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  const openApiDocument = () => {
    document ??= withOperationExamples(app.getOpenAPI31Document(PUBLIC_DOCUMENT_CONFIG));
    return document;
  };
  app.get("/openapi.json", (c) => c.json(openApiDocument()));
  // The MCP endpoint (docs/mcp.md): a plain Hono app, so it stays out of /openapi.json.
  app.route("/", mcpRoutes(openApiDocument));
  app.get("/", (c) => c.html(landingPageHtml("Production Monitoring Public API", API_VERSION)));
  app.get("/docs", (c) =>
    c.html(
      docsPageHtml("Production Monitoring Public API", "/openapi.json", {
        tryItFills: TRY_IT_FILLS,
      }),
    ),
  );
  app.get("/operator/docs", (c) =>
    c.html(
      docsPageHtml("Production Monitoring Operator API", "/operator/v1/openapi.json", {
        bearerPrompt: "Operator token",
      }),
    ),
  );
  app.get(`${DOCS_ASSETS_PREFIX}:file`, (c) => serveDocsAsset(c, c.req.param("file")));
  app.get("/board", (c) => c.html(boardPageHtml()));
  app.get(BOARD_SCRIPT_PATH, (c) => serveBoardScript(c));
  app.get("/favicon.svg", (c) => serveFavicon(c));
  app.get("/favicon.ico", (c) => serveFavicon(c));
}

/**
 * Creates the Worker's HTTP app: the request steps, the shared OpenAPI components, the API's
 * routes, the documents and pages, then the 404 and error answers ({@link renderError}).
 */
export function createApp() {
  const app = createRouter();
  useRequestSteps(app);
  registerSharedComponents(app);
  mountApiRoutes(app);
  mountDocumentsAndPages(app);
  app.notFound((c) => c.json({ detail: "Not Found" }, 404));
  app.onError(renderError);
  return app;
}

/**
 * Bulk exports: `POST /v1/exports` (start one), `GET /v1/exports/{export_id}` (its state,
 * progress and files) and `GET /v1/exports/{export_id}/files/{file_name}` (a file, streamed
 * from R2). The work runs in the company's exports object (./export-object.ts);
 * docs/exports.md describes it all.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { publicRoute, type ScopeByField } from "../app-chain/public-route";
import { type AppEnv, scopeOf } from "../app-env";
import { requireScopeOf } from "../auth/middleware";
import { BOOKMARK_HEADER } from "../db/session";
import { namedStub } from "../durable/named-stub";
import { type Env, readSettings } from "../env";
import { ApiError, notFound } from "../http/errors";
import { isoInstant } from "../http/instants";
import {
  BARRIER_RESPONSE,
  createRouter,
  ErrorSchema,
  jsonResponse,
  RATE_LIMIT_HEADERS,
  stringHeader,
} from "../http/openapi";
import { UuidId } from "../http/schemas";
import { DAY_MS } from "../time/units";
import { FORMAT_FILES } from "./encoders";
import { type CompanyExportsRpc, type ExportRecord, exportFileKey } from "./exports-rpc";
import { prepareExport } from "./prepare";
import { directUrl } from "./presign";
import {
  DATASET_ENDPOINTS,
  DATASET_SCOPES,
  EXPORT_DATASETS,
  EXPORT_FILES_KEPT_MS,
  type ExportOut,
  ExportRequestSchema,
  ExportSchema,
  MAX_ACTIVE_EXPORTS,
  MAX_EXPORT_FILES,
  MAX_EXPORT_ROWS,
  MAX_FILE_BYTES,
  MAX_FILE_ROWS,
} from "./schemas";

/** Seconds a client is told to wait when the company already runs its most exports. */
const BUSY_RETRY_SECONDS = 60;

/** The scope rule of every export route: the `read` scope of the export's dataset. */
const byDataset = (inBody: boolean, changes: boolean): ScopeByField => ({
  field: "dataset",
  scopes: DATASET_SCOPES,
  inBody,
  changes,
});

/** The company's exports object. */
function exportsObject(env: Env, companyId: number): DurableObjectStub<CompanyExportsRpc> {
  return namedStub(env.COMPANY_EXPORTS, String(companyId));
}

/** The API's answer for an export: its files with their download URLs. */
async function exportOut(env: Env, companyId: number, record: ExportRecord): Promise<ExportOut> {
  const settings = readSettings(env).exportUrls;
  const now = Date.now();
  const files = await Promise.all(
    record.files.map(async (f) => {
      const direct = await directUrl(settings, exportFileKey(companyId, record.id, f.name), now);
      return {
        name: f.name,
        rows: f.rows,
        bytes: f.bytes,
        url: `/v1/exports/${record.id}/files/${encodeURIComponent(f.name)}`,
        ...(direct && { directUrl: direct.url, directUrlExpiresAt: isoInstant(direct.expiresAt) }),
      };
    }),
  );
  return {
    id: record.id,
    dataset: record.dataset,
    format: record.format,
    state: record.state,
    createdAt: isoInstant(record.createdAt),
    finishedAt: record.finishedAt === null ? null : isoInstant(record.finishedAt),
    expiresAt: record.expiresAt === null ? null : isoInstant(record.expiresAt),
    progress: record.progress,
    rows: record.rows,
    totalRows: record.totalRows,
    error: record.error,
    files,
    leftOut: record.leftOut.map((l) => ({
      machine_uuid: l.machineUuid,
      public_id: l.publicId,
      name: l.name,
      from: isoInstant(l.from),
    })),
  };
}

/**
 * The caller's export by id, once its dataset's scope is checked.
 *
 * @throws ApiError 404 for an unknown id or another company's; 403 without the scope.
 */
async function ownExport(c: Context<AppEnv>, id: string): Promise<ExportRecord> {
  const { companyId } = scopeOf(c);
  const record = await exportsObject(c.env, companyId).describe(companyId, id.toLowerCase());
  if (!record) throw notFound("Export not found");
  requireScopeOf(c, DATASET_SCOPES[record.dataset]);
  return record;
}

const datasetList = EXPORT_DATASETS.map(
  (d) => `- \`${d}\`: the rows of \`${DATASET_ENDPOINTS[d]}\`, scope \`${DATASET_SCOPES[d]}\``,
).join(";\n");

const STANDARD_HEADERS = {
  ...RATE_LIMIT_HEADERS,
  [BOOKMARK_HEADER]: { $ref: "#/components/headers/D1Bookmark" },
};

const createExportRoute = publicRoute(byDataset(true, true), {
  method: "post",
  path: "/v1/exports",
  operationId: "createExport",
  tags: ["Exports"],
  summary: "Start a bulk export",
  description:
    "Starts an export of one dataset into files (`parquet` or `csv`) and answers at once with " +
    "its id; follow it with `GET /v1/exports/{export_id}`. The datasets, each with its " +
    "endpoint's own filters (less `page` and `limit`: an export holds every matching row, in " +
    "the endpoint's order):\n\n" +
    `${datasetList}.\n\n` +
    "A `signals` export takes the signal-data query (`start_time`, `end_time`, `agg_unit`, " +
    "`agg_period`, `agg_function`) over a window of any length, for `machines` (uuids: every " +
    "listed signal of each) and `signals` (public ids); its rows are " +
    "`machine_uuid, public_id, name, timestamp, value`. Reports are computed as of the " +
    "export's start. A file holds at most `rowsPerFile` rows (default and most " +
    `${MAX_FILE_ROWS.toLocaleString("en")}) and ${MAX_FILE_BYTES / 1024 / 1024} MiB; an export ` +
    `at most ${MAX_EXPORT_ROWS.toLocaleString("en")} rows and ${MAX_EXPORT_FILES} files (more is ` +
    `a 422 \`export_too_large\`); a company runs at most ${MAX_ACTIVE_EXPORTS} exports at once. ` +
    `Files are kept ${EXPORT_FILES_KEPT_MS / DAY_MS} ` +
    "days after the export ends.",
  request: {
    body: { required: true, content: { "application/json": { schema: ExportRequestSchema } } },
  },
  responses: {
    202: {
      description: "Started (queued behind the company's running exports, if any).",
      headers: {
        Location: stringHeader(
          "Where to follow it.",
          "/v1/exports/6f1c2a3e-8b4d-4c5e-9f60-7a8b9c0d1e2f",
        ),
        ...STANDARD_HEADERS,
      },
      content: { "application/json": { schema: ExportSchema } },
    },
    429: {
      ...jsonResponse(
        ErrorSchema,
        `The credential's rate limit, or the company already runs ${MAX_ACTIVE_EXPORTS} ` +
          "exports (`Retry-After`: when to try again).",
        { detail: "Rate limit exceeded" },
      ),
      headers: {
        "Retry-After": stringHeader("Whole seconds to wait before retrying.", "60"),
        ...RATE_LIMIT_HEADERS,
      },
    },
    ...BARRIER_RESPONSE,
  },
});

const ExportIdParam = z.object({ export_id: UuidId("export_id") });

const getExportRoute = publicRoute(byDataset(false, false), {
  method: "get",
  path: "/v1/exports/{export_id}",
  operationId: "getExport",
  tags: ["Exports"],
  summary: "Get an export: state, progress and files",
  description:
    "The export's `state` (`queued`, `running`, `succeeded`, `failed`, `expired`), its " +
    "`progress` (0 to 1) and `rows` so far, and its finished files with their rows, bytes and " +
    "`url` (a download through the API with the same credential); where the deployment is " +
    "configured for it, also a `directUrl` that works without a credential for a short time. " +
    "Another company's export is a 404.",
  request: { params: ExportIdParam },
  responses: {
    200: jsonResponse(ExportSchema, "The export."),
    404: jsonResponse(ErrorSchema, "Unknown export, or another company's.", {
      detail: "Export not found",
    }),
  },
});

const FileParams = ExportIdParam.extend({
  file_name: z
    .string()
    .regex(/^part-\d{5}\.(parquet|csv)$/)
    // No example: a file's name comes from its export's answer (`part-00001.parquet`, ...).
    .openapi({ param: { name: "file_name", in: "path" } }),
});

const binary = z.string().openapi({ format: "binary" });

const getFileRoute = publicRoute(byDataset(false, false), {
  method: "get",
  path: "/v1/exports/{export_id}/files/{file_name}",
  operationId: "getExportFile",
  tags: ["Exports"],
  summary: "Download an export file",
  description:
    "The file's bytes, streamed (`application/vnd.apache.parquet` or `text/csv`). A `Range: " +
    "bytes=...` header (one range) gets that part (206), as Parquet readers ask for it; an " +
    "invalid one (`bytes=10-5`), several ranges or another unit are ignored (200, the whole " +
    "file, RFC 9110). `HEAD` gives the size. A file of an expired export, or of another " +
    "company's, is a 404.",
  request: { params: FileParams },
  responses: {
    200: {
      description: "The whole file.",
      content: {
        "application/vnd.apache.parquet": { schema: binary },
        "text/csv": { schema: binary },
      },
    },
    206: {
      description: "The asked range (`Content-Range` says which).",
      content: {
        "application/vnd.apache.parquet": { schema: binary },
        "text/csv": { schema: binary },
      },
    },
    404: jsonResponse(ErrorSchema, "Unknown export or file, or another company's.", {
      detail: "File not found",
    }),
    416: jsonResponse(
      ErrorSchema,
      "The range starts at or past the file's end, or is the suffix `-0` (`Content-Range: " +
        "bytes */<size>` gives the size).",
      {
        detail: "Range Not Satisfiable",
      },
    ),
  },
});

/**
 * The byte range a `Range` header asks of a file of `size` bytes, as RFC 9110 (section 14)
 * reads it:
 *
 * - no header, another unit, several ranges, or an **invalid** range (not `first-last`,
 *   `first-` or `-suffix` in digits, or a `last` before its `first`, as `bytes=10-5`):
 *   null, the header is ignored and the whole file answered (200), as section 14.2 lets a
 *   server do with an invalid ranges-specifier;
 * - a valid range that is **not satisfiable** (its `first` at or past the end, or the
 *   suffix `-0`): "unsatisfiable", a 416 with `Content-Range: bytes *\/size` (section 15.5.17);
 * - else the range, its end cut to the file's (section 14.1.2).
 *
 * @param header the `Range` header, if any.
 * @param size the file's size, bytes.
 */
function parseRange(header: string | undefined, size: number): R2Range | null | "unsatisfiable" {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  const [, first = "", last = ""] = match;
  if (first === "") {
    const suffix = Number(last);
    return suffix > 0 ? { suffix: Math.min(suffix, size) } : "unsatisfiable";
  }
  const offset = Number(first);
  if (last !== "" && Number(last) < offset) return null;
  if (offset >= size) return "unsatisfiable";
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  return { offset, length: end - offset + 1 };
}

export const exportsRoutes = createRouter()
  .openapi(createExportRoute, async (c) => {
    const request = c.req.valid("json");
    const scope = scopeOf(c);
    const now = Date.now();
    const { spec, totalRows } = await prepareExport(c.env, scope, request, now);
    const id = crypto.randomUUID();
    const answer = await exportsObject(c.env, scope.companyId).start(scope.companyId, {
      id,
      spec,
      totalRows,
    });
    if (!answer.ok) {
      throw new ApiError(
        429,
        `The company already runs ${answer.active} exports (at most ${MAX_ACTIVE_EXPORTS} at ` +
          "once); retry when one has finished",
        { "Retry-After": String(BUSY_RETRY_SECONDS) },
      );
    }
    c.header("Location", `/v1/exports/${id}`);
    return c.json(await exportOut(c.env, scope.companyId, answer.record), 202);
  })
  .openapi(getExportRoute, async (c) => {
    const record = await ownExport(c, c.req.valid("param").export_id);
    return c.json(await exportOut(c.env, scopeOf(c).companyId, record), 200);
  })
  .openapi(getFileRoute, async (c) => {
    const { export_id, file_name } = c.req.valid("param");
    const record = await ownExport(c, export_id);
    const file = record.files.find((f) => f.name === file_name);
    if (!file) throw notFound("File not found");
    const key = exportFileKey(scopeOf(c).companyId, record.id, file.name);
    const range = parseRange(c.req.header("range"), file.bytes);
    if (range === "unsatisfiable") {
      throw new ApiError(416, "Range Not Satisfiable", {
        "Content-Range": `bytes */${file.bytes}`,
      });
    }
    const object = await c.env.HISTORY.get(key, range === null ? {} : { range });
    if (object === null) throw notFound("File not found");
    const headers = new Headers({
      "content-type": FORMAT_FILES[record.format].mediaType,
      "content-disposition": `attachment; filename="${file.name}"`,
      "accept-ranges": "bytes",
      etag: object.httpEtag,
    });
    if (range === null) {
      headers.set("content-length", String(file.bytes));
      return new Response(object.body, { status: 200, headers }) as never;
    }
    const offset = "suffix" in range ? file.bytes - range.suffix : (range.offset ?? 0);
    const length = "suffix" in range ? range.suffix : (range.length ?? file.bytes - offset);
    headers.set("content-length", String(length));
    headers.set("content-range", `bytes ${offset}-${offset + length - 1}/${file.bytes}`);
    return new Response(object.body, { status: 206, headers }) as never;
  });

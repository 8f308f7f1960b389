/**
 * Bulk exports (`/v1/exports`, docs/exports.md): what a client sends to start one, what it
 * reads back, and the bounds. The filters of each dataset are its endpoint's own request
 * schema (less `page` and `limit`: an export holds every row), so an export selects the
 * same rows its endpoint would.
 */
import { z } from "@hono/zod-openapi";
import { dateTime } from "../http/instants";
import { KpiReportFiltersSchema } from "../reports/kpi-schemas";
import { MetricsReportFiltersSchema } from "../reports/metrics-schemas";
import { StopsReportFiltersSchema } from "../reports/stops-report";
import { ProductionLogFiltersSchema } from "../resources/production-logs/schemas";
import { Uuid } from "../resources/signals/schemas";
import { signalWindowQueryShape } from "../resources/signals/window";
import { DAY_MS } from "../time/units";

/** The datasets an export copies, each the rows of one endpoint. */
export const EXPORT_DATASETS = ["signals", "production_logs", "stops", "metrics", "kpis"] as const;
export type ExportDataset = (typeof EXPORT_DATASETS)[number];

/**
 * The scope an export of each dataset needs, to be started and to be read (its state and
 * its files): the `read` scope of the section its endpoint belongs to.
 */
export const DATASET_SCOPES: Readonly<Record<ExportDataset, string>> = {
  signals: "signals.read",
  production_logs: "production_logs.read",
  stops: "reports.read",
  metrics: "reports.read",
  kpis: "reports.read",
};

/** The endpoint whose rows each dataset copies. */
export const DATASET_ENDPOINTS: Readonly<Record<ExportDataset, string>> = {
  signals: "GET /v1/machines/{machine_uuid}/signals/{public_id}",
  production_logs: "POST /v1/production-logs/filters",
  stops: "POST /v1/reports/stops",
  metrics: "POST /v1/reports/metrics",
  kpis: "POST /v1/reports/kpis",
};

const EXPORT_FORMATS = ["parquet", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Most exports of one company queued or running at once; one more is a 429. */
export const MAX_ACTIVE_EXPORTS = 3;
/** A file holds at most this many rows (`rowsPerFile`, 10,000 to this); the export goes on in the next file. */
export const MAX_FILE_ROWS = 1_000_000;
/** The fewest rows per file a client may ask for. */
const MIN_FILE_ROWS = 10_000;
/** Most files one export may hold. */
export const MAX_EXPORT_FILES = 1_000;
/** A file is closed once it holds this many bytes (it may pass it by one batch). */
export const MAX_FILE_BYTES = 512 * 1024 * 1024;
/** Most rows (signal points) one export may hold; a larger one is a 422 when started. */
export const MAX_EXPORT_ROWS = 100_000_000;
/** Machines or signals one signal export may name, each list. */
const MAX_EXPORT_SIGNAL_IDS = 1_000;
/** How long the files of a finished export are kept, ms; then they are deleted. */
export const EXPORT_FILES_KEPT_MS = 7 * DAY_MS;

const Format = z
  .enum(EXPORT_FORMATS)
  .default("parquet")
  .openapi({
    description:
      "`parquet` (typed columns: instants as UTC timestamps, integers as INT64, other numbers " +
      "as DOUBLE; Snappy-compressed) or `csv` (RFC 4180, UTF-8, a header row, the API's CSV).",
  });

const RowsPerFile = z
  .number()
  .int()
  .min(MIN_FILE_ROWS)
  .max(MAX_FILE_ROWS)
  .default(MAX_FILE_ROWS)
  .openapi({
    description:
      `Most rows in one file (${MIN_FILE_ROWS.toLocaleString("en")} to ` +
      `${MAX_FILE_ROWS.toLocaleString("en")}, the default); the export goes on in the next file.`,
  });

const IdList = (what: string) =>
  z
    .array(Uuid)
    .min(1)
    .max(MAX_EXPORT_SIGNAL_IDS)
    .nullish()
    .openapi({ description: `${what} (at most ${MAX_EXPORT_SIGNAL_IDS}).` });

/**
 * A signal export's filters: the signal-data query (`start_time`, `end_time`, `agg_unit`,
 * `agg_period`, `agg_function`, snake_case as that endpoint's) over a window of any length,
 * for the signals named by their machines or by their own ids.
 */
const SignalExportFiltersSchema = z
  .object({
    machines: IdList("Machine uuids: every listed signal of each machine"),
    signals: IdList("Signal public ids"),
    ...signalWindowQueryShape,
    end_time: signalWindowQueryShape.end_time.openapi({
      description: "Window end (exclusive); any length after `start_time`.",
    }),
  })
  .strict()
  .superRefine((f, ctx) => {
    if (!f.machines?.length && !f.signals?.length) {
      ctx.addIssue({
        code: "custom",
        path: ["signals"],
        message: "Name the signals to export: machines (uuids), signals (public ids) or both",
      });
    }
    if (f.end_time <= f.start_time) {
      ctx.addIssue({
        code: "custom",
        path: ["end_time"],
        message: "end_time must be later than start_time",
      });
    }
  })
  .openapi("SignalExportFilters");

export type SignalExportFilters = z.infer<typeof SignalExportFiltersSchema>;

const withoutPage = { page: true, limit: true } as const;

/** Each dataset's filters: its endpoint's request, without `page` and `limit`. */
const DATASET_FILTERS = {
  production_logs: ProductionLogFiltersSchema.omit(withoutPage),
  stops: StopsReportFiltersSchema.omit(withoutPage),
  metrics: MetricsReportFiltersSchema.omit(withoutPage),
  kpis: KpiReportFiltersSchema.omit(withoutPage),
};

const datasetRequest = <D extends keyof typeof DATASET_FILTERS>(dataset: D) =>
  z
    .object({
      dataset: z.literal(dataset),
      format: Format,
      rowsPerFile: RowsPerFile,
      filters: DATASET_FILTERS[dataset].nullish().openapi({
        description: `The body of \`${DATASET_ENDPOINTS[dataset]}\` without \`page\` and \`limit\`.`,
      }),
    })
    .strict();

export const ExportRequestSchema = z
  .discriminatedUnion("dataset", [
    z
      .object({
        dataset: z.literal("signals"),
        format: Format,
        rowsPerFile: RowsPerFile,
        filters: SignalExportFiltersSchema,
      })
      .strict(),
    datasetRequest("production_logs"),
    datasetRequest("stops"),
    datasetRequest("metrics"),
    datasetRequest("kpis"),
  ])
  .openapi("ExportRequest", {
    example: {
      dataset: "metrics",
      format: "parquet",
      filters: {
        startDate: { between: { start: "2026-01-01T00:00:00Z", end: "2026-12-31T23:59:59Z" } },
      },
    },
  });

export type ExportRequest = z.infer<typeof ExportRequestSchema>;

const EXPORT_STATES = ["queued", "running", "succeeded", "failed", "expired"] as const;
export type ExportState = (typeof EXPORT_STATES)[number];

const ExportFileSchema = z
  .object({
    name: z.string().openapi({ example: "part-00001.parquet" }),
    rows: z.number().int(),
    bytes: z.number().int(),
    url: z.string().openapi({
      description:
        "Its download through the API (the same credential; `Range` requests are answered).",
      example: "/v1/exports/6f1c2a3e-8b4d-4c5e-9f60-7a8b9c0d1e2f/files/part-00001.parquet",
    }),
    directUrl: z
      .string()
      .optional()
      .openapi({
        description:
          "Where the deployment is configured for it: a presigned URL of the file in object " +
          "storage, valid until `directUrlExpiresAt`, usable without a credential.",
      }),
    directUrlExpiresAt: dateTime("When `directUrl` stops working.").optional(),
  })
  .openapi("ExportFile");

const LeftOutSchema = z
  .object({
    machine_uuid: z.string().openapi({ format: "uuid" }),
    public_id: z.string().openapi({ format: "uuid" }),
    name: z.string(),
    from: dateTime(
      "The files hold this signal's points before this instant only (none when it is the " +
        "window's start): the export stopped reading it here.",
    ),
  })
  .openapi("ExportLeftOut");

export const ExportSchema = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    dataset: z.enum(EXPORT_DATASETS),
    format: z.enum(EXPORT_FORMATS),
    state: z.enum(EXPORT_STATES).openapi({
      description:
        "`queued` (waiting for another export of the company), `running`, `succeeded` (every " +
        "file listed), `failed` (`error` says why), `expired` (its files were deleted).",
    }),
    createdAt: dateTime("When it was started; the rows are read as of this instant."),
    finishedAt: dateTime("When it succeeded or failed.").nullable(),
    expiresAt: dateTime("When its files are deleted.").nullable(),
    progress: z.number().openapi({ description: "Share done, 0 to 1." }),
    rows: z.number().int().openapi({ description: "Rows written so far (every file's)." }),
    totalRows: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Rows the export will hold, when known in advance (not signals)." }),
    error: z.string().nullable(),
    files: z.array(ExportFileSchema).openapi({
      description: "The finished files, in order; each appears as soon as it is written.",
    }),
    leftOut: z.array(LeftOutSchema).openapi({
      description:
        "Signals of a signal export deleted (or whose machine was deleted) after it started: " +
        "it stopped reading each at `from` and went on with the others. Empty when nothing " +
        "was left out, and for the other datasets.",
    }),
  })
  .openapi("Export");

export type ExportOut = z.infer<typeof ExportSchema>;

/**
 * The mirror of a company's directory row in its shard, kept crash-safe: every change of the
 * directory row bumps its `revision`; the mirror is then written as an upsert that never
 * replaces a newer copy, and only after that does the directory record `mirrored_revision`.
 * A crash in between leaves the company pending, finished by its next use (`shardOf`) or the
 * cron ({@link repairPendingMirrors}). Takes the bindings as arguments, for ./shards.ts.
 * docs/scaling.md ("The company row in two places").
 */
import { logError } from "../observability/log";
import type { companies } from "./schema";

/** The fields of a company's directory row that its mirror copies (all but the shard's own). */
export type CompanyRow = Pick<
  typeof companies.$inferSelect,
  | "id"
  | "name"
  | "timezone"
  | "webhookSecret"
  | "previousWebhookSecret"
  | "previousWebhookSecretExpiresAt"
  | "signalRetentionDays"
  | "signalHotWindowDays"
  | "revision"
  | "createdAt"
>;

/** The directory row's columns as the copy reads them, in the order of the upsert's parameters. */
const COPIED = [
  "id",
  "name",
  "timezone",
  "webhook_secret",
  "previous_webhook_secret",
  "previous_webhook_secret_expires_at",
  "signal_retention_days",
  "signal_hot_window_days",
  "revision",
  "created_at",
] as const;

type RawRow = { [K in (typeof COPIED)[number]]: string | number | null } & {
  shard: string | null;
};

/** Integer columns, bound through CAST: D1 binds a JavaScript number as REAL. */
const INTEGER_COLUMNS = new Set<string>([
  "id",
  "previous_webhook_secret_expires_at",
  "signal_retention_days",
  "signal_hot_window_days",
  "revision",
  "created_at",
]);

const UPSERT_SQL = `INSERT INTO companies (${COPIED.join(", ")}) VALUES (${COPIED.map(
  (column, i) => (INTEGER_COLUMNS.has(column) ? `CAST(?${i + 1} AS INTEGER)` : `?${i + 1}`),
).join(", ")})
  ON CONFLICT(id) DO UPDATE SET ${COPIED.filter((column) => column !== "id")
    .map((column) => `${column} = excluded.${column}`)
    .join(", ")}
  WHERE excluded.revision >= companies.revision`;

function raw(row: CompanyRow): (string | number | null)[] {
  return [
    row.id,
    row.name,
    row.timezone,
    row.webhookSecret,
    row.previousWebhookSecret,
    row.previousWebhookSecretExpiresAt,
    row.signalRetentionDays,
    row.signalHotWindowDays,
    row.revision,
    row.createdAt,
  ];
}

function fromRaw(row: RawRow): CompanyRow {
  return {
    id: Number(row.id),
    name: String(row.name),
    timezone: String(row.timezone),
    webhookSecret: String(row.webhook_secret),
    previousWebhookSecret:
      row.previous_webhook_secret === null ? null : String(row.previous_webhook_secret),
    previousWebhookSecretExpiresAt:
      row.previous_webhook_secret_expires_at === null
        ? null
        : Number(row.previous_webhook_secret_expires_at),
    signalRetentionDays:
      row.signal_retention_days === null ? null : Number(row.signal_retention_days),
    signalHotWindowDays: Number(row.signal_hot_window_days),
    revision: Number(row.revision),
    createdAt: Number(row.created_at),
  };
}

/**
 * The statement that writes a company's mirror row in its shard: an idempotent copy of the
 * directory row (every copied field, `shard` left null), skipped when the shard already holds
 * a newer revision, so a late copy never undoes a later change.
 *
 * @param shard the company's shard.
 * @param row the company's directory row.
 */
export function mirrorUpsert(shard: D1Database, row: CompanyRow): D1PreparedStatement {
  return shard.prepare(UPSERT_SQL).bind(...raw(row));
}

/**
 * The statement that records in the directory that the mirror holds `row.revision` (it
 * never lowers the record, so two copies finishing out of order leave the higher).
 */
export function markMirrored(directory: D1Database, row: CompanyRow): D1PreparedStatement {
  return directory
    .prepare(
      `UPDATE companies SET mirrored_revision = CAST(?2 AS INTEGER)
       WHERE id = CAST(?1 AS INTEGER) AND mirrored_revision < CAST(?2 AS INTEGER)`,
    )
    .bind(row.id, row.revision);
}

/**
 * Copies directory rows to their mirrors in one shard (one batch), then records the
 * revisions copied in the directory (one batch). A crash between the two leaves the rows
 * pending, and the next copy writes the same rows again.
 *
 * @param directory the directory (`DB`).
 * @param shard the shard of every row given.
 * @param rows the companies' directory rows (at least one).
 * @throws the shard's or the directory's error; the rows then stay pending.
 */
export async function copyToMirror(
  directory: D1Database,
  shard: D1Database,
  rows: readonly CompanyRow[],
): Promise<void> {
  if (rows.length === 0) return;
  await shard.batch(rows.map((row) => mirrorUpsert(shard, row)));
  await directory.batch(rows.map((row) => markMirrored(directory, row)));
}

const DIRECTORY_ROWS = `SELECT ${COPIED.join(", ")}, shard FROM companies`;

/**
 * Finishes a company's pending mirror: reads its directory row and copies it to `shard`
 * (three statements). For `shardOf`, which found the row pending.
 *
 * @param directory the directory (`DB`).
 * @param shard the company's shard, as the directory names it.
 * @param companyId the company.
 */
export async function completeMirror(
  directory: D1Database,
  shard: D1Database,
  companyId: number,
): Promise<void> {
  const row = await directory
    .prepare(`${DIRECTORY_ROWS} WHERE id = CAST(?1 AS INTEGER)`)
    .bind(companyId)
    .first<RawRow>();
  if (row) await copyToMirror(directory, shard, [fromRaw(row)]);
}

/** Most pending companies one cron run repairs (the rest wait for the next minute). */
const REPAIR_BATCH = 100;

/**
 * The cron's repair: copies every pending company's directory row to its shard, up to
 * {@link REPAIR_BATCH} a run. One directory read (through the partial index of pending rows,
 * so it reads nothing when all is well); then per shard with pending companies one batch
 * there and one in the directory. A shard that fails is logged and tried again next run;
 * the others are repaired.
 *
 * @param directory the directory (`DB`).
 * @param shards the Worker's shards by binding name (`shardBindings`).
 * @returns how many companies were repaired.
 */
export async function repairPendingMirrors(
  directory: D1Database,
  shards: ReadonlyMap<string, D1Database>,
): Promise<number> {
  const { results } = await directory
    .prepare(
      `${DIRECTORY_ROWS} WHERE mirrored_revision < revision ORDER BY id LIMIT ${REPAIR_BATCH}`,
    )
    .all<RawRow>();
  const byShard = new Map<string, CompanyRow[]>();
  for (const row of results) {
    if (row.shard === null) continue;
    byShard.set(row.shard, [...(byShard.get(row.shard) ?? []), fromRaw(row)]);
  }
  let repaired = 0;
  for (const [name, rows] of byShard) {
    const shard = shards.get(name);
    try {
      if (!shard) throw new Error(`no binding ${name}`);
      await copyToMirror(directory, shard, rows);
      repaired += rows.length;
    } catch (error) {
      logError("company_mirror_repair_failed", error, {
        shard: name,
        companies: rows.map((row) => row.id),
      });
    }
  }
  return repaired;
}

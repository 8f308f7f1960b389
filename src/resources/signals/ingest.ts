/**
 * Ingestion of signal samples, keeping the rollups in step.
 */
import { ROLLUP_WIDTHS_SECONDS } from "./aggregate";

/** At most this many samples in one ingestion call. */
export const MAX_SAMPLES_PER_CALL = 10_000;

export interface Sample {
  /** Instant, ms since the epoch. */
  ts: number;
  value: number;
}

/**
 * Stores samples of one signal and recomputes the rollups of every minute and
 * hour they touch, atomically (one `db.batch`).
 *
 * A sample at an instant that already has one replaces it; within one call the
 * last sample at an instant wins. Rollups are recomputed from the stored rows
 * (minutes from raw samples, hours from minute rollups), so replacements keep
 * them exact. Work is proportional to the samples in the touched minutes.
 *
 * @param d1 the D1 binding.
 * @param signal internal signal id and its company id.
 * @param samples at most `MAX_SAMPLES_PER_CALL` finite samples.
 * @returns the number of samples accepted (after de-duplication by instant).
 */
export async function ingestSamples(
  d1: D1Database,
  signal: { id: number; companyId: number },
  samples: readonly Sample[],
): Promise<number> {
  if (samples.length === 0) return 0;
  const byInstant = new Map<number, number>();
  for (const s of samples) byInstant.set(s.ts, s.value);
  const rows = JSON.stringify([...byInstant].map(([ts, value]) => [ts, value]));

  const [hourWidth, minuteWidth] = ROLLUP_WIDTHS_SECONDS;
  const touched = (widthSeconds: number) =>
    JSON.stringify([
      ...new Set(
        [...byInstant.keys()].map(
          (t) => Math.floor(t / (widthSeconds * 1000)) * widthSeconds * 1000,
        ),
      ),
    ]);

  const insert = d1
    .prepare(
      `INSERT OR REPLACE INTO signal_samples (signal_id, ts, value, company_id)
       SELECT ?1, CAST(json_extract(j.value, '$[0]') AS INTEGER), json_extract(j.value, '$[1]'), ?2
       FROM json_each(?3) AS j`,
    )
    .bind(signal.id, signal.companyId, rows);
  const minutes = d1
    .prepare(
      `INSERT OR REPLACE INTO signal_rollups
         (signal_id, width_seconds, bucket_start, sample_count, value_sum, value_min, value_max, company_id)
       SELECT ?1, ${minuteWidth}, m.value, COUNT(*), SUM(s.value), MIN(s.value), MAX(s.value), ?2
       FROM json_each(?3) AS m
       JOIN signal_samples AS s
         ON s.signal_id = ?1 AND s.ts >= m.value AND s.ts < m.value + ${minuteWidth * 1000}
       GROUP BY m.value`,
    )
    .bind(signal.id, signal.companyId, touched(minuteWidth));
  const hours = d1
    .prepare(
      `INSERT OR REPLACE INTO signal_rollups
         (signal_id, width_seconds, bucket_start, sample_count, value_sum, value_min, value_max, company_id)
       SELECT ?1, ${hourWidth}, h.value, SUM(r.sample_count), SUM(r.value_sum), MIN(r.value_min), MAX(r.value_max), ?2
       FROM json_each(?3) AS h
       JOIN signal_rollups AS r
         ON r.signal_id = ?1 AND r.width_seconds = ${minuteWidth}
        AND r.bucket_start >= h.value AND r.bucket_start < h.value + ${hourWidth * 1000}
       GROUP BY h.value`,
    )
    .bind(signal.id, signal.companyId, touched(hourWidth));
  await d1.batch([insert, minutes, hours]);
  return byInstant.size;
}

/**
 * The Parquet form of the signal archive's objects (which object covers what:
 * archive-layout.ts), written with hyparquet-writer and read back with hyparquet: columns
 * `time` (INT64 ms, UTC, delta-packed, with statistics) and `value` (DOUBLE, bit for bit),
 * about an hour per row group (docs/signal-storage.md, "The archive", "Objects").
 */
import { type FileMetaData, parquetMetadata, parquetRead } from "hyparquet";
import { ByteWriter, parquetWrite } from "hyparquet-writer";
import { yieldToOtherRequests } from "../../http/budget";
import {
  PARQUET_PAGE_BYTES,
  zstdCompress,
  zstdCompressByteStreams,
  zstdDecompress,
} from "../../parquet/zstd";
import { BLOCK_MS } from "./blocks";

/** A row group closes at the first hour boundary after this many rows. */
const ROW_GROUP_MIN_ROWS = 3_600;

/**
 * The file in memory, yielding to the isolate's other work after each row group (the writer
 * calls `flush` then, and waits for it before it encodes the next): a day's object is a
 * second of ZSTD at level 12 on a busy machine, an hour's is a twenty-fourth of it
 * (docs/bounded-work.md, "Fair share").
 */
class YieldingWriter extends ByteWriter {
  flush(): Promise<void> {
    return yieldToOtherRequests();
  }
}

/**
 * Encodes one object, a row group at a time with the isolate's other work between them.
 *
 * @param ts ascending, distinct instants, integer ms.
 * @param values `values[i]` at `ts[i]`; written bit for bit (`-0` and every NaN payload kept).
 * @returns the Parquet file's bytes.
 */
export async function encodeArchive(ts: Float64Array, values: Float64Array): Promise<Uint8Array> {
  const time = BigInt64Array.from(ts, (t) => BigInt(t));
  let distinct = 0;
  const seen = new Set<number>();
  for (const v of values) {
    if (!seen.has(v)) {
      seen.add(v);
      if (++distinct * 4 > values.length) break;
    }
  }
  const dictionary = distinct * 4 <= values.length;
  const writer = new YieldingWriter(1 << 16);
  await parquetWrite({
    writer,
    codec: "ZSTD",
    // BYTE_STREAM_SPLIT values: each byte stream in a zstd frame of its own (zstd.ts), and
    // the instants (a few bytes a page once delta-coded) in Snappy, so that every ZSTD page
    // of the file is a page of split doubles.
    compressors: { ZSTD: dictionary ? zstdCompress : zstdCompressByteStreams(8) },
    pageSize: PARQUET_PAGE_BYTES,
    rowGroupSize: rowGroups(ts),
    createdBy: "production-monitoring-api signal archive",
    columnData: [
      {
        name: "time",
        data: time,
        type: "TIMESTAMP",
        nullable: false,
        encoding: "DELTA_BINARY_PACKED",
        codec: dictionary ? "ZSTD" : "SNAPPY",
      },
      {
        name: "value",
        data: values,
        type: "DOUBLE",
        nullable: false,
        // Few distinct values (a counter, kW in whole units): let the writer try a dictionary.
        encoding: dictionary ? undefined : "BYTE_STREAM_SPLIT",
        // Min and max of noisy floats cost 0.1 bytes a sample on sparse objects; the time
        // statistics are what readers prune row groups by.
        statistics: false,
      },
    ],
  });
  return new Uint8Array(writer.getBuffer());
}

/** Row group sizes: hours put together until a group holds `ROW_GROUP_MIN_ROWS` rows. */
function rowGroups(ts: Float64Array): number[] {
  const sizes: number[] = [];
  let rows = 0;
  for (let i = 0; i < ts.length; i++) {
    rows++;
    const next = ts[i + 1];
    const hourEnds =
      next === undefined || Math.floor(next / BLOCK_MS) !== Math.floor((ts[i] ?? 0) / BLOCK_MS);
    if (hourEnds && (rows >= ROW_GROUP_MIN_ROWS || next === undefined)) {
      sizes.push(rows);
      rows = 0;
    }
  }
  return sizes.length > 0 ? sizes : [1];
}

/** Instants as ms numbers, as the archive's samples are everywhere else. */
const PARSERS = { timestampFromMilliseconds: (ms: bigint) => Number(ms) };

/**
 * Decodes the samples of an object with `from <= t < to`, decoding only the row groups whose
 * time range meets the window.
 *
 * @param file the object's bytes.
 * @returns ascending instants (ms) and their values.
 * @throws Error when the file is not an archive object (no `time`/`value` columns).
 */
export async function decodeArchive(
  file: ArrayBuffer,
  from = Number.NEGATIVE_INFINITY,
  to = Number.POSITIVE_INFINITY,
): Promise<{ ts: Float64Array; values: Float64Array }> {
  const metadata = parquetMetadata(file, { parsers: PARSERS });
  const parts: { ts: Float64Array; values: Float64Array }[] = [];
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows);
    const stats = group.columns[0]?.meta_data?.statistics;
    const lo = Number(stats?.min_value ?? Number.NEGATIVE_INFINITY);
    const hi = Number(stats?.max_value ?? Number.POSITIVE_INFINITY);
    if (hi >= from && lo < to) {
      // A row group (about an hour) at a time, the isolate's other work between them.
      if (parts.length > 0) await yieldToOtherRequests();
      const columns = await readGroup(file, metadata, rowStart, rows);
      parts.push(clip(columns.time, columns.value, from, to));
    }
    rowStart += rows;
  }
  return concatSamples(parts);
}

/**
 * The instants (ms) and values of one row group, `rows` rows from `rowStart`. A column comes
 * in as many chunks as it has pages (a time column whose deltas change width, as around a
 * silence, is several pages): each is placed at its rows.
 *
 * @throws Error when the time or value column misses rows (not a signal archive object).
 */
async function readGroup(
  file: ArrayBuffer,
  metadata: FileMetaData,
  rowStart: number,
  rows: number,
): Promise<{ time: Float64Array; value: Float64Array }> {
  const columns = { time: new Float64Array(rows), value: new Float64Array(rows) };
  const filled = { time: 0, value: 0 };
  await parquetRead({
    file,
    metadata,
    rowStart,
    rowEnd: rowStart + rows,
    columns: ["time", "value"],
    parsers: PARSERS,
    compressors: { ZSTD: zstdDecompress },
    onChunk: (chunk) => {
      const name = chunk.columnName;
      if (name !== "time" && name !== "value") return;
      const data = chunk.columnData as ArrayLike<number>;
      const at = chunk.rowStart - rowStart;
      const first = Math.max(0, -at);
      const last = Math.min(data.length, rows - at);
      if (last <= first) return;
      columns[name].set(
        first === 0 && last === data.length ? data : Array.from(data).slice(first, last),
        at + first,
      );
      filled[name] += last - first;
    },
  });
  if (filled.time < rows || filled.value < rows) {
    throw new Error("not a signal archive object: its time or value column misses rows");
  }
  return columns;
}

/** The samples of ascending `ts` with `from <= t < to`. */
function clip(ts: Float64Array, values: Float64Array, from: number, to: number) {
  let a = 0;
  while (a < ts.length && (ts[a] ?? 0) < from) a++;
  let b = ts.length;
  while (b > a && (ts[b - 1] ?? 0) >= to) b--;
  return { ts: ts.subarray(a, b), values: values.subarray(a, b) };
}

/** Sample series joined in order (`ts` and `values` alike). */
function concatSamples(parts: { ts: Float64Array; values: Float64Array }[]) {
  if (parts.length === 1 && parts[0]) return parts[0];
  const n = parts.reduce((sum, p) => sum + p.ts.length, 0);
  const ts = new Float64Array(n);
  const values = new Float64Array(n);
  let at = 0;
  for (const p of parts) {
    ts.set(p.ts, at);
    values.set(p.values, at);
    at += p.ts.length;
  }
  return { ts, values };
}

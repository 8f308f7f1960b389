/**
 * The bytes of an export file from columnar batches: CSV through the API's one CSV writer
 * (src/http/csv.ts), Parquet through hyparquet-writer (the project's Parquet library,
 * docs/decisions.md) with typed columns. Both write as they go: a Parquet file keeps one
 * row group of values and its metadata, a CSV file one batch (docs/exports.md, "Memory").
 */
import { ByteWriter, ParquetWriter } from "hyparquet-writer";
import { writeColumn } from "hyparquet-writer/src/column.js";
import { encodeNestedValues } from "hyparquet-writer/src/dremel.js";
import { schemaPathResolver } from "hyparquet-writer/src/schema.js";
import { yieldToOtherRequests } from "../http/budget";
import { CSV_MEDIA_TYPE, csvRecords } from "../http/csv";
import { CsvColumnWriter, type CsvKind } from "../http/csv-column-writer";
import type { Column, ColumnType } from "./columns";
import type { ExportFormat } from "./schemas";
import type { ColumnBatch } from "./sources";

/** Where an encoder's bytes go (an `R2FileWriter`). */
interface ByteSink {
  push(bytes: Uint8Array): Promise<void>;
}

/** Writes one file. */
export interface FileEncoder {
  /** Encodes a batch (a Parquet file buffers it until a row group is full). */
  write(batch: ColumnBatch): Promise<void>;
  /** Writes what is buffered and the file's end. */
  finish(): Promise<void>;
  /** Bytes the encoder holds for the file (its output buffer), for the memory figures. */
  heldBytes(): number;
}

/** The file name extension and media type of each format. */
export const FORMAT_FILES: Readonly<
  Record<ExportFormat, { extension: string; mediaType: string }>
> = {
  parquet: { extension: "parquet", mediaType: "application/vnd.apache.parquet" },
  csv: { extension: "csv", mediaType: CSV_MEDIA_TYPE },
};

/** An instant as ms since the epoch, from a number (ms) or an ISO 8601 text. */
function epochMs(value: unknown): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "string") return Date.parse(value);
  return null;
}

/** How the CSV writer writes each column type. */
const CSV_KINDS: Readonly<Record<ColumnType, CsvKind>> = {
  string: "text",
  int: "number",
  double: "number",
  boolean: "boolean",
  timestamp: "instant",
};

const encoder = new TextEncoder();

/**
 * CSV text written between two yields to the isolate's other work, bytes (a slice ends at
 * a row): about 2 ms of writing (docs/benchmarks.md, "Bulk exports: fair share").
 */
const CSV_SLICE_BYTES = 256 * 1024;

/** CSV: a header row with the dotted column names, then each batch's records. */
class CsvEncoder implements FileEncoder {
  private readonly writer: CsvColumnWriter;
  /** Rows of the next slice: as many as made `CSV_SLICE_BYTES` in the slice before. */
  private sliceRows = 1_000;

  constructor(
    private readonly columns: readonly Column[],
    private readonly sink: ByteSink,
  ) {
    this.writer = new CsvColumnWriter(columns.map((c) => CSV_KINDS[c.type]));
  }

  async start(): Promise<void> {
    await this.sink.push(encoder.encode(csvRecords([this.columns.map((c) => c.name)])));
  }

  async write(batch: ColumnBatch): Promise<void> {
    // In slices of about CSV_SLICE_BYTES, yielding between them: a signal batch is
    // megabytes of text, which would hold the isolate from every other request.
    for (let from = 0; from < batch.length; ) {
      const to = Math.min(batch.length, from + this.sliceRows);
      const bytes = this.writer.rows(batch.columns, from, to);
      const perRow = bytes.length / (to - from);
      this.sliceRows = Math.max(1, Math.min(100_000, Math.round(CSV_SLICE_BYTES / perRow)));
      await this.sink.push(bytes);
      await yieldToOtherRequests();
      from = to;
    }
  }

  async finish(): Promise<void> {}

  heldBytes(): number {
    return 0;
  }
}

/** A Parquet schema element per column type: OPTIONAL (a nested object may be null). */
function schemaElement(column: Column) {
  const base = { name: column.name, repetition_type: "OPTIONAL" as const };
  switch (column.type) {
    case "string":
      return { ...base, type: "BYTE_ARRAY" as const, converted_type: "UTF8" as const };
    case "int":
      return { ...base, type: "INT64" as const };
    case "double":
      return { ...base, type: "DOUBLE" as const };
    case "boolean":
      return { ...base, type: "BOOLEAN" as const };
    case "timestamp":
      return {
        ...base,
        type: "INT64" as const,
        logical_type: {
          type: "TIMESTAMP" as const,
          isAdjustedToUTC: true,
          unit: "MILLIS" as const,
        },
      };
  }
}

/**
 * The encodings of a column's values: deltas for 64-bit integers (instants a second apart
 * cost almost nothing), byte-stream split for doubles (it lets the codec see the exponent
 * bytes together), the writer's choice (a dictionary, when it pays) for the rest.
 */
function encodingOf(type: ColumnType) {
  if (type === "int" || type === "timestamp") return "DELTA_BINARY_PACKED" as const;
  if (type === "double") return "BYTE_STREAM_SPLIT" as const;
  return undefined;
}

/**
 * A column's values waiting for their row group, held in typed arrays allocated once per
 * file (a 64-bit integer or an instant as the number of ms, a double as itself), so that a
 * signal export's millions of points allocate no object per value; a column with a null in
 * the group is handed over as an array with nulls instead.
 */
class PendingColumn {
  private readonly numbers: Float64Array | null;
  /** The 64-bit integers handed over (the writer copies them), kept for the next group. */
  private readonly wide: BigInt64Array | null;
  private readonly nulls: Uint8Array;
  private readonly others: unknown[];
  private nullCount = 0;

  constructor(
    private readonly type: ColumnType,
    capacity: number,
  ) {
    const numeric = type === "int" || type === "timestamp" || type === "double";
    this.numbers = numeric ? new Float64Array(capacity) : null;
    this.wide = type === "int" || type === "timestamp" ? new BigInt64Array(capacity) : null;
    this.nulls = new Uint8Array(numeric ? capacity : 0);
    this.others = numeric ? [] : new Array(capacity);
  }

  /** Stores `count` values of `values` from `from` at `offset` on. */
  setRange(offset: number, values: readonly unknown[], from: number, count: number): void {
    const numbers = this.numbers;
    if (numbers === null) {
      for (let i = 0; i < count; i++) this.others[offset + i] = values[from + i] ?? null;
      return;
    }
    const instants = this.type === "timestamp";
    for (let i = 0; i < count; i++) {
      const value = values[from + i];
      // A number (an instant as ms, from the signal store) takes no conversion.
      const n = typeof value === "number" ? value : instants ? epochMs(value) : null;
      if (n === null || Number.isNaN(n)) {
        this.nulls[offset + i] = 1;
        this.nullCount += 1;
      } else {
        this.nulls[offset + i] = 0;
        numbers[offset + i] = n;
      }
    }
  }

  /** The first `n` values as the writer takes them (64-bit integers as bigint). */
  data(n: number): ArrayLike<unknown> {
    const numbers = this.numbers;
    if (numbers === null) return this.others.slice(0, n);
    const wide = this.wide;
    if (this.nullCount === 0) {
      // Views, not copies: the writer copies a row group's values before it encodes them.
      if (wide === null) return numbers.subarray(0, n);
      for (let i = 0; i < n; i++) wide[i] = BigInt(numbers[i] ?? 0);
      return wide.subarray(0, n);
    }
    const out: unknown[] = new Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.nulls[i] ? null : wide !== null ? BigInt(numbers[i] ?? 0) : numbers[i];
    }
    return out;
  }

  reset(): void {
    this.nullCount = 0;
  }

  /** Bytes of its typed arrays (the texts of a string column are not counted). */
  bytes(): number {
    return (this.numbers?.byteLength ?? 0) + (this.wide?.byteLength ?? 0) + this.nulls.byteLength;
  }
}

/**
 * Cells a Parquet row group holds about (rows = this / columns): bounds its memory, and the
 * piece of work encoded at once (a row group is, between two yields to others). 125,000
 * cells are 25,000 rows of a signal export: a file 20 % larger than with 100,000-row groups
 * (deltas and dictionaries start again in each), a quarter of the memory and of the piece
 * (docs/benchmarks.md, "Bulk exports").
 */
const ROW_GROUP_CELLS = 125_000;

/**
 * A `ByteWriter` that hands its bytes to the sink after every row group (the writer calls
 * `flush`) and starts its buffer again, keeping `offset` (the file position the metadata
 * records) counting on.
 */
class SinkWriter extends ByteWriter {
  constructor(private readonly sink: ByteSink) {
    super(1 << 20);
  }

  flush(): Promise<void> {
    const bytes = this.getBytes().slice();
    this.index = 0;
    return this.sink.push(bytes);
  }
}

/** A column's path in a Parquet schema, and a written column chunk (hyparquet-writer's types). */
type SchemaTree = ReturnType<ReturnType<typeof schemaPathResolver>>[number];
type ColumnChunk = ReturnType<typeof writeColumn>["chunk"];

/** hyparquet-writer's page size (its default), bytes of a column's values per page. */
const PAGE_BYTES = 1 << 20;

/**
 * Parquet: row groups of about `ROW_GROUP_CELLS` cells, Snappy-compressed pages.
 *
 * A row group is written column by column, giving way to the isolate's other work after
 * each column chunk: hyparquet-writer's `ParquetWriter.write` encodes a whole row group at
 * once (all its columns), which held another company's request beside three signal exports
 * for most of a group's encoding (docs/bounded-work.md, "Background work gives way"). The
 * loop is `ParquetWriter.write`'s own for one group of flat columns (the writer's
 * `writeColumn` per column, its chunk and page indexes recorded on the writer, the group's
 * metadata appended), so `finish` writes the same footer; the bytes are those `write`
 * writes, which `test/exports/datasets.test.ts` reads back with DuckDB.
 */
class ParquetEncoder implements FileEncoder {
  private readonly writer: SinkWriter;
  private readonly parquet: ParquetWriter;
  private readonly groupRows: number;
  private readonly pending: PendingColumn[];
  /** Each column's path in the schema (root, leaf), as the writer resolves it. */
  private readonly paths: SchemaTree[][];
  private pendingRows = 0;

  constructor(
    private readonly columns: readonly Column[],
    sink: ByteSink,
  ) {
    this.writer = new SinkWriter(sink);
    const schema = [{ name: "root", num_children: columns.length }, ...columns.map(schemaElement)];
    this.parquet = new ParquetWriter({
      writer: this.writer,
      schema,
      createdBy: "production-monitoring-api",
    });
    const resolve = schemaPathResolver(schema);
    this.paths = columns.map((c) => resolve([c.name]));
    this.groupRows = Math.max(1_000, Math.floor(ROW_GROUP_CELLS / Math.max(1, columns.length)));
    this.pending = columns.map((c) => new PendingColumn(c.type, this.groupRows));
  }

  async write(batch: ColumnBatch): Promise<void> {
    let at = 0;
    while (at < batch.length) {
      const take = Math.min(batch.length - at, this.groupRows - this.pendingRows);
      this.pending.forEach((column, j) => {
        column.setRange(this.pendingRows, batch.columns[j] ?? [], at, take);
      });
      this.pendingRows += take;
      at += take;
      if (this.pendingRows >= this.groupRows) await this.writeGroup();
    }
  }

  private async writeGroup(): Promise<void> {
    if (this.pendingRows === 0) return;
    const rows = this.pendingRows;
    const parquet = this.parquet;
    const groupStart = this.writer.offset;
    const chunks: ColumnChunk[] = [];
    for (let j = 0; j < this.columns.length; j++) {
      const column = this.columns[j] as Column;
      const path = this.paths[j] as SchemaTree[];
      // A copy, as `write` slices a group's values: the page indexes must not see the
      // buffers of the next group.
      const values = Array.prototype.slice.call((this.pending[j] as PendingColumn).data(rows));
      const result = writeColumn({
        writer: this.writer,
        column: {
          columnName: column.name,
          element: (path[path.length - 1] as SchemaTree).element,
          schemaPath: path.map((node) => node.element),
          codec: parquet.codec,
          compressors: parquet.compressors,
          stats: parquet.statistics,
          statisticsTruncateLength: parquet.statisticsTruncateLength,
          pageSize: PAGE_BYTES,
          columnIndex: false,
          offsetIndex: true,
          encoding: encodingOf(column.type),
        },
        // hyparquet-writer's types name its array kinds; a column's values are one of them.
        pageData: encodeNestedValues(path, values as never),
      });
      chunks.push(result.chunk);
      parquet.pendingIndexes.push(result);
      // A column chunk is encoded at once: the isolate's other work goes first.
      await yieldToOtherRequests();
    }
    for (const column of this.pending) column.reset();
    this.pendingRows = 0;
    let uncompressed = 0n;
    for (const chunk of chunks) uncompressed += chunk.meta_data?.total_uncompressed_size ?? 0n;
    parquet.num_rows += BigInt(rows);
    parquet.row_groups.push({
      columns: chunks,
      total_byte_size: uncompressed,
      num_rows: BigInt(rows),
      total_compressed_size: BigInt(this.writer.offset - groupStart),
    });
    await this.writer.flush();
  }

  heldBytes(): number {
    return this.writer.buffer.byteLength + this.pending.reduce((n, c) => n + c.bytes(), 0);
  }

  async finish(): Promise<void> {
    await this.writeGroup();
    // The footer (schema, row groups' metadata) and the closing magic, then out.
    await this.parquet.finish();
    await this.writer.flush();
  }
}

/**
 * A new file's encoder; a CSV file's header row is written at once.
 *
 * @param columns the dataset's columns (`exportColumns`).
 * @param sink where the bytes go.
 */
export async function newEncoder(
  format: ExportFormat,
  columns: readonly Column[],
  sink: ByteSink,
): Promise<FileEncoder> {
  if (format === "parquet") return new ParquetEncoder(columns, sink);
  const csv = new CsvEncoder(columns, sink);
  await csv.start();
  return csv;
}

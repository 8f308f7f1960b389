/**
 * The zstd of Parquet pages (src/parquet/zstd.ts) in workerd: pages longer than one frame,
 * incompressible ones included (which one frame of workerd's zstd cannot take), and a
 * Parquet file written and read back with it.
 */
import { parquetReadObjects } from "hyparquet";
import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { ZSTD_FRAME_BYTES, zstdCompress, zstdDecompress } from "../../src/parquet/zstd";

/** Bytes no compressor shrinks (xorshift32). */
function noise(length: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = 0x12345678;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    out[i] = state & 0xff;
  }
  return out;
}

describe("zstd for Parquet pages", () => {
  it("round-trips incompressible pages of several frames, bit for bit", () => {
    for (const length of [0, 1, ZSTD_FRAME_BYTES, ZSTD_FRAME_BYTES + 1, 300_000]) {
      const input = noise(length);
      const packed = zstdCompress(input);
      expect(zstdDecompress(packed, length)).toEqual(input);
    }
  });

  it("refuses a page that decodes to another length than its header says", () => {
    const packed = zstdCompress(noise(1000));
    expect(() => zstdDecompress(packed, 999)).toThrow();
  });

  it("writes a Parquet file of a 1 Hz day that hyparquet reads back bit for bit", async () => {
    const start = Date.UTC(2024, 0, 1);
    const time = Array.from({ length: 86_400 }, (_, i) => BigInt(start + i * 1000));
    const values = Float64Array.from(
      time,
      (_, i) => Math.sin(i / 600) * 50 + (noise(1)[0] ?? 0) / i,
    );
    const file = parquetWriteBuffer({
      codec: "ZSTD",
      compressors: { ZSTD: zstdCompress },
      columnData: [
        {
          name: "time",
          data: time,
          type: "TIMESTAMP",
          nullable: false,
          encoding: "DELTA_BINARY_PACKED",
        },
        {
          name: "value",
          data: values,
          type: "DOUBLE",
          nullable: false,
          encoding: "BYTE_STREAM_SPLIT",
        },
      ],
    });
    const rows = await parquetReadObjects({
      file,
      compressors: { ZSTD: zstdDecompress },
      utf8: false,
    });
    expect(rows.length).toBe(86_400);
    expect(Float64Array.from(rows, (r) => r.value as number)).toEqual(values);
    expect(rows.map((r) => (r.time as Date).getTime())).toEqual(time.map(Number));
  });
});

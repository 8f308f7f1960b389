/**
 * The signal archive's Parquet form (src/resources/signals/archive-format.ts) read back as
 * written: a column of several pages (a time column whose deltas change width around a
 * silence) included, whole and by window.
 */
import { describe, expect, it } from "vitest";
import { decodeArchive, encodeArchive } from "../../src/resources/signals/archive-format";

const S = 1_000;
const MIN = 60 * S;
const D0 = Date.UTC(2025, 3, 7, 10);

/** Instants every second over `[from, to)`, ms. */
const seconds = (from: number, to: number) =>
  Array.from({ length: (to - from) / S }, (_, i) => from + i * S);

describe("the archive's Parquet form", () => {
  it("reads back every sample of two hours at 1 Hz with silences in them, whole and by window", async () => {
    // 10:00-10:20, 10:40-11:20, 11:30-12:00: 5,400 samples (their time column is more
    // than one page; only the first page's 4,095 came back before).
    const ts = Float64Array.from([
      ...seconds(D0, D0 + 20 * MIN),
      ...seconds(D0 + 40 * MIN, D0 + 80 * MIN),
      ...seconds(D0 + 90 * MIN, D0 + 120 * MIN),
    ]);
    for (const values of [ts.map((t) => (t < D0 + 60 * MIN ? 1 : 0)), ts.map((t) => t / 7)]) {
      const file = await encodeArchive(ts, values);
      const back = await decodeArchive(file.slice().buffer);
      expect(back.ts.length).toBe(5_400);
      expect(Array.from(back.ts)).toEqual(Array.from(ts));
      expect(Array.from(back.values)).toEqual(Array.from(values));
      const window = await decodeArchive(file.slice().buffer, D0 + 70 * MIN, D0 + 100 * MIN);
      const inside = Array.from(ts).filter((t) => t >= D0 + 70 * MIN && t < D0 + 100 * MIN);
      expect(Array.from(window.ts)).toEqual(inside);
    }
  });
});

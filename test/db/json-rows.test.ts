import { describe, expect, it } from "vitest";
import { jsonChunks } from "../../src/db/json-rows";

describe("jsonChunks", () => {
  it("keeps every row, in order, in chunks under the byte limit (UTF-8)", () => {
    const rows = Array.from({ length: 50 }, (_, i) => [i, "é".repeat(i)]);
    const chunks = jsonChunks(rows, 200);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      if ((JSON.parse(c) as unknown[]).length > 1) {
        expect(new TextEncoder().encode(c).length).toBeLessThanOrEqual(200);
      }
    }
    expect(chunks.flatMap((c) => JSON.parse(c) as unknown[])).toEqual(rows);
  });

  it("gives one chunk to a typical create and none to no rows", () => {
    expect(jsonChunks(Array.from({ length: 1000 }, (_, i) => [i, `item ${i}`]))).toHaveLength(1);
    expect(jsonChunks([])).toEqual([]);
  });
});

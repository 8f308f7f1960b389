/**
 * The write-behind interval grows on a busy machine and falls back on a quiet one, so a
 * busy plant pays a flush's fixed cost less often while D1 stays at most
 * `MAX_WRITE_BEHIND_MS` behind without a reader (readers pass the barrier).
 */
import { describe, expect, it } from "vitest";
import {
  BUSY_WRITES_PER_SECOND,
  MAX_WRITE_BEHIND_MS,
  nextWriteBehind,
  WRITE_BEHIND_MS,
} from "../../src/realtime/machine-lifecycle";

describe("nextWriteBehind", () => {
  it("doubles while the machine writes at least the busy rate, up to the longest interval", () => {
    const busyWrites = (ms: number) => Math.ceil((BUSY_WRITES_PER_SECOND * ms) / 1_000);
    let interval = WRITE_BEHIND_MS;
    const seen: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      interval = nextWriteBehind(interval, busyWrites(interval));
      seen.push(interval);
    }
    expect(seen).toEqual([4_000, 8_000, 16_000, 16_000, 16_000, 16_000]);
    expect(Math.max(...seen)).toBe(MAX_WRITE_BEHIND_MS);
  });

  it("falls back to the quiet interval as soon as the machine writes less", () => {
    expect(nextWriteBehind(MAX_WRITE_BEHIND_MS, 1)).toBe(WRITE_BEHIND_MS);
    expect(nextWriteBehind(WRITE_BEHIND_MS, 0)).toBe(WRITE_BEHIND_MS);
  });
});

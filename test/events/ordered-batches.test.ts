/**
 * OrderedBatches: one call in flight, the items pushed meanwhile together in the next
 * call, in push order; a failed call is reported and the next batch still goes.
 */
import { describe, expect, it } from "vitest";
import { MAX_BATCH, OrderedBatches } from "../../src/events/ordered-batches";

describe("OrderedBatches", () => {
  it("sends one batch at a time, in push order, with what queued meanwhile", async () => {
    const calls: number[][] = [];
    let release: () => void = () => undefined;
    const batches = new OrderedBatches<number>(
      (batch) => {
        calls.push(batch);
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      },
      () => undefined,
    );
    void batches.push(1); // goes at once
    for (let i = 2; i <= 6; i += 1) void batches.push(i); // wait for the first call
    expect(calls).toEqual([[1]]);
    expect(batches.pending).toBe(5);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(calls).toEqual([[1], [2, 3, 4, 5, 6]]);
    const done = batches.push(7);
    release();
    await new Promise((r) => setTimeout(r, 0));
    release();
    await done;
    expect(calls).toEqual([[1], [2, 3, 4, 5, 6], [7]]);
  });

  it("reports a failed batch, goes on with the next, and never rejects", async () => {
    const sent: number[][] = [];
    const failed: number[][] = [];
    const batches = new OrderedBatches<number>(
      async (batch) => {
        if (batch.includes(1)) throw new Error("stream down");
        sent.push(batch);
      },
      (_error, batch) => failed.push(batch),
    );
    const first = batches.push(1);
    const second = batches.push(2);
    await expect(first).resolves.toBeUndefined();
    await second;
    expect(failed).toEqual([[1]]);
    expect(sent).toEqual([[2]]);
  });

  it(`sends at most ${MAX_BATCH} items a call`, async () => {
    const sizes: number[] = [];
    let gate: Promise<void> = new Promise(() => undefined);
    let open: () => void = () => undefined;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const batches = new OrderedBatches<number>(
      async (batch) => {
        sizes.push(batch.length);
        await gate;
      },
      () => undefined,
    );
    let last: Promise<void> = Promise.resolve();
    for (let i = 0; i < 2 * MAX_BATCH + 2; i += 1) last = batches.push(i);
    open();
    await last;
    expect(sizes).toEqual([1, MAX_BATCH, MAX_BATCH, 1]);
  });
});

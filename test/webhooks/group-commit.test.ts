/**
 * The group commit behind the deliverer's D1 writes (src/webhooks/group-commit.ts):
 * who shares a call, who waits for what, and that the first call waits for no
 * timer (a timer there held every delivery record of a busy local deliverer for
 * up to 1.7 s).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { GroupCommit } from "../../src/webhooks/group-commit";

/** A `run` whose calls are recorded and end only when the test says so. */
function controlledRun() {
  const calls: string[][] = [];
  const endings: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  const run = (items: string[]) => {
    calls.push([...items]);
    return new Promise<void>((resolve, reject) => endings.push({ resolve, reject }));
  };
  return { calls, endings, run };
}

/** Lets every pending microtask (and those they queue, a few levels deep) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
}

afterEach(() => {
  vi.useRealTimers();
});

describe("GroupCommit", () => {
  it("sends a submission made while nothing is in flight at once, without waiting for a timer", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "setInterval", "setImmediate"] });
    const { calls, endings, run } = controlledRun();
    const commit = new GroupCommit<string>(run);
    const done = commit.submit(["a1", "a2"]);
    await settle();
    expect(calls).toEqual([["a1", "a2"]]);
    endings[0]?.resolve();
    await expect(done).resolves.toBeUndefined();
  });

  it("puts submissions of the same turn in one call, in order", async () => {
    const { calls, endings, run } = controlledRun();
    const commit = new GroupCommit<string>(run);
    const a = commit.submit(["a"]);
    const b = commit.submit(["b1", "b2"]);
    await settle();
    expect(calls).toEqual([["a", "b1", "b2"]]);
    endings[0]?.resolve();
    await Promise.all([a, b]);
  });

  it("sends what was submitted during a call together in the next one, once it has ended", async () => {
    const { calls, endings, run } = controlledRun();
    const commit = new GroupCommit<string>(run);
    let aDone = false;
    const a = commit.submit(["a"]).then(() => {
      aDone = true;
    });
    await settle();
    const b = commit.submit(["b"]);
    const c = commit.submit(["c"]);
    await settle();
    // The second call waits for the first: one write in flight at a time.
    expect(calls).toEqual([["a"]]);
    endings[0]?.resolve();
    await a;
    expect(aDone).toBe(true);
    await settle();
    expect(calls).toEqual([["a"], ["b", "c"]]);
    endings[1]?.resolve();
    await Promise.all([b, c]);
  });

  it("fails only the submissions of the call that failed", async () => {
    const { endings, run } = controlledRun();
    const commit = new GroupCommit<string>(run);
    const a = commit.submit(["a"]);
    await settle();
    const b = commit.submit(["b"]);
    const failure = new Error("D1 is down");
    endings[0]?.reject(failure);
    await expect(a).rejects.toBe(failure);
    await settle();
    endings[1]?.resolve();
    await expect(b).resolves.toBeUndefined();
  });

  it("keeps a call within maxItems without splitting a submission", async () => {
    const { calls, endings, run } = controlledRun();
    const commit = new GroupCommit<string>(run, 3);
    const all = [
      commit.submit(["a1", "a2"]),
      commit.submit(["b1", "b2"]),
      commit.submit(["c1", "c2", "c3", "c4"]),
    ];
    for (let call = 0; call < 3; call += 1) {
      await settle();
      endings[call]?.resolve();
    }
    await Promise.all(all);
    expect(calls).toEqual([
      ["a1", "a2"],
      ["b1", "b2"],
      ["c1", "c2", "c3", "c4"],
    ]);
  });

  it("makes no call for an empty submission", async () => {
    const { calls, run } = controlledRun();
    await new GroupCommit<string>(run).submit([]);
    expect(calls).toEqual([]);
  });
});

/**
 * The replay's wait between two passes (scripts/lib/pause.ts): one long-lived signal waited
 * on once a minute for hours must not collect listeners (Node warned "11 abort listeners"
 * after eleven minutes of `npm start` when each wait left its own).
 */
import { describe, expect, it } from "vitest";
import { pause } from "../../scripts/lib/pause";

/** A real AbortSignal whose abort listeners are counted as they are added and removed. */
function countedSignal() {
  const controller = new AbortController();
  const signal = controller.signal;
  const live = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...args: Parameters<typeof add>) => {
    if (args[0] === "abort") live.add(args[1]);
    add(...args);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    if (args[0] === "abort") live.delete(args[1]);
    remove(...args);
  }) as typeof signal.removeEventListener;
  return { controller, signal, live };
}

describe("pause", () => {
  it("leaves no abort listener behind after many waits on one signal (an hour of ticks)", async () => {
    const { signal, live } = countedSignal();
    for (let tick = 0; tick < 60; tick++) {
      expect(await pause(0, signal)).toBe(true);
    }
    expect(live.size).toBe(0);
  });

  it("ends early when the signal aborts, and at once when it already has", async () => {
    const { controller, signal } = countedSignal();
    const started = Date.now();
    const waiting = pause(60_000, signal);
    controller.abort();
    expect(await waiting).toBe(false);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await pause(60_000, signal)).toBe(false);
  });
});

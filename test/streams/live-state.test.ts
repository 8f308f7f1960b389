/**
 * What a machine stream keeps for its live figures survives an eviction (its storage) while
 * the instance is small, a realtime flush's log changes apply to it in place, and only the
 * events that can move a figure ask for a recomputation.
 */
import { describe, expect, it } from "vitest";
import { LiveState, MAX_STORED_SPANS } from "../../src/streams/live";
import type { InstanceInputs, LiveLogSpan } from "../../src/streams/live-inputs";

function memoryStorage() {
  let text: string | null = null;
  return {
    get: () => text,
    set: (value: string | null) => {
      text = value;
    },
  };
}

const log = (id: string, start: number): LiveLogSpan => ({
  id,
  start,
  end: start + 60_000,
  type: "total",
  count: 10,
  nominalSpeed: 10,
});

function inputs(logs: LiveLogSpan[]): InstanceInputs {
  return {
    instanceId: 7,
    start: 0,
    end: 8 * 3_600_000,
    stops: [],
    logs: new Map(logs.map((l) => [l.id, l])),
    loadedAt: 1,
  };
}

describe("LiveState", () => {
  it("gives a new object over the same storage the inputs and the changes told since", () => {
    const storage = memoryStorage();
    const state = new LiveState(storage);
    state.inputs = inputs([log("a", 0)]);
    state.tell({ instanceId: 7, upserted: [{ ...log("b", 60_000), count: 5 }], removed: ["a"] });
    const woken = new LiveState(storage);
    expect([...(woken.inputs?.logs.values() ?? [])]).toEqual([{ ...log("b", 60_000), count: 5 }]);
    // A change for another instance: forgotten, read again at the next tick.
    woken.tell({ instanceId: 8, upserted: [], removed: [] });
    expect(new LiveState(storage).inputs).toBeNull();
  });

  it("does not store an instance of more than MAX_STORED_SPANS logs", () => {
    const storage = memoryStorage();
    const state = new LiveState(storage);
    const many = Array.from({ length: MAX_STORED_SPANS + 1 }, (_, i) => log(`l${i}`, i));
    state.inputs = inputs(many);
    expect(state.inputs?.logs.size).toBe(MAX_STORED_SPANS + 1);
    expect(storage.get()).toBeNull();
  });

  it("reads the stops again for a stop event that can touch the held instance, not for one of history", () => {
    const H = 3_600_000;
    const base = new Date(Date.UTC(2026, 0, 5)).getTime();
    const state = new LiveState(memoryStorage());
    state.inputs = {
      ...inputs([]),
      start: base,
      end: base + 8 * H,
      stops: [
        {
          start: base + H,
          end: null,
          isProgrammed: false,
          isIncludedInAvailability: true,
          isClassified: false,
        },
      ],
    };
    const stop = (start: number, end: number | null) => ({
      stop: {
        id: 1,
        startTime: new Date(start).toISOString(),
        endTime: end === null ? null : new Date(end).toISOString(),
        isProgrammed: false,
      },
    });
    const touches = (
      type: "stop.started" | "stop.ended" | "stop.deleted" | "stop.updated",
      data: unknown,
    ) => {
      state.stale = false;
      return { dirty: state.note({ type, data }), stale: state.stale };
    };
    // History (a backfill's detected stops): nothing to read, nothing to recompute.
    expect(touches("stop.ended", stop(base - 30 * 24 * H, base - 30 * 24 * H + 600_000))).toEqual({
      dirty: false,
      stale: false,
    });
    expect(touches("stop.deleted", stop(base - 2 * H, base - H))).toEqual({
      dirty: false,
      stale: false,
    });
    // Inside the instance, an open stop of it that ends (wherever), an update, a classification.
    expect(touches("stop.started", stop(base + 2 * H, null))).toEqual({ dirty: true, stale: true });
    expect(touches("stop.ended", stop(base - H, base + 30 * 60_000))).toEqual({
      dirty: true,
      stale: true,
    });
    expect(touches("stop.ended", stop(base + H, base + 9 * H))).toEqual({
      dirty: true,
      stale: true,
    });
    expect(touches("stop.updated", stop(base - 30 * 24 * H, base - 29 * 24 * H))).toEqual({
      dirty: true,
      stale: true,
    });
    expect(touches("stop.ended", stop(base - 9 * H, base - 8 * H))).toEqual({
      dirty: false,
      stale: false,
    });
    // Nothing held yet: every stop event counts.
    const fresh = new LiveState(memoryStorage());
    expect(fresh.note({ type: "stop.ended", data: stop(base - 9 * H, base - 8 * H) })).toBe(true);
  });

  it("recomputes after a stop's change but not after its classification, which no figure uses", () => {
    const state = new LiveState(memoryStorage());
    state.inputs = inputs([log("a", 0)]);
    for (const type of ["stop.classified", "stop.unclassified"] as const) {
      expect(state.note({ type, data: null })).toBe(false);
      expect(state.stale).toBe(false);
    }
    for (const type of ["stop.started", "stop.ended", "stop.updated", "stop.deleted"] as const) {
      state.stale = false;
      expect(state.note({ type, data: null })).toBe(true);
      expect(state.stale).toBe(true);
    }
  });
});

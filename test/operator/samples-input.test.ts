/**
 * The samples body of `POST /operator/v1/signals/{public_id}/samples`: its one-pass check of
 * the instants refuses exactly what the per-element zod schema it replaced refused, reads
 * every accepted instant as `Date.parse` does, and a 422 names the field and the index.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseDateTime, SamplesBody } from "../../src/operator/signals/samples-input";
import { MAX_SAMPLE_AHEAD_MS } from "../../src/resources/signals/sample-bounds";
import { createCompany, createMachines, createSignal, operator } from "../harness";

/**
 * The per-element schema the one-pass check stands for: zod's date-time (an offset, or
 * none, read as UTC, as every other body's date-time), then `Date.parse`.
 */
const before = z.iso.datetime({ offset: true, local: true }).transform((s, ctx) => {
  const ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(s) ? s : `${s}Z`);
  if (!Number.isFinite(ms) || ms < 0) {
    ctx.addIssue({ code: "custom", message: "before the epoch" });
    return z.NEVER;
  }
  return ms;
});

/** Deterministic pseudo-random integers (a linear congruential generator). */
function random(seed: number) {
  let state = seed;
  return (below: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % below;
  };
}

/** Date-time-like strings: valid ones, edge cases and near misses. */
function candidates(): string[] {
  const fixed = [
    "2024-01-01T00:00:00Z",
    "2024-01-01T00:00:00.000Z",
    "2024-01-01T00:00:00.5Z",
    "2024-01-01T00:00:00.123456Z",
    "2024-02-29T23:59:59.999Z",
    "2023-02-29T00:00:00Z",
    "2024-04-31T00:00:00Z",
    "2000-02-29T12:00:00Z",
    "1900-02-29T12:00:00Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59.999Z",
    "1970-01-01T00:30:00+01:00",
    "1970-01-01T00:30:00-01:00",
    "0050-06-01T00:00:00Z",
    "0099-12-31T23:59:59.999Z",
    "9999-12-31T23:59:59.999Z",
    "2024-06-01T12:00:00+05:30",
    "2024-06-01T12:00:00+0530",
    "2024-06-01T12:00:00",
    "2024-06-01T12:00Z",
    "2024-06-01 12:00:00Z",
    "2024-06-01T24:00:00Z",
    "2024-06-01T12:60:00Z",
    "2024-06-01T12:00:00.Z",
    "2024-06-01t12:00:00z",
    "2024-13-01T00:00:00Z",
    "",
    "not a date",
  ];
  const next = random(7);
  const pad = (n: number, width: number) => String(n).padStart(width, "0");
  for (let i = 0; i < 2_000; i++) {
    const ms = next(2 ** 30) * 4_096 - 2 ** 40; // 1935 to 2039
    const iso = new Date(ms).toISOString();
    fixed.push(
      iso,
      iso.replace(".000Z", "Z").replace(/\.(\d{3})Z$/, (_, f) => `.${f}Z`),
    );
    fixed.push(`${iso.slice(0, 19)}${next(2) ? "+" : "-"}${pad(next(24), 2)}:${pad(next(60), 2)}`);
    fixed.push(`${iso.slice(0, 20)}${pad(next(1_000_000), 6)}Z`);
  }
  // Around the bound: a second, a minute and a few minutes from now.
  for (const ahead of [1_000, 60_000, 4 * 60_000, 6 * 60_000, 3_600_000]) {
    fixed.push(new Date(Date.now() + ahead).toISOString());
  }
  return fixed;
}

describe("the samples body", () => {
  it("reads every instant as zod's date-time and Date.parse do (no offset = UTC), refusing the same and the future", () => {
    // Candidates after the bound (2039, 9999) are refused now; a minute's margin either side
    // of the bound keeps the clock's move during the loop out of the comparison.
    const latest = Date.now() + MAX_SAMPLE_AHEAD_MS;
    for (const s of candidates()) {
      const old = before.safeParse(s);
      if (old.success && Math.abs(old.data - latest) < 60_000) continue;
      const now = SamplesBody.safeParse({ timestamps: [s], values: [1] });
      expect({ s, ok: now.success }).toEqual({
        s,
        ok: old.success && old.data <= latest,
      });
      if (old.success && now.success) {
        expect(now.data.ts).toEqual([old.data]);
        expect(parseDateTime(s)).toBe(old.data);
      }
    }
  });

  it("parses both forms to parallel arrays in the body's order", () => {
    const a = SamplesBody.parse({
      samples: [
        { timestamp: "2024-01-01T00:00:01Z", value: 2 },
        { timestamp: "2024-01-01T01:00:00+01:00", value: -0 },
      ],
    });
    expect(a).toEqual({
      ts: [Date.UTC(2024, 0, 1, 0, 0, 1), Date.UTC(2024, 0, 1)],
      values: [2, -0],
    });
    expect(Object.is(a.values[1], -0)).toBe(true);
    const b = SamplesBody.parse({ timestamps: ["2024-01-01T00:00:00.250Z"], values: [1.5] });
    expect(b).toEqual({ ts: [Date.UTC(2024, 0, 1) + 250], values: [1.5] });
  });

  it("answers 422 naming the field and the index of every bad instant", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine) throw new Error("no machine");
    const publicId = await createSignal(machine.id, { name: "power" });
    const parallel = await operator("POST", `/signals/${publicId}/samples`, {
      timestamps: ["2024-01-01T00:00:00Z", "2024-01-01 00:00:01Z", "1969-12-31T23:59:59Z"],
      values: [1, 2, 3],
    });
    expect(parallel.status).toBe(422);
    expect(await parallel.json()).toEqual({
      detail: [
        { loc: ["body", "timestamps", 1], msg: "Invalid ISO datetime", type: "value_error.format" },
        {
          loc: ["body", "timestamps", 2],
          msg: "Must be a date-time on or after 1970-01-01T00:00:00Z (on 1970-01-01 itself: `Z`, no offset, or an offset of zero or less)",
          type: "value_error",
        },
      ],
    });
    const objects = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [
        { timestamp: "2024-01-01T00:00:00Z", value: 1 },
        { timestamp: "2024-02-30T00:00:00Z", value: 2 },
      ],
    });
    expect(objects.status).toBe(422);
    expect(await objects.json()).toEqual({
      detail: [
        {
          loc: ["body", "samples", 1, "timestamp"],
          msg: "Invalid ISO datetime",
          type: "value_error.format",
        },
      ],
    });
  });

  it("answers 422 naming every sample after the server's clock plus 5 minutes, and stores none of the call", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine) throw new Error("no machine");
    const publicId = await createSignal(machine.id, { name: "count", kind: "counter" });
    const now = Date.now();
    const soon = new Date(now + 60_000).toISOString();
    const res = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [
        { timestamp: "9999-12-31T23:59:59Z", value: 0 },
        { timestamp: "2100-01-01T07:00:00Z", value: 0 },
        { timestamp: soon, value: 1 },
        { timestamp: new Date(now + 10 * 60_000).toISOString(), value: 0 },
      ],
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: unknown[]; msg: string; type: string }[] };
    expect(body.detail.map((d) => d.loc)).toEqual([
      ["body", "samples", 0, "timestamp"],
      ["body", "samples", 1, "timestamp"],
      ["body", "samples", 3, "timestamp"],
    ]);
    for (const d of body.detail) {
      expect(d.type).toBe("value_error");
      expect(d.msg).toMatch(/^Must be at most 5 minutes after the server's clock \(at most \d{4}-/);
    }
    const parallel = await operator("POST", `/signals/${publicId}/samples`, {
      timestamps: [soon, "2150-06-01T00:00:00Z"],
      values: [1, 0],
    });
    expect(parallel.status).toBe(422);
    expect(((await parallel.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      "body",
      "timestamps",
      1,
    ]);
    // A sample a minute ahead alone is within the bound.
    const ok = await operator("POST", `/signals/${publicId}/samples`, {
      timestamps: [soon],
      values: [1],
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ accepted: 1 });
  });
});

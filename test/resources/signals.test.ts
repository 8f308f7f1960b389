import { describe, expect, it } from "vitest";
import type { Api, SignalPoint } from "../fixtures/api-types";
import {
  api,
  createCompany,
  createKey,
  createMachines,
  createSignal,
  ingest,
  operator,
  operatorJson,
  type TestCompany,
} from "../harness";

type SignalData = Api["SignalData"];
type Fn = SignalData["agg_function"];
type Unit = SignalData["agg_unit"];
type Sample = readonly [number, number];

const FUNCTIONS: readonly Fn[] = ["avg", "max", "min", "sum", "count"];
const UNIT_MS: Record<Unit, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const HOUR = 3_600_000;
const MINUTE = 60_000;

type Point = SignalPoint;

/**
 * The reference: samples with from <= t < to, bucket = floor(t / width) * width,
 * empty buckets left out, ascending.
 */
function reference(samples: readonly Sample[], from: number, to: number, width: number, fn: Fn) {
  const buckets = new Map<number, number[]>();
  for (const [t, v] of samples) {
    if (t < from || t >= to) continue;
    const b = Math.floor(t / width) * width;
    const list = buckets.get(b) ?? [];
    list.push(v);
    buckets.set(b, list);
  }
  return [...buckets.keys()]
    .sort((a, b) => a - b)
    .map((b) => {
      const vs = buckets.get(b) ?? [];
      const sum = vs.reduce((a, v) => a + v, 0);
      const value =
        fn === "avg"
          ? sum / vs.length
          : fn === "sum"
            ? sum
            : fn === "count"
              ? vs.length
              : fn === "min"
                ? Math.min(...vs)
                : Math.max(...vs);
      return { timestamp: new Date(b).toISOString(), value };
    });
}

/** Asserts equal timestamps and values equal to 1e-9 (relative for large sums). */
function expectPoints(
  actual: readonly Point[] | undefined,
  expected: readonly Point[],
  label: string,
) {
  expect(actual, label).toBeDefined();
  const got = actual ?? [];
  expect(
    got.map((p) => p.timestamp),
    label,
  ).toEqual(expected.map((p) => p.timestamp));
  got.forEach((p, i) => {
    const want = expected[i]?.value ?? Number.NaN;
    const tolerance = 1e-9 * Math.max(1, Math.abs(want));
    if (!(Math.abs(p.value - want) <= tolerance)) {
      throw new Error(`${label}: point ${p.timestamp} is ${p.value}, expected ${want}`);
    }
  });
}

interface Fixture {
  co: TestCompany;
  machineId: number;
  machineUuid: string;
  publicId: string;
}

/** A company with one machine and one signal. */
async function setup(signalName = "power"): Promise<Fixture> {
  const co = await createCompany();
  const [machine] = await createMachines(co.id, [{ name: "Press" }]);
  if (!machine?.uuid) throw new Error("no machine");
  const publicId = await createSignal(machine.id, { name: signalName });
  return { co, machineId: machine.id, machineUuid: machine.uuid, publicId };
}

function dataPath(f: Fixture, params: Record<string, string | number>): string {
  const qs = new URLSearchParams(
    Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string]),
  );
  return `/v1/machines/${f.machineUuid}/signals/${f.publicId}?${qs}`;
}

async function readData(f: Fixture, params: Record<string, string | number>): Promise<SignalData> {
  const res = await api(f.co.key, dataPath(f, params));
  if (res.status !== 200) throw new Error(`${res.status}: ${await res.text()}`);
  return (await res.json()) as SignalData;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Irregular samples about every 5 s for 30 hours from 2024-03-09T20:00:00.250Z (across two UTC
 * midnights), with a gap from 10 h to 13.5 h after the start and some negative values, so that
 * empty buckets, raw edges and both rollup levels all appear.
 */
function irregularSamples(): Sample[] {
  const base = Date.UTC(2024, 2, 9, 20, 0, 0, 250);
  const out: Sample[] = [];
  for (let k = 0; k < 30 * 720; k += 1) {
    const t = base + k * 5000 + (k % 7) * 113;
    const offset = t - base;
    if (offset >= 10 * HOUR && offset < 13.5 * HOUR) continue;
    const value =
      50 + 30 * Math.sin(k / 37) + ((k * 7919) % 1000) / 1000 - 0.5 - (k % 97 === 0 ? 200 : 0);
    out.push([t, value]);
  }
  return out;
}

describe("GET /v1/machines/{machine_uuid}/signals", () => {
  it("lists listed signals under `signals`, by name then display name, in the asked language", async () => {
    const co = await createCompany();
    const [machine] = await createMachines(co.id, [{ name: "Press" }]);
    if (!machine?.uuid) throw new Error("no machine");
    const created = await operatorJson<{ publicId: string; name: string; displayName: string }[]>(
      "POST",
      `/machines/${machine.id}/signals`,
      [
        {
          name: "temperature",
          displayName: "Oil temperature",
          kind: "analog",
          description: { en: "Oil", es: "Aceite" },
        },
        { name: "current", displayName: "Motor B", kind: "analog", description: { en: "Motor" } },
        { name: "current", displayName: "Motor A", kind: "analog" },
        { name: "hidden", displayName: "No kind", kind: null },
        { name: "gone", displayName: "Deleted", kind: "analog" },
      ],
    );
    const gone = created.find((s) => s.name === "gone");
    if (!gone) throw new Error("no signal");
    expect((await operator("DELETE", `/signals/${gone.publicId}`)).status).toBe(204);

    const en = await api(co.key, `/v1/machines/${machine.uuid}/signals`);
    expect(en.status).toBe(200);
    const body = (await en.json()) as {
      signals: {
        public_id: string;
        name: string;
        display_name: string;
        description: string | null;
      }[];
    };
    expect(Object.keys(body)).toEqual(["signals"]);
    expect(body.signals.map((s) => [s.name, s.display_name, s.description])).toEqual([
      ["current", "Motor A", null],
      ["current", "Motor B", "Motor"],
      ["temperature", "Oil temperature", "Oil"],
    ]);
    const byDisplay = new Map(created.map((s) => [s.displayName, s.publicId]));
    expect(body.signals.map((s) => s.public_id)).toEqual([
      byDisplay.get("Motor A"),
      byDisplay.get("Motor B"),
      byDisplay.get("Oil temperature"),
    ]);

    const es = await api(co.key, `/v1/machines/${machine.uuid}/signals?language=es`);
    const esBody = (await es.json()) as { signals: { description: string | null }[] };
    // Spanish where there is a translation, English otherwise.
    expect(esBody.signals.map((s) => s.description)).toEqual([null, "Motor", "Aceite"]);

    const bad = await api(co.key, `/v1/machines/${machine.uuid}/signals?language=fr`);
    expect(bad.status).toBe(422);
    const badBody = (await bad.json()) as { detail: { loc: unknown[] }[] };
    expect(badBody.detail[0]?.loc).toEqual(["query", "language"]);
  });

  it("answers 404 for an unknown or foreign machine, 422 for a malformed uuid, 403 without the scope", async () => {
    const a = await setup();
    const b = await createCompany();
    const unknown = await api(a.co.key, `/v1/machines/${crypto.randomUUID()}/signals`);
    expect(unknown.status).toBe(404);
    expect(typeof ((await unknown.json()) as { detail: unknown }).detail).toBe("string");

    const foreign = await api(b.key, `/v1/machines/${a.machineUuid}/signals`);
    expect(foreign.status).toBe(404);
    expect(typeof ((await foreign.json()) as { detail: unknown }).detail).toBe("string");

    const malformed = await api(a.co.key, "/v1/machines/not-a-uuid/signals");
    expect(malformed.status).toBe(422);
    const body = (await malformed.json()) as {
      detail: { loc: unknown[]; msg: string; type: string }[];
    };
    expect(body.detail).toHaveLength(1);
    expect(body.detail[0]?.loc).toEqual(["path", "machine_uuid"]);
    expect(typeof body.detail[0]?.msg).toBe("string");
    expect(typeof body.detail[0]?.type).toBe("string");

    const key = await createKey(a.co.id, ["machines.read"]);
    const forbidden = await api(key, `/v1/machines/${a.machineUuid}/signals`);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({
      detail: "Not enough permissions. Missing scope: signals.read",
    });
  });
});

describe("GET /v1/machines/{machine_uuid}/signals/{public_id}: aggregation", () => {
  it("matches a reference for every function, unit and period over a window aligned to nothing", async () => {
    const f = await setup();
    const samples = irregularSamples();
    await ingest(f.publicId, samples);
    const base = Date.UTC(2024, 2, 9, 20, 0, 0, 250);
    // Starts and ends mid-second, mid-minute and mid-hour: raw edges, minute and hour rollups.
    const from = base + 17 * MINUTE + 23_250;
    const to = base + 29 * HOUR + 41 * MINUTE + 9_200;
    const shapes: [Unit, number][] = [
      ["s", 30],
      ["s", 45],
      ["m", 1],
      ["m", 7],
      ["m", 90],
      ["h", 1],
      ["h", 2],
      ["h", 5],
      ["d", 1],
    ];
    for (const [unit, period] of shapes) {
      const width = UNIT_MS[unit] * period;
      for (const fn of FUNCTIONS) {
        const body = await readData(f, {
          start_time: iso(from),
          end_time: iso(to),
          agg_unit: unit,
          agg_period: period,
          agg_function: fn,
        });
        const label = `${fn} ${period}${unit}`;
        expect(body.data, label).toBeDefined();
        expect(body.timestamps, label).toBeUndefined();
        expectPoints(body.data, reference(samples, from, to, width, fn), label);
        // Buckets start at multiples of the width since the epoch, ascending.
        const starts = (body.data ?? []).map((p) => Date.parse(p.timestamp));
        for (const s of starts) expect(s % width, label).toBe(0);
        expect(
          [...starts].sort((x, y) => x - y),
          label,
        ).toEqual(starts);
      }
    }
  });

  it("aligns buckets to epoch multiples: 7 minutes = 420 s, a day = a UTC day", async () => {
    const f = await setup();
    // One sample per minute from 2024-05-01T22:00:30Z for 4 hours (crosses UTC midnight).
    const start = Date.UTC(2024, 4, 1, 22, 0, 30);
    const samples: Sample[] = Array.from({ length: 240 }, (_, i) => [start + i * MINUTE, i]);
    await ingest(f.publicId, samples);
    const window = { start_time: "2024-05-01T21:00:00Z", end_time: "2024-05-02T03:00:00Z" };

    const seven = await readData(f, {
      ...window,
      agg_unit: "m",
      agg_period: 7,
      agg_function: "count",
    });
    const first = Date.parse(seven.data?.[0]?.timestamp ?? "");
    // The first sample at 22:00:30 falls in the 420 s bucket that contains it, not one starting at 22:00.
    expect(first).toBe(Math.floor(start / 420_000) * 420_000);
    expect(first % 420_000).toBe(0);
    expect(first).not.toBe(Date.UTC(2024, 4, 1, 22, 0));
    expect((seven.data ?? []).reduce((a, p) => a + p.value, 0)).toBe(240);

    const day = await readData(f, { ...window, agg_unit: "d", agg_function: "count" });
    expect(day.data).toEqual([
      { timestamp: "2024-05-01T00:00:00.000Z", value: 120 },
      { timestamp: "2024-05-02T00:00:00.000Z", value: 120 },
    ]);
  });

  it("counts start_time <= t < end_time, at 1 s and on rollup-served hours", async () => {
    const f = await setup();
    const h0 = Date.UTC(2024, 0, 15, 8);
    // One sample every 10 s for 3 hours, plus one exactly at h0 + 3 h.
    const samples: Sample[] = Array.from({ length: 3 * 360 + 1 }, (_, i) => [
      h0 + i * 10_000,
      i + 0.5,
    ]);
    await ingest(f.publicId, samples);

    // Raw edges at 1 s: the sample at start_time counts, the one at end_time does not.
    const raw = await readData(f, {
      start_time: iso(h0 + 20_000),
      end_time: iso(h0 + 60_000),
      agg_function: "sum",
    });
    expect(raw.data).toEqual([
      { timestamp: iso(h0 + 20_000), value: 2.5 },
      { timestamp: iso(h0 + 30_000), value: 3.5 },
      { timestamp: iso(h0 + 40_000), value: 4.5 },
      { timestamp: iso(h0 + 50_000), value: 5.5 },
    ]);

    // Whole hours come from the hour rollups; the sample exactly at end_time is excluded.
    const hours = await readData(f, {
      start_time: iso(h0),
      end_time: iso(h0 + 3 * HOUR),
      agg_unit: "h",
      agg_function: "count",
    });
    expect(hours.data?.map((p) => p.value)).toEqual([360, 360, 360]);
    const withEnd = await readData(f, {
      start_time: iso(h0),
      end_time: iso(h0 + 3 * HOUR + 1),
      agg_unit: "h",
      agg_function: "count",
    });
    expect(withEnd.data?.map((p) => p.value)).toEqual([360, 360, 360, 1]);
    // Starting 1 ms late drops the sample at h0 only.
    const late = await readData(f, {
      start_time: iso(h0 + 1),
      end_time: iso(h0 + 3 * HOUR),
      agg_unit: "h",
      agg_function: "count",
    });
    expect(late.data?.map((p) => p.value)).toEqual([359, 360, 360]);
  });

  it("answers with the head fields and defaults, and transposes into parallel arrays", async () => {
    const f = await setup("energy");
    const t0 = Date.UTC(2024, 6, 1, 12);
    const samples: Sample[] = Array.from({ length: 600 }, (_, i) => [
      t0 + i * 1000 + 500,
      (i % 13) * 1.25,
    ]);
    await ingest(f.publicId, samples);
    const window = { start_time: iso(t0), end_time: iso(t0 + 10 * MINUTE) };

    const defaults = await readData(f, window);
    expect(defaults).toMatchObject({
      machine_uuid: f.machineUuid,
      public_id: f.publicId,
      name: "energy",
      agg_unit: "s",
      agg_period: 1,
      agg_function: "avg",
    });
    expectPoints(defaults.data, reference(samples, t0, t0 + 10 * MINUTE, 1000, "avg"), "defaults");

    const params = { ...window, agg_unit: "s", agg_period: 20, agg_function: "max" };
    const plain = await readData(f, { ...params, transpose: "false" });
    const transposed = await readData(f, { ...params, transpose: "true" });
    expect(plain.data).toHaveLength(30);
    expect(plain.timestamps).toBeUndefined();
    expect(transposed.data).toBeUndefined();
    expect(transposed.timestamps).toEqual(plain.data?.map((p) => p.timestamp));
    expect(transposed.values).toEqual(plain.data?.map((p) => p.value));
    expect(transposed).toMatchObject({ agg_unit: "s", agg_period: 20, agg_function: "max" });

    // What FastAPI accepts, in any case: Python's requests sends `True`.
    for (const spelling of ["True", "TRUE", "1", "yes", "On", "t", "Y"]) {
      const res = await readData(f, { ...params, transpose: spelling });
      expect(res.values, spelling).toEqual(transposed.values);
      expect(res.data, spelling).toBeUndefined();
    }
    for (const spelling of ["False", "0", "NO", "off", "f", "n"]) {
      const res = await readData(f, { ...params, transpose: spelling });
      expect(res.data, spelling).toEqual(plain.data);
      expect(res.timestamps, spelling).toBeUndefined();
    }
  });

  it("answers an empty data array for a window without samples", async () => {
    const f = await setup();
    const body = await readData(f, {
      start_time: "2024-01-01T00:00:00Z",
      end_time: "2024-01-08T00:00:00Z",
      agg_unit: "h",
    });
    expect(body.data).toEqual([]);
  });
});

describe("GET /v1/machines/{machine_uuid}/signals/{public_id}: errors", () => {
  it("answers 422 in FastAPI's form for every invalid parameter", async () => {
    const f = await setup();
    const ok = {
      start_time: "2024-01-01T00:00:00Z",
      end_time: "2024-01-02T00:00:00Z",
      agg_unit: "h",
    };
    const cases: [string, Record<string, string | number>, string][] = [
      ["end before start", { ...ok, end_time: "2023-12-31T00:00:00Z" }, "end_time"],
      ["end equals start", { ...ok, end_time: ok.start_time }, "end_time"],
      ["window over 14 days", { ...ok, end_time: "2024-01-15T00:00:00.001Z" }, "end_time"],
      ["10,001 points", { ...ok, end_time: "2024-01-01T02:46:41Z", agg_unit: "s" }, "agg_period"],
      ["unknown agg_unit", { ...ok, agg_unit: "w" }, "agg_unit"],
      ["agg_period 0", { ...ok, agg_period: 0 }, "agg_period"],
      ["agg_period -1", { ...ok, agg_period: -1 }, "agg_period"],
      ["agg_period x", { ...ok, agg_period: "x" }, "agg_period"],
      ["agg_period 1.5", { ...ok, agg_period: 1.5 }, "agg_period"],
      ["unknown agg_function", { ...ok, agg_function: "median" }, "agg_function"],
      ["malformed start_time", { ...ok, start_time: "yesterday" }, "start_time"],
      ["malformed end_time", { ...ok, end_time: "2024-13-01T00:00:00Z" }, "end_time"],
      ["malformed transpose", { ...ok, transpose: "maybe" }, "transpose"],
      ["empty transpose", { ...ok, transpose: "" }, "transpose"],
      ["transpose 2", { ...ok, transpose: "2" }, "transpose"],
      ["missing start_time", { end_time: ok.end_time }, "start_time"],
      ["start_time before 1970", { ...ok, start_time: "1969-12-31T23:59:59Z" }, "start_time"],
      [
        "start_time before 1970, no offset",
        { ...ok, start_time: "1969-12-31T23:59:59" },
        "start_time",
      ],
    ];
    for (const [label, params, field] of cases) {
      const res = await api(f.co.key, dataPath(f, params));
      expect(res.status, label).toBe(422);
      const body = (await res.json()) as {
        detail: { loc: unknown[]; msg: unknown; type: unknown }[];
      };
      expect(Array.isArray(body.detail), label).toBe(true);
      expect(
        body.detail.map((d) => d.loc),
        label,
      ).toContainEqual(["query", field]);
      for (const d of body.detail) {
        expect(typeof d.msg, label).toBe("string");
        expect(typeof d.type, label).toBe("string");
      }
    }
    const early = await api(f.co.key, dataPath(f, { ...ok, start_time: "1969-12-31T23:59:59" }));
    const earlyBody = (await early.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(earlyBody.detail).toContainEqual(
      expect.objectContaining({
        loc: ["query", "start_time"],
        msg: expect.stringMatching(/^Must be a date-time on or after 1970-01-01T00:00:00Z/),
      }),
    );
    const missing = await api(f.co.key, dataPath(f, { end_time: ok.end_time }));
    const missingBody = (await missing.json()) as { detail: { loc: unknown[]; type: string }[] };
    expect(missingBody.detail).toEqual([
      { loc: ["query", "start_time"], msg: "Field required", type: "missing" },
    ]);

    // The limits themselves are allowed: exactly 14 days, exactly 10,000 points.
    const fourteen = await api(f.co.key, dataPath(f, { ...ok, end_time: "2024-01-15T00:00:00Z" }));
    expect(fourteen.status).toBe(200);
    const tenThousand = await api(
      f.co.key,
      dataPath(f, { ...ok, end_time: "2024-01-01T02:46:40Z", agg_unit: "s" }),
    );
    expect(tenThousand.status).toBe(200);

    const badMachine = await api(
      f.co.key,
      `/v1/machines/123/signals/${f.publicId}?start_time=${ok.start_time}&end_time=${ok.end_time}`,
    );
    expect(badMachine.status).toBe(422);
    const badMachineBody = (await badMachine.json()) as { detail: { loc: unknown[] }[] };
    expect(badMachineBody.detail.map((d) => d.loc)).toEqual([["path", "machine_uuid"]]);

    const badSignal = await api(
      f.co.key,
      `/v1/machines/${f.machineUuid}/signals/nope?start_time=${ok.start_time}&end_time=${ok.end_time}`,
    );
    expect(badSignal.status).toBe(422);
    const badSignalBody = (await badSignal.json()) as { detail: { loc: unknown[] }[] };
    expect(badSignalBody.detail.map((d) => d.loc)).toEqual([["path", "public_id"]]);
  });

  it("answers 404 for unknown, foreign, unlisted and other machines' signals; 403 without the scope", async () => {
    const a = await setup();
    const [other] = await createMachines(a.co.id, [{ name: "Other" }]);
    if (!other?.uuid) throw new Error("no machine");
    const otherSignal = await createSignal(other.id, { name: "power" });
    const noKind = await createSignal(a.machineId, { name: "raw", kind: null });
    const deleted = await createSignal(a.machineId, { name: "old" });
    expect((await operator("DELETE", `/signals/${deleted}`)).status).toBe(204);
    const b = await setup();
    const q = "start_time=2024-01-01T00:00:00Z&end_time=2024-01-01T01:00:00Z";

    const cases: [string, string, string][] = [
      ["unknown machine", a.co.key, `/v1/machines/${crypto.randomUUID()}/signals/${a.publicId}`],
      ["unknown signal", a.co.key, `/v1/machines/${a.machineUuid}/signals/${crypto.randomUUID()}`],
      [
        "signal of another machine",
        a.co.key,
        `/v1/machines/${a.machineUuid}/signals/${otherSignal}`,
      ],
      ["signal without kind", a.co.key, `/v1/machines/${a.machineUuid}/signals/${noKind}`],
      ["deleted signal", a.co.key, `/v1/machines/${a.machineUuid}/signals/${deleted}`],
      [
        "another company's machine",
        b.co.key,
        `/v1/machines/${a.machineUuid}/signals/${a.publicId}`,
      ],
      ["another company's signal", b.co.key, `/v1/machines/${b.machineUuid}/signals/${a.publicId}`],
      [
        "own machine, foreign signal",
        a.co.key,
        `/v1/machines/${a.machineUuid}/signals/${b.publicId}`,
      ],
    ];
    for (const [label, key, path] of cases) {
      const res = await api(key, `${path}?${q}`);
      expect(res.status, label).toBe(404);
      const body = (await res.json()) as { detail: unknown };
      expect(typeof body.detail, label).toBe("string");
    }
    // The same reads with the right key succeed.
    expect(
      (await api(a.co.key, `/v1/machines/${other.uuid}/signals/${otherSignal}?${q}`)).status,
    ).toBe(200);
    expect(
      (await api(b.co.key, `/v1/machines/${b.machineUuid}/signals/${b.publicId}?${q}`)).status,
    ).toBe(200);

    const key = await createKey(a.co.id, ["machines.read", "reports.read"]);
    const forbidden = await api(key, `/v1/machines/${a.machineUuid}/signals/${a.publicId}?${q}`);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toEqual({
      detail: "Not enough permissions. Missing scope: signals.read",
    });
  });
});

describe("ingestion as seen by the signal-data route", () => {
  it("accepts 10,000 samples in one call, reads them back, and refuses 10,001", async () => {
    const f = await setup();
    const t0 = Date.UTC(2024, 8, 1);
    const samples: Sample[] = Array.from({ length: 10_000 }, (_, i) => [
      t0 + i * 1000,
      ((i * 37) % 101) - 50.5,
    ]);
    const res = await operator("POST", `/signals/${f.publicId}/samples`, {
      timestamps: samples.map(([t]) => iso(t)),
      values: samples.map(([, v]) => v),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 10_000 });

    // 10,000 s at 1 s is exactly the point ceiling.
    const back = await readData(f, { start_time: iso(t0), end_time: iso(t0 + 10_000_000) });
    expect(back.data).toEqual(samples.map(([t, v]) => ({ timestamp: iso(t), value: v })));
    const perHour = await readData(f, {
      start_time: iso(t0),
      end_time: iso(t0 + 3 * HOUR),
      agg_unit: "h",
      agg_function: "count",
    });
    expect(perHour.data?.map((p) => p.value)).toEqual([3600, 3600, 2800]);

    const tooMany = Array.from({ length: 10_001 }, (_, i) => iso(t0 + 20_000_000 + i * 1000));
    const refused = await operator("POST", `/signals/${f.publicId}/samples`, {
      timestamps: tooMany,
      values: tooMany.map(() => 1),
    });
    expect(refused.status).toBe(422);
    const refusedBody = (await refused.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(refusedBody.detail[0]?.loc).toEqual(["body", "timestamps"]);
    expect(refusedBody.detail[0]?.msg).toMatch(/10000/);
    // Nothing of the refused call was stored.
    const after = await readData(f, {
      start_time: iso(t0 + 20_000_000),
      end_time: iso(t0 + 20_000_000 + 11 * HOUR),
      agg_unit: "h",
      agg_function: "count",
    });
    expect(after.data).toEqual([]);
  });

  it("replacing a sample at an existing instant changes raw, minute and hour aggregates", async () => {
    const f = await setup();
    const h0 = Date.UTC(2024, 1, 20, 6);
    // One sample every 10 s for 2 hours, value 10.
    const samples: Sample[] = Array.from({ length: 720 }, (_, i) => [h0 + i * 10_000, 10]);
    await ingest(f.publicId, samples);
    const target = h0 + HOUR + 25 * MINUTE + 30_000;
    const hourly = () =>
      readData(f, {
        start_time: iso(h0),
        end_time: iso(h0 + 2 * HOUR),
        agg_unit: "h",
        agg_function: "avg",
      });
    const minute = (fn: Fn) =>
      readData(f, {
        start_time: iso(target - 30_000),
        end_time: iso(target + 30_000),
        agg_unit: "m",
        agg_function: fn,
      });

    expect((await hourly()).data?.map((p) => p.value)).toEqual([10, 10]);

    const replaced = await operator("POST", `/signals/${f.publicId}/samples`, {
      samples: [{ timestamp: iso(target), value: 370 }],
    });
    expect(await replaced.json()).toEqual({ accepted: 1 });

    // Hour rollup: (359 x 10 + 370) / 360 = 11; the first hour is untouched.
    expect((await hourly()).data?.map((p) => p.value)).toEqual([10, 11]);
    expect((await minute("max")).data?.map((p) => p.value)).toEqual([370]);
    expect((await minute("count")).data?.map((p) => p.value)).toEqual([6]);
    expect((await minute("sum")).data?.map((p) => p.value)).toEqual([420]);
    const twoHourCount = await readData(f, {
      start_time: iso(h0),
      end_time: iso(h0 + 2 * HOUR),
      agg_unit: "h",
      agg_period: 2,
      agg_function: "count",
    });
    expect(twoHourCount.data?.map((p) => p.value)).toEqual([720]);

    // Replacing it back restores the rollups exactly.
    await ingest(f.publicId, [[target, 10]]);
    expect((await hourly()).data?.map((p) => p.value)).toEqual([10, 10]);
    expect((await minute("max")).data?.map((p) => p.value)).toEqual([10]);
  });
});

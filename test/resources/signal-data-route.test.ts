/**
 * The signal-data route's own parts: the answer written as text (`series-json.ts`), the
 * window rules shared with the operator diagnostics (`window.ts`), and the per-isolate
 * signal lookup (`signal-lookup.ts`).
 */
import { describe, expect, it } from "vitest";
import { isoInstant } from "../../src/http/instants";
import { seriesJson } from "../../src/resources/signals/series-json";
import { api, createCompany, createMachines, createSignal, ingest, operator } from "../harness";

describe("seriesJson", () => {
  it("writes exactly what JSON.stringify writes for the object form, in both forms", () => {
    const values = [
      0,
      -0,
      1.5,
      -1e-310,
      5e-324,
      1.7976931348623157e308,
      0.1 + 0.2,
      1e21,
      123456789.125,
    ];
    values.push(Number.POSITIVE_INFINITY, Number.NaN);
    for (let i = 0; i < 500; i++) values.push(Math.sin(i) * 10 ** ((i % 40) - 20));
    const buckets = values.map((_, i) => Date.UTC(2024, 0, 1) + i * 180_000);
    const head = { machine_uuid: "m", public_id: "p", name: 'a "quoted" name', agg_period: 3 };
    const data = buckets.map((b, i) => ({ timestamp: isoInstant(b), value: values[i] }));
    expect(seriesJson(head, { buckets, values }, false)).toBe(JSON.stringify({ ...head, data }));
    expect(seriesJson(head, { buckets, values }, true)).toBe(
      JSON.stringify({ ...head, timestamps: buckets.map(isoInstant), values }),
    );
    expect(seriesJson(head, { buckets: [], values: [] }, false)).toBe(
      JSON.stringify({ ...head, data: [] }),
    );
  });
});

async function setup() {
  const co = await createCompany();
  const [machine] = await createMachines(co.id, [{ name: "Press" }]);
  if (!machine?.uuid) throw new Error("no machine");
  const publicId = await createSignal(machine.id, { name: "power" });
  return { co, machine: { id: machine.id, uuid: machine.uuid }, publicId };
}

describe("window rules", () => {
  it("refuse a window the same way on the public route and on the operator diagnostics", async () => {
    const { co, machine, publicId } = await setup();
    const windows = [
      "start_time=2024-01-02T00:00:00Z&end_time=2024-01-01T00:00:00Z",
      "start_time=2024-01-01T00:00:00Z&end_time=2024-01-15T00:00:01Z",
      "start_time=2024-01-01T00:00:00Z&end_time=2024-01-02T00:00:00Z&agg_unit=s",
    ];
    for (const q of windows) {
      const pub = await api(co.key, `/v1/machines/${machine.uuid}/signals/${publicId}?${q}`);
      const diag = await operator("GET", `/signals/${publicId}/aggregate?${q}`);
      expect(pub.status, q).toBe(422);
      expect(diag.status, q).toBe(422);
      expect(await diag.json(), q).toEqual(await pub.json());
    }
  });
});

describe("signal lookup", () => {
  it("answers 404 at once for a signal deleted after it was read", async () => {
    const { co, machine, publicId } = await setup();
    const t0 = Date.UTC(2024, 0, 1);
    await ingest(publicId, [[t0, 1]]);
    const path = `/v1/machines/${machine.uuid}/signals/${publicId}?start_time=${new Date(t0).toISOString()}&end_time=${new Date(t0 + 60_000).toISOString()}`;
    const read = await api(co.key, path);
    expect(read.status).toBe(200);
    expect(read.headers.get("content-type")).toBe("application/json");
    expect(((await read.json()) as { data: unknown[] }).data).toEqual([
      { timestamp: new Date(t0).toISOString(), value: 1 },
    ]);
    expect((await operator("DELETE", `/signals/${publicId.toUpperCase()}`)).status).toBe(204);
    expect((await api(co.key, path)).status).toBe(404);
  });
});

describe("the edges of signal data", () => {
  it("counts the epoch-aligned buckets a window touches: 10,000.0 s from an unaligned start is 10,001, refused", async () => {
    const { co, machine, publicId } = await setup();
    const t0 = Date.UTC(2024, 0, 1);
    await ingest(
      publicId,
      Array.from({ length: 10_001 }, (_, i) => [t0 + 500 + i * 1000, 1] as const),
    );
    const path = (from: number, to: number) =>
      `/v1/machines/${machine.uuid}/signals/${publicId}?start_time=${new Date(from).toISOString()}&end_time=${new Date(to).toISOString()}&agg_unit=s&transpose=true`;
    const unaligned = await api(co.key, path(t0 + 500, t0 + 500 + 10_000_000));
    expect(unaligned.status).toBe(422);
    const body = (await unaligned.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(body.detail[0]?.loc).toEqual(["query", "agg_period"]);
    expect(body.detail[0]?.msg).toContain("10001 points");
    // The same length on bucket boundaries touches 10,000 buckets and is answered whole.
    const aligned = await api(co.key, path(t0, t0 + 10_000_000));
    expect(aligned.status).toBe(200);
    const points = (await aligned.json()) as { timestamps: string[] };
    expect(points.timestamps).toHaveLength(10_000);
    // One millisecond shorter from the unaligned start touches 10,000 too.
    expect((await api(co.key, path(t0 + 500, t0 + 10_000_000))).status).toBe(200);
  });

  it("refuses a sample beyond ±1e300 with a 422 naming the bound, so every sum and avg is a finite number", async () => {
    const { co, machine, publicId } = await setup();
    const t0 = Date.UTC(2024, 0, 1);
    for (const body of [
      { samples: [{ timestamp: new Date(t0).toISOString(), value: 1.7e308 }] },
      { timestamps: [new Date(t0).toISOString()], values: [-1.7e308] },
    ]) {
      const res = await operator("POST", `/signals/${publicId}/samples`, body);
      expect(res.status).toBe(422);
      const detail = ((await res.json()) as { detail: { loc: unknown[]; msg: string }[] }).detail;
      expect(detail[0]?.loc).toEqual(
        "samples" in body ? ["body", "samples", 0, "value"] : ["body", "values", 0],
      );
      expect(detail[0]?.msg).toContain("1e300");
    }
    // The bound itself: two samples in one bucket sum to a finite number.
    await ingest(publicId, [
      [t0, 1e300],
      [t0 + 1000, 1e300],
      [t0 + 2000, -1e300],
    ]);
    for (const fn of ["sum", "avg", "max", "min", "count"]) {
      const res = await api(
        co.key,
        `/v1/machines/${machine.uuid}/signals/${publicId}?start_time=${new Date(t0).toISOString()}&end_time=${new Date(t0 + 60_000).toISOString()}&agg_unit=m&agg_function=${fn}`,
      );
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain("null");
      const [point] = (JSON.parse(text) as { data: { value: number }[] }).data;
      expect(Number.isFinite(point?.value)).toBe(true);
    }
  });
});

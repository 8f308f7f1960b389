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

/**
 * `sumCountSignal`: the sums of a machine's `count` samples per window, from its signal
 * store, for the live production logs (and logs created without a count).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sumCountSignal } from "../../src/resources/signals/count-sums";
import { createCompany, createMachines, createSignal, ingest, operator } from "../harness";

const S = 1_000;
const HOUR = 3_600_000;

describe("sumCountSignal", () => {
  it("sums the lowest-id live `count` signal per window, and 0 without one", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "Press" }]);
    if (!m) throw new Error("no machine");
    const machine = { companyId: co.id, machineId: m.id };
    const h0 = Date.UTC(2025, 3, 7, 6);
    const windows = [
      { start: h0, end: h0 + 2 * HOUR },
      { start: h0 + 30 * S, end: h0 + HOUR + 90 * S },
      { start: h0 + 5 * HOUR, end: h0 + 6 * HOUR },
    ];
    // No signal named `count` yet: zeros, one per window.
    expect(await sumCountSignal(env, machine, windows)).toEqual([0, 0, 0]);

    // A machine cannot have two live signals of the same name and display name: the deleted
    // one goes before the next is made, and the second live one has its own display name.
    const deleted = await createSignal(m.id, { name: "count" });
    await ingest(deleted, [[h0, 1000]]);
    expect((await operator("DELETE", `/signals/${deleted}`)).status).toBe(204);
    const first = await createSignal(m.id, { name: "count" });
    const second = await createSignal(m.id, { name: "count", displayName: "Count (spare)" });
    const other = await createSignal(m.id, { name: "power" });
    // One pulse of 2 every 10 s for 2 hours on the first; other signals differ.
    const pulses = Array.from({ length: 720 }, (_, i) => [h0 + i * 10 * S, 2] as const);
    await ingest(first, pulses);
    await ingest(second, [[h0, 500]]);
    await ingest(other, [[h0, 700]]);
    // 720 pulses; from 00:30 to 1:01:30 (exclusive): instants 30 s .. 3,680 s, 366 pulses.
    expect(await sumCountSignal(env, machine, windows)).toEqual([1440, 732, 0]);
    expect(await sumCountSignal(env, machine, [])).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import type { OperatorSchemas } from "../fixtures/api-types";
import { api, call, createCompany, createMachines, operator, operatorJson } from "../harness";

type Definition = OperatorSchemas["OperatorShiftDefinition"];
type Stop = OperatorSchemas["OperatorStop"];
type Classification = OperatorSchemas["StopClassification"];

const DAY = [
  { name: "Morning", startTime: "06:00", endTime: "14:00" },
  { name: "Afternoon", startTime: "14:00", endTime: "22:00" },
  { name: "Night", startTime: "22:00", endTime: "06:00" },
];

describe("operator: shift definitions", () => {
  it("creates definitions with defaults and lists them", async () => {
    const co = await createCompany();
    const [m1] = await createMachines(co.id, [{ name: "M1" }]);
    const res = await operator("POST", `/companies/${co.id}/shifts`, [
      ...DAY.slice(0, 2),
      {
        name: "Night",
        startTime: "22:00",
        endTime: "06:00",
        isConsidered: false,
        weekdays: [5, 1],
      },
    ]);
    expect(res.status).toBe(201);
    const created = (await res.json()) as Definition[];
    expect(created.map((d) => d.name)).toEqual(["Morning", "Afternoon", "Night"]);
    expect(created[0]).toMatchObject({
      weekdays: [1, 2, 3, 4, 5, 6, 7],
      isConsidered: true,
      machineIds: null,
    });
    expect(created[2]).toMatchObject({ weekdays: [1, 5], isConsidered: false });
    expect(new Set(created.map((d) => d.id)).size).toBe(3);

    // Sunday 22:00-23:00 touches the Afternoon shift and misses the Night one (Mon and Fri only).
    const [onlyM1] = await operatorJson<Definition[]>("POST", `/companies/${co.id}/shifts`, [
      {
        name: "Sunday maintenance",
        startTime: "22:00",
        endTime: "23:00",
        weekdays: [7],
        machineIds: [m1?.id],
      },
    ]);
    expect(onlyM1?.machineIds).toEqual([m1?.id]);

    const listed = await operatorJson<Definition[]>("GET", `/companies/${co.id}/shifts`);
    expect(listed.map((d) => d.id)).toEqual([...created.map((d) => d.id), onlyM1?.id]);
  });

  it("rejects a definition overlapping another on a shared machine, and allows it elsewhere", async () => {
    const co = await createCompany();
    const [a, b] = await createMachines(co.id, [{ name: "A" }, { name: "B" }]);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "A day", startTime: "06:00", endTime: "14:00", machineIds: [a?.id] },
    ]);
    const overlap = await operator("POST", `/companies/${co.id}/shifts`, [
      { name: "A late", startTime: "13:00", endTime: "15:00", machineIds: [a?.id] },
    ]);
    expect(overlap.status).toBe(422);
    const body = (await overlap.json()) as { detail: { loc: unknown[]; msg: string }[] };
    expect(body.detail[0]?.loc).toEqual(["body", 0]);
    expect(body.detail[0]?.msg).toContain("A day");

    // A definition for all machines shares machine A.
    const all = await operator("POST", `/companies/${co.id}/shifts`, [
      { name: "Everyone", startTime: "12:00", endTime: "13:00" },
    ]);
    expect(all.status).toBe(422);

    // The same hours on machine B only are fine; touching boundaries are not an overlap.
    const fine = await operator("POST", `/companies/${co.id}/shifts`, [
      { name: "B late", startTime: "13:00", endTime: "15:00", machineIds: [b?.id] },
      { name: "A evening", startTime: "14:00", endTime: "22:00", machineIds: [a?.id] },
    ]);
    expect(fine.status).toBe(201);
  });

  it("sees overlaps across midnight into the next weekday, and inside one request", async () => {
    const co = await createCompany();
    // Friday 22:00 to Saturday 06:00 against Saturday 05:00-07:00.
    const crossing = await operator("POST", `/companies/${co.id}/shifts`, [
      { name: "Fri night", startTime: "22:00", endTime: "06:00", weekdays: [5] },
      { name: "Sat early", startTime: "05:00", endTime: "07:00", weekdays: [6] },
    ]);
    expect(crossing.status).toBe(422);
    expect(((await crossing.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      "body",
      1,
    ]);
    // On Sunday instead, no overlap.
    const ok = await operator("POST", `/companies/${co.id}/shifts`, [
      { name: "Fri night", startTime: "22:00", endTime: "06:00", weekdays: [5] },
      { name: "Sun early", startTime: "05:00", endTime: "07:00", weekdays: [7] },
    ]);
    expect(ok.status).toBe(201);
    // Nothing of the rejected request was written.
    const listed = await operatorJson<Definition[]>("GET", `/companies/${co.id}/shifts`);
    expect(listed.map((d) => d.name)).toEqual(["Fri night", "Sun early"]);
  });

  it("rejects bad times, weekdays and machines of another company", async () => {
    const co = await createCompany();
    const other = await createCompany();
    const [foreign] = await createMachines(other.id, [{ name: "Theirs" }]);
    for (const item of [
      { name: "x", startTime: "24:00", endTime: "06:00" },
      { name: "x", startTime: "6:00", endTime: "14:00" },
      { name: "x", startTime: "06:00", endTime: "14:00", weekdays: [0] },
      { name: "x", startTime: "06:00", endTime: "14:00", weekdays: [1, 1] },
      { name: "", startTime: "06:00", endTime: "14:00" },
    ]) {
      const res = await operator("POST", `/companies/${co.id}/shifts`, [item]);
      expect(res.status, JSON.stringify(item)).toBe(422);
    }
    const res = await operator("POST", `/companies/${co.id}/shifts`, [
      { name: "x", startTime: "06:00", endTime: "14:00", machineIds: [foreign?.id] },
    ]);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      "body",
      0,
      "machineIds",
      0,
    ]);
    expect((await operator("POST", "/companies/999999999/shifts", [DAY[0]])).status).toBe(404);
    expect((await operator("GET", "/companies/999999999/shifts")).status).toBe(404);
  });

  it("needs the operator token; an API key does not open it", async () => {
    const co = await createCompany();
    expect((await call(`/operator/v1/companies/${co.id}/shifts`)).status).toBe(401);
    expect((await api(co.key, `/operator/v1/companies/${co.id}/shifts`)).status).toBe(401);
  });
});

describe("operator: stops", () => {
  it("creates stops with defaults, closes one with PATCH, deletes one", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "M" }]);
    const res = await operator("POST", `/machines/${m?.id}/stops`, [
      { startTime: "2026-03-02T08:00:00Z", endTime: "2026-03-02T09:00:00Z", isProgrammed: false },
      { startTime: "2026-03-02T10:00:00+01:00", isProgrammed: true, isManual: true },
    ]);
    expect(res.status).toBe(201);
    const [closed, open] = (await res.json()) as Stop[];
    expect(Number.isInteger(closed?.id)).toBe(true);
    expect(closed).toMatchObject({
      machineId: m?.id,
      startTime: "2026-03-02T08:00:00.000Z",
      endTime: "2026-03-02T09:00:00.000Z",
      isProgrammed: false,
      isIncludedInAvailability: true,
      isIncludedInStops: true,
      isManual: false,
      durationInMinutes: 60,
    });
    expect(open).toMatchObject({
      startTime: "2026-03-02T09:00:00.000Z",
      endTime: null,
      isManual: true,
    });

    const patch = await operator("PATCH", `/stops/${open?.id}`, {
      endTime: "2026-03-02T09:30:00Z",
    });
    expect(patch.status).toBe(204);
    const bad = await operator("PATCH", `/stops/${open?.id}`, { endTime: "2026-03-02T08:59:00Z" });
    expect(bad.status).toBe(422);
    const badStart = await operator("PATCH", `/stops/${open?.id}`, {
      startTime: "2026-03-02T09:30:00Z",
    });
    expect(badStart.status).toBe(422);
    expect((await operator("PATCH", "/stops/999999999", { isManual: true })).status).toBe(404);
    expect((await operator("PATCH", `/stops/${open?.id}`, { nope: 1 })).status).toBe(422);

    expect((await operator("DELETE", `/stops/${closed?.id}`)).status).toBe(204);
    expect((await operator("DELETE", `/stops/${closed?.id}`)).status).toBe(404);
    expect((await operator("PATCH", `/stops/${closed?.id}`, { isManual: true })).status).toBe(404);
  });

  it("rejects an end not after the start, and an unknown machine", async () => {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "M" }]);
    const res = await operator("POST", `/machines/${m?.id}/stops`, [
      { startTime: "2026-03-02T08:00:00Z", isProgrammed: false },
      { startTime: "2026-03-02T08:00:00Z", endTime: "2026-03-02T08:00:00Z", isProgrammed: false },
    ]);
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: { loc: unknown[] }[] }).detail[0]?.loc).toEqual([
      "body",
      1,
      "endTime",
    ]);
    const missing = await operator("POST", `/machines/${m?.id}/stops`, [
      { startTime: "2026-03-02T08:00:00Z" },
    ]);
    expect(missing.status).toBe(422);
    const unknown = await operator("POST", "/machines/999999999/stops", [
      { startTime: "2026-03-02T08:00:00Z", isProgrammed: false },
    ]);
    expect(unknown.status).toBe(404);
  });
});

describe("operator: stop classifications", () => {
  async function twoStops() {
    const co = await createCompany();
    const [m] = await createMachines(co.id, [{ name: "M" }]);
    const stops = await operatorJson<Stop[]>("POST", `/machines/${m?.id}/stops`, [
      { startTime: "2026-03-02T08:00:00Z", endTime: "2026-03-02T09:00:00Z", isProgrammed: false },
      { startTime: "2026-03-02T10:00:00Z", endTime: "2026-03-02T11:00:00Z", isProgrammed: false },
    ]);
    return { co, stops };
  }

  it("creates causes on first use, reuses them by name, replaces and deletes", async () => {
    const { stops } = await twoStops();
    const [s1, s2] = stops;
    const res = await operator("PUT", `/stops/${s1?.id}/classification`, {
      description: "Jam",
      component: { name: "Feeder" },
      specificCause: { name: "Jammed belt" },
      generalCause: { name: "Mechanical" },
    });
    expect(res.status).toBe(200);
    const first = (await res.json()) as Classification;
    expect(Number.isInteger(first.id)).toBe(true);
    expect(first.description).toBe("Jam");
    expect(first.component.name).toBe("Feeder");
    expect(first.component.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.specificCause.name).toBe("Jammed belt");
    expect(first.generalCause.name).toBe("Mechanical");
    expect(first.createdAt).toMatch(/Z$/);

    // Another stop with the same names gets the same catalog entries.
    const second = await operatorJson<Classification>("PUT", `/stops/${s2?.id}/classification`, {
      component: { name: " Feeder " },
      generalCause: { name: "Mechanical" },
    });
    expect(second.component).toEqual(first.component);
    expect(second.generalCause).toEqual(first.generalCause);
    expect(second.specificCause).toEqual({ id: null, name: null });
    expect(second.description).toBeNull();

    // PUT replaces the whole classification, keeping its id.
    const replaced = await operatorJson<Classification>("PUT", `/stops/${s1?.id}/classification`, {
      component: { name: "Motor" },
    });
    expect(replaced.id).toBe(first.id);
    expect(replaced.component.name).toBe("Motor");
    expect(replaced.component.id).not.toBe(first.component.id);
    expect(replaced.description).toBeNull();
    expect(replaced.generalCause).toEqual({ id: null, name: null });

    expect((await operator("DELETE", `/stops/${s1?.id}/classification`)).status).toBe(204);
    expect((await operator("DELETE", `/stops/${s1?.id}/classification`)).status).toBe(404);
    // An empty classification is allowed (a stop marked as seen, without causes).
    const empty = await operatorJson<Classification>("PUT", `/stops/${s1?.id}/classification`, {});
    expect(Number.isInteger(empty.id)).toBe(true);
    expect(empty.component).toEqual({ id: null, name: null });
  });

  it("keeps each company's cause catalog apart, and 404s unknown or deleted stops", async () => {
    const a = await twoStops();
    const b = await twoStops();
    const ca = await operatorJson<Classification>(
      "PUT",
      `/stops/${a.stops[0]?.id}/classification`,
      {
        component: { name: "Feeder" },
      },
    );
    const cb = await operatorJson<Classification>(
      "PUT",
      `/stops/${b.stops[0]?.id}/classification`,
      {
        component: { name: "Feeder" },
      },
    );
    expect(ca.component.id).not.toBe(cb.component.id);

    expect((await operator("PUT", "/stops/999999999/classification", {})).status).toBe(404);
    expect((await operator("DELETE", "/stops/999999999/classification")).status).toBe(404);
    await operator("DELETE", `/stops/${a.stops[1]?.id}`);
    expect((await operator("PUT", `/stops/${a.stops[1]?.id}/classification`, {})).status).toBe(404);
    expect(
      (
        await operator("PUT", `/stops/${a.stops[0]?.id}/classification`, {
          component: { name: "" },
        })
      ).status,
    ).toBe(422);
  });
});

/**
 * The plant calendar's operator routes (docs/operator-api.md, "The plant calendar"):
 * create, list and delete a company's closures; dates checked with their bounds; a repeated
 * create or delete changes nothing; a company never reaches another's closures.
 */
import { describe, expect, it } from "vitest";
import type { OperatorSchemas } from "../fixtures/api-types";
import { createCompany, createMachines, operator, operatorJson } from "../harness";

type Closure = OperatorSchemas["OperatorClosure"];

const path = (companyId: number) => `/companies/${companyId}/closures`;

describe("operator: the plant calendar", () => {
  it("creates closures in the company's zone, lists them by date, and deletes one", async () => {
    const co = await createCompany({ timezone: "Europe/Rome" });
    const [m] = await createMachines(co.id, [{ name: "M1" }]);
    const res = await operator("POST", path(co.id), [
      { name: "Christmas", startDate: "2026-12-24", endDate: "2026-12-26" },
      { name: "Retooling", startDate: "2026-03-29", machineId: m?.id },
    ]);
    expect(res.status).toBe(201);
    const [christmas, retooling] = (await res.json()) as Closure[];
    expect(christmas).toMatchObject({
      name: "Christmas",
      startDate: "2026-12-24",
      endDate: "2026-12-26",
      machineId: null,
      // Rome's midnights: UTC+1 in December.
      start: "2026-12-23T23:00:00.000Z",
      end: "2026-12-26T23:00:00.000Z",
    });
    // 29 March 2026 is the day clocks go forward in Rome: still midnight to midnight (23 h).
    expect(retooling).toMatchObject({
      endDate: "2026-03-29",
      machineId: m?.id,
      start: "2026-03-28T23:00:00.000Z",
      end: "2026-03-29T22:00:00.000Z",
    });
    const listed = await operatorJson<Closure[]>("GET", path(co.id));
    expect(listed.map((c) => c.name)).toEqual(["Retooling", "Christmas"]);

    const deleted = await operator("DELETE", `${path(co.id)}/${retooling?.id}`);
    expect(deleted.status).toBe(204);
    expect((await operatorJson<Closure[]>("GET", path(co.id))).map((c) => c.name)).toEqual([
      "Christmas",
    ]);
  });

  it("is idempotent: the same closure created again is the same one, a delete repeated is 204", async () => {
    const co = await createCompany();
    const item = { name: "Holiday", startDate: "2026-05-01" };
    const [first] = await operatorJson<Closure[]>("POST", path(co.id), [item]);
    const again = await operatorJson<Closure[]>("POST", path(co.id), [item, item]);
    expect(again.map((c) => c.id)).toEqual([first?.id, first?.id]);
    expect(await operatorJson<Closure[]>("GET", path(co.id))).toHaveLength(1);

    expect((await operator("DELETE", `${path(co.id)}/${first?.id}`)).status).toBe(204);
    expect((await operator("DELETE", `${path(co.id)}/${first?.id}`)).status).toBe(204);
    expect((await operator("DELETE", `${path(co.id)}/${crypto.randomUUID()}`)).status).toBe(404);
  });

  it("refuses bad dates, spans and machines with a 422 naming each", async () => {
    const co = await createCompany();
    const other = await createCompany();
    const [foreign] = await createMachines(other.id, [{ name: "Not yours" }]);
    const res = await operator("POST", path(co.id), [
      { name: "Bad date", startDate: "2026-02-30" },
      { name: "Backwards", startDate: "2026-05-02", endDate: "2026-05-01" },
      { name: "Too long", startDate: "2026-01-01", endDate: "2027-01-02" },
      { name: " ", startDate: "2026-01-01" },
      { name: "Too early", startDate: "1969-12-31" },
      { name: "Other company's machine", startDate: "2026-01-01", machineId: foreign?.id },
    ]);
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: (string | number)[] }[] };
    expect(detail.map((d) => d.loc)).toEqual([
      ["body", 0, "startDate"],
      ["body", 1, "endDate"],
      ["body", 2, "endDate"],
      ["body", 3, "name"],
      ["body", 4, "startDate"],
    ]);
    // Dates or instants, not both; instants in order.
    const forms = await operator("POST", path(co.id), [
      {
        name: "Both",
        startDate: "2026-01-01",
        start: "2026-01-01T06:00:00Z",
        end: "2026-01-01T07:00:00Z",
      },
      { name: "No end", start: "2026-01-01T06:00:00Z" },
      { name: "Backwards", start: "2026-01-01T06:00:00Z", end: "2026-01-01T05:00:00Z" },
      { name: "Nothing" },
    ]);
    expect(forms.status).toBe(422);
    expect(
      ((await forms.json()) as { detail: { loc: unknown[] }[] }).detail.map((d) => d.loc),
    ).toEqual([
      ["body", 0, "start"],
      ["body", 0, "end"],
      ["body", 1, "end"],
      ["body", 2, "end"],
      ["body", 3, "startDate"],
    ]);
    // The machine is checked once the body is valid.
    const machine = await operator("POST", path(co.id), [
      { name: "Other company's machine", startDate: "2026-01-01", machineId: foreign?.id },
    ]);
    expect(machine.status).toBe(422);
    expect(await machine.json()).toMatchObject({
      detail: [{ loc: ["body", 0, "machineId"], type: "not_found" }],
    });
    // A full year and a day is the longest closure.
    expect(
      (
        await operator("POST", path(co.id), [
          { name: "Year", startDate: "2028-01-01", endDate: "2028-12-31" },
        ])
      ).status,
    ).toBe(201);
  });

  it("keeps companies apart: another company's closure is not listed, nor deleted through it", async () => {
    // On one shard: the company condition, not the database, keeps them apart.
    const a = await createCompany({ shard: "SHARD_0" });
    const b = await createCompany({ shard: "SHARD_0" });
    const [closure] = await operatorJson<Closure[]>("POST", path(a.id), [
      { name: "A's holiday", startDate: "2026-08-15" },
    ]);
    expect(await operatorJson<Closure[]>("GET", path(b.id))).toEqual([]);
    expect((await operator("DELETE", `${path(b.id)}/${closure?.id}`)).status).toBe(404);
    expect(await operatorJson<Closure[]>("GET", path(a.id))).toHaveLength(1);
  });
});

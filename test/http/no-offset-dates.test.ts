/**
 * One rule for a date-time without an offset, wherever a request carries one: it is read
 * as UTC (docs/decisions.md), in a query, in a body (public and operator) and in a search
 * filter; no path of the API takes a date-time; and the OpenAPI document says the rule.
 */
import { describe, expect, it } from "vitest";
import { NO_OFFSET_IS_UTC } from "../../src/http/instants";
import {
  api,
  call,
  createCompany,
  createMachines,
  createSignal,
  ingest,
  operator,
  operatorJson,
} from "../harness";

const AT = Date.UTC(2022, 8, 5, 6);
const NO_OFFSET = "2022-09-05T06:00:00";

async function plantWithSku() {
  const co = await createCompany({ timezone: "America/New_York" });
  const [machine] = await createMachines(co.id, [{ name: "Press", uuid: crypto.randomUUID() }]);
  if (!machine) throw new Error("no machine");
  const sku = await api(co.key, "/v1/skus", { method: "POST", json: [{ sku: "P-1" }] });
  expect(sku.status).toBe(200);
  return { co, machine };
}

describe("a date-time without an offset is read as UTC", () => {
  it("in a query: the signal window", async () => {
    const { co, machine } = await plantWithSku();
    const publicId = await createSignal(machine.id, { name: "power" });
    await ingest(publicId, [
      [AT - 1_000, 1],
      [AT, 2],
      [AT + 1_000, 3],
    ]);
    const read = async (start: string, end: string) => {
      const res = await api(
        co.key,
        `/v1/machines/${machine.uuid}/signals/${publicId}?start_time=${encodeURIComponent(start)}&end_time=${encodeURIComponent(end)}`,
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { data: { timestamp: string; value: number }[] }).data;
    };
    const local = await read(NO_OFFSET, "2022-09-05T06:00:01");
    expect(local).toEqual([{ timestamp: new Date(AT).toISOString(), value: 2 }]);
    expect(await read(`${NO_OFFSET}Z`, "2022-09-05T06:00:01Z")).toEqual(local);
  });

  it("in a body: a production log's start and end, and a search filter's instant", async () => {
    const { co, machine } = await plantWithSku();
    const created = await api(co.key, "/v1/production-logs", {
      method: "POST",
      json: [
        {
          start: NO_OFFSET,
          end: "2022-09-05T07:00:00.500",
          count: 10,
          nominalSpeed: 1,
          machine: { id: machine.id },
          sku: { name: "P-1" },
        },
      ],
    });
    expect({
      status: created.status,
      body: created.status === 200 ? null : await created.text(),
    }).toEqual({ status: 200, body: null });
    const [log] = (await created.json()) as { id: string; start: string; end: string }[];
    // America/New_York is the company's zone: the rule is UTC, not the company's clock.
    expect(log?.start).toBe("2022-09-05T06:00:00.000Z");
    expect(log?.end).toBe("2022-09-05T07:00:00.500Z");
    const found = await api(co.key, "/v1/production-logs/filters", {
      method: "POST",
      json: { start: { equal: NO_OFFSET } },
    });
    expect(found.status === 200 ? 200 : await found.text()).toBe(200);
    const body = (await found.json()) as { productionLogs: { id: string }[] };
    expect(body.productionLogs.map((l) => l.id)).toEqual([log?.id]);
  });

  it("in an operator body: a stop's times and a signal's samples", async () => {
    const { machine } = await plantWithSku();
    const [stop] = await operatorJson<{ id: number; startTime: string; endTime: string }[]>(
      "POST",
      `/machines/${machine.id}/stops`,
      [{ startTime: NO_OFFSET, endTime: "2022-09-05T06:30:00", isProgrammed: false }],
    );
    expect(stop?.startTime).toBe("2022-09-05T06:00:00.000Z");
    expect(stop?.endTime).toBe("2022-09-05T06:30:00.000Z");
    const publicId = await createSignal(machine.id, { name: "count" });
    const res = await operator("POST", `/signals/${publicId}/samples`, {
      samples: [{ timestamp: NO_OFFSET, value: 7 }],
    });
    expect(res.status).toBeLessThan(300);
    const raw = await operator(
      "GET",
      `/signals/${publicId}/aggregate?start_time=${NO_OFFSET}Z&end_time=2022-09-05T06:00:01Z`,
    );
    expect(raw.status).toBe(200);
    expect(JSON.stringify(await raw.json())).toContain("2022-09-05T06:00:00.000Z");
  });

  it("in a path: no operation takes a date-time there; the document states the rule", async () => {
    const document = (await (await call("/openapi.json")).json()) as {
      info: { description: string };
      paths: Record<
        string,
        Record<string, { parameters?: { in: string; schema?: { format?: string } }[] }>
      >;
    };
    const pathDates = Object.values(document.paths)
      .flatMap((item) => Object.values(item))
      .flatMap((op) => op.parameters ?? [])
      .filter((p) => p.in === "path" && p.schema?.format === "date-time");
    expect(pathDates).toEqual([]);
    expect(document.info.description).toContain(NO_OFFSET_IS_UTC);
  });
});

/**
 * The limits that protect the service, each a clear error and documented:
 * request body size (413), items per create call, `limit`, search and LIKE
 * pattern length, samples per ingestion call, and string lengths.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { OPERATOR_MAX_BODY_BYTES, PUBLIC_MAX_BODY_BYTES } from "../../src/http/json-body";
import { api, call, operator } from "../fixtures/direct-client";
import { call as callThroughRuntime, OPERATOR_TOKEN } from "../harness";
import { publicOperations } from "./contract";
import { buildWorld, type World } from "./world";

let world: World;

beforeAll(async () => {
  world = await buildWorld();
});

const MIB = 1024 * 1024;

/** A JSON array of SKUs about `bytes` long. */
function skusOfSize(bytes: number): string {
  const item = JSON.stringify({ sku: "P", description: "d".repeat(1990) });
  return `[${Array.from({ length: Math.ceil(bytes / (item.length + 1)) }, () => item).join(",")}]`;
}

/** A body sent as a stream, without `Content-Length`. */
function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + 64 * 1024));
      offset += 64 * 1024;
    },
  });
}

async function expect422At(res: Response, loc: (string | number)[]): Promise<void> {
  const body = (await res.json()) as { detail: { loc: unknown[]; msg: string }[] };
  expect(res.status, JSON.stringify(body)).toBe(422);
  expect(body.detail.map((d) => d.loc)).toContainEqual(loc);
  for (const d of body.detail) expect(d.msg.length).toBeGreaterThan(0);
}

describe("request body size", () => {
  it("is 413 above 4 MiB on /v1, before authentication, with Content-Length or streamed", async () => {
    const text = skusOfSize(PUBLIC_MAX_BODY_BYTES + 1024);
    const expected = {
      detail: `Request body is larger than ${PUBLIC_MAX_BODY_BYTES} bytes (4 MiB); split it into several calls`,
    };
    for (const key of [world.co.key, undefined]) {
      const res = await callThroughRuntime("/v1/skus", {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}) },
        body: text,
      });
      expect(res.status).toBe(413);
      expect(await res.json()).toEqual(expected);
    }
    const streamed = await call("/v1/skus/filters", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": world.co.key },
      body: streamOf(`{"skus":{"search":"${"x".repeat(PUBLIC_MAX_BODY_BYTES)}"}}`),
      // @ts-expect-error: `duplex` is required for stream bodies by the Fetch standard.
      duplex: "half",
    });
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toEqual(expected);
    // Nothing of the refused calls was stored.
    const count = await api(world.co.key, "/v1/skus/filters", { method: "POST", json: {} });
    expect(((await count.json()) as { totalCount: number }).totalCount).toBe(1);
  });

  it("fits a 1,000-item create whose texts are at their longest", async () => {
    const items = Array.from({ length: 1000 }, (_, i) => ({
      sku: `${i}`.padEnd(100, "x"),
      name: "n".repeat(200),
      description: "d".repeat(2000),
      unit: "u".repeat(50),
    }));
    const body = JSON.stringify(items);
    expect(body.length).toBeGreaterThan(2 * MIB);
    expect(body.length).toBeLessThan(PUBLIC_MAX_BODY_BYTES);
    const res = await callThroughRuntime("/v1/skus", {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": world.co.key },
      body,
    });
    expect(res.status, (await res.clone().text()).slice(0, 300)).toBe(200);
    expect(((await res.json()) as unknown[]).length).toBe(1000);
  });

  it("is 413 above 8 MiB on the operator API, which fits 10,000 samples pretty-printed", async () => {
    const t0 = Date.UTC(2026, 0, 1);
    const samples = Array.from({ length: 10_000 }, (_, i) => ({
      timestamp: new Date(t0 + i * 1000).toISOString().replace("Z", "+00:00"),
      value: -1.234567890123456e-10 * (i + 1),
    }));
    const pretty = JSON.stringify({ samples }, null, 2);
    expect(pretty.length).toBeLessThan(OPERATOR_MAX_BODY_BYTES);
    const ok = await callThroughRuntime(`/operator/v1/signals/${world.signalId}/samples`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: pretty,
    });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.json()).toEqual({ accepted: 10_000 });

    const big = await callThroughRuntime(`/operator/v1/signals/${world.signalId}/samples`, {
      method: "POST",
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "content-type": "application/json" },
      body: `{"samples":[],"pad":"${"x".repeat(OPERATOR_MAX_BODY_BYTES)}"}`,
    });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({
      detail: `Request body is larger than ${OPERATOR_MAX_BODY_BYTES} bytes (8 MiB); split it into several calls`,
    });
  });

  it("is documented, with 415, on every public operation that takes a body", async () => {
    const ops = await publicOperations();
    const withBody = ops.filter((o) => o.method === "POST" || o.method === "PATCH");
    expect(withBody.length).toBeGreaterThan(15);
    for (const op of withBody) {
      expect(op.statuses, `${op.method} ${op.path}`).toEqual(expect.arrayContaining([413, 415]));
      expect(op.bodySchemas[413]).toBe("Error");
    }
    const res = await call("/openapi.json");
    const text = await res.text();
    expect(text).toContain(PUBLIC_MAX_BODY_BYTES.toLocaleString("en"));
  });
});

describe("counts", () => {
  it("refuses more than 1,000 items in a create call", async () => {
    const res = await api(world.co.key, "/v1/operators", {
      method: "POST",
      json: Array.from({ length: 1001 }, () => ({ firstName: "A" })),
    });
    await expect422At(res, ["body"]);
  });

  it("refuses a limit above 100, and a page below 1", async () => {
    for (const path of ["/v1/skus/filters", "/v1/production-logs/filters", "/v1/reports/stops"]) {
      await expect422At(await api(world.co.key, path, { method: "POST", json: { limit: 101 } }), [
        "body",
        "limit",
      ]);
      await expect422At(await api(world.co.key, path, { method: "POST", json: { page: 0 } }), [
        "body",
        "page",
      ]);
    }
  });

  it("refuses more than 1,000 ids in an include list, and ids longer than 100 characters", async () => {
    await expect422At(
      await api(world.co.key, "/v1/skus/filters", {
        method: "POST",
        json: { skus: { include: Array.from({ length: 1001 }, () => world.skuId) } },
      }),
      ["body", "skus", "include"],
    );
    await expect422At(
      await api(world.co.key, "/v1/skus/filters", {
        method: "POST",
        json: { skus: { exclude: ["x".repeat(101)] } },
      }),
      ["body", "skus", "exclude", 0],
    );
  });

  it("refuses more than 10,000 samples in an ingestion call", async () => {
    const t0 = Date.UTC(2026, 0, 2);
    const res = await operator("POST", `/signals/${world.signalId}/samples`, {
      timestamps: Array.from({ length: 10_001 }, (_, i) => new Date(t0 + i * 1000).toISOString()),
      values: Array.from({ length: 10_001 }, () => 1),
    });
    await expect422At(res, ["body", "timestamps"]);
  });
});

describe("text lengths", () => {
  it("refuses search terms and LIKE patterns above 50 UTF-8 bytes, and accepts 50", async () => {
    // 25 x "é" is 50 bytes; 26 is 52.
    const at = "é".repeat(25);
    const over = "é".repeat(26);
    const ok = await api(world.co.key, "/v1/skus/filters", {
      method: "POST",
      json: { names: { search: at } },
    });
    expect(ok.status).toBe(200);
    await expect422At(
      await api(world.co.key, "/v1/skus/filters", {
        method: "POST",
        json: { names: { search: over } },
      }),
      ["body", "names", "search"],
    );
    // `_` counts twice in a LIKE pattern (it is escaped): 26 x "_" is 52 bytes.
    await expect422At(
      await api(world.co.key, "/v1/simple-work-orders/filters", {
        method: "POST",
        json: { names: { search: "_".repeat(26) } },
      }),
      ["body", "names", "search"],
    );
    await expect422At(
      await api(world.co.key, "/v1/production-logs/filters", {
        method: "POST",
        json: { machines: { search: "x".repeat(51) } },
      }),
      ["body", "machines", "search"],
    );
  });

  it("refuses names, codes and descriptions over their documented lengths, and writes nothing", async () => {
    const cases: [string, unknown, (string | number)[]][] = [
      ["/v1/skus", [{ sku: "x".repeat(101) }], ["body", 0, "sku"]],
      ["/v1/skus", [{ sku: "x", name: "n".repeat(201) }], ["body", 0, "name"]],
      ["/v1/skus", [{ sku: "x", description: "d".repeat(2001) }], ["body", 0, "description"]],
      ["/v1/skus", [{ sku: "x", unit: "u".repeat(51) }], ["body", 0, "unit"]],
      ["/v1/operators", [{ firstName: "f".repeat(101) }], ["body", 0, "firstName"]],
      ["/v1/simple-work-orders", [{ name: "w".repeat(201) }], ["body", 0, "name"]],
      [
        "/v1/nominal-speeds",
        [{ nominalSpeed: 1, machine: { name: "m".repeat(201) }, sku: { id: world.skuId } }],
        ["body", 0, "machine", "name"],
      ],
      [
        "/v1/nominal-speeds",
        [{ nominalSpeed: 1, machine: { id: world.machineId }, sku: { id: "s".repeat(101) } }],
        ["body", 0, "sku", "id"],
      ],
      [
        `/v1/realtime/${world.machineId}/sku`,
        { skuId: world.skuId, simpleWorkOrderName: "w".repeat(201) },
        ["body", "simpleWorkOrderName"],
      ],
    ];
    const totals = async () =>
      Promise.all(
        ["skus", "operators", "simple-work-orders", "nominal-speeds"].map(async (r) => {
          const res = await api(world.co.key, `/v1/${r}/filters`, { method: "POST", json: {} });
          return ((await res.json()) as { totalCount: number }).totalCount;
        }),
      );
    const before = await totals();
    for (const [path, json, loc] of cases) {
      await expect422At(await api(world.co.key, path, { method: "POST", json }), loc);
    }
    await expect422At(
      await api(world.co.key, `/v1/skus/${world.skuId}`, {
        method: "PATCH",
        json: { description: "d".repeat(2001) },
      }),
      ["body", "description"],
    );
    expect(await totals()).toEqual(before);
  });
});

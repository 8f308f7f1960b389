/**
 * The partners' client (clients/typescript/) against the Worker: its four README examples
 * run as written, with the demo's fixed ids, and its retries and pagination do what the
 * README says. The client's fetch is the Worker's own `fetch` (test/harness.ts), wrapped
 * where a test needs an answer to fail on the way back.
 */
import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { allSkuCodes } from "../../clients/typescript/examples/all-skus";
import allSkusSource from "../../clients/typescript/examples/all-skus.ts?raw";
import { createSkus } from "../../clients/typescript/examples/create-skus";
import createSkusSource from "../../clients/typescript/examples/create-skus.ts?raw";
import { hourlyPower } from "../../clients/typescript/examples/hourly-power";
import hourlyPowerSource from "../../clients/typescript/examples/hourly-power.ts?raw";
import { kpisCsv } from "../../clients/typescript/examples/kpis-csv";
import kpisCsvSource from "../../clients/typescript/examples/kpis-csv.ts?raw";
import readme from "../../clients/typescript/README.md?raw";
import {
  ApiError,
  BOOKMARK_HEADER,
  type ClientOptions,
  createClient,
  IDEMPOTENCY_HEADER,
  searchPages,
  unwrap,
} from "../../clients/typescript/src/index";
import { ASSET_0_POWER_ID, ASSET_0_UUID } from "../../scripts/lib/demo-ids";
import { inServiceSince } from "../fixtures/machine-history";
import { createCompany, ingest, operatorJson, type TestCompany } from "../harness";

const BASE_URL = "http://api.test";
const workerFetch = (request: Request) => exports.default.fetch(request);

/** A client of the Worker that records its waits instead of sleeping. */
function clientOf(key: string, options: Partial<ClientOptions> = {}) {
  const waits: number[] = [];
  const client = createClient({
    baseUrl: BASE_URL,
    apiKey: key,
    fetch: workerFetch,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  return { client, waits };
}

/**
 * The hours with power samples, as in the recording of Asset 0 on 2022-09-05: none before
 * 05:00 UTC, then every hour (hour h has samples h*10 + i for i = 0..11).
 */
const HOURS = Array.from({ length: 19 }, (_, i) => i + 5);
const hourStart = (h: number) => Date.UTC(2022, 8, 5, h);

let plant: TestCompany;

beforeAll(async () => {
  plant = await createCompany();
  // Asset 0 of the demo, with its fixed ids (docs/demo-data.md).
  const [machine] = await operatorJson<{ id: number }[]>(
    "POST",
    `/companies/${plant.id}/machines`,
    [{ name: "Asset 0", uuid: ASSET_0_UUID }],
  );
  if (!machine) throw new Error("no machine");
  await operatorJson("POST", `/machines/${machine.id}/signals`, [
    { publicId: ASSET_0_POWER_ID, name: "power", displayName: "Power", kind: "analog" },
  ]);
  await ingest(
    ASSET_0_POWER_ID,
    HOURS.flatMap((h) =>
      Array.from({ length: 12 }, (_, i) => [hourStart(h) + i * 300_000, h * 10 + i] as const),
    ),
  );
});

describe("the client's README", () => {
  it("shows each example as the file the tests run", () => {
    for (const source of [hourlyPowerSource, createSkusSource, allSkusSource, kpisCsvSource]) {
      // The README imports once from the package; the rest of each file is shown as is.
      const body = source.split("\n").slice(2).join("\n").trim();
      expect(readme).toContain(body);
    }
  });
});

describe("the client's examples against the Worker", () => {
  it("1. reads the hourly average power of the demo's Asset 0", async () => {
    const { client } = clientOf(plant.key);
    const points = await hourlyPower(client, ASSET_0_UUID, ASSET_0_POWER_ID);
    expect(points).toEqual(HOURS.map((h) => [new Date(hourStart(h)).toISOString(), h * 10 + 5.5]));
    // The README says what a user sees: one point per hour with samples, the first and last.
    expect(readme).toContain(`${points.length} of them`);
    expect(readme).toContain(`from\n\`${points[0]?.[0]}\` to \`${points.at(-1)?.[0]}\``);
  });

  it("2. creates SKUs once, though the first answer is lost and the call retried", async () => {
    const co = await createCompany();
    const sent: (string | null)[] = [];
    let lose = true;
    const { client, waits } = clientOf(co.key, {
      // The Worker runs the call, then a proxy loses the answer: a 502 comes back instead.
      fetch: async (request) => {
        sent.push(request.headers.get(IDEMPOTENCY_HEADER));
        const answer = await workerFetch(request);
        if (!lose) return answer;
        lose = false;
        return new Response("bad gateway", { status: 502 });
      },
    });
    const ids = await createSkus(client, ["P-1", "P-2"]);
    expect(ids).toHaveLength(2);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent[1]).toBe(sent[0]);
    expect(waits).toEqual([500]);
    // Created once: the retry got the stored answer of the first run.
    const codes = await allSkuCodes(client, "P-");
    expect(codes.sort()).toEqual(["P-1", "P-2"]);
    // An update answers 204 without a body: unwrap gives undefined, not an error.
    const renamed = await client.PATCH("/v1/skus/{sku_id}", {
      params: { path: { sku_id: ids[0] ?? "" } },
      body: { name: "Renamed" },
    });
    expect(renamed.response.status).toBe(204);
    expect(unwrap(renamed)).toBeUndefined();
  });

  it("3. walks every page of a search", async () => {
    const co = await createCompany();
    const { client } = clientOf(co.key);
    const codes = Array.from({ length: 205 }, (_, i) => `S-${String(i).padStart(3, "0")}`);
    await createSkus(client, codes);
    await createSkus(client, ["OTHER"]);
    const requests: string[] = [];
    const counted = createClient({
      baseUrl: BASE_URL,
      apiKey: co.key,
      fetch: async (request) => {
        requests.push(`${request.method} ${new URL(request.url).pathname}`);
        return workerFetch(request);
      },
    });
    expect((await allSkuCodes(counted, "S-")).sort()).toEqual(codes);
    expect(requests).toEqual(Array(3).fill("POST /v1/skus/filters"));
  });
});

describe("the client's CSV example against the Worker", () => {
  it("4. exports the KPIs of a window by machine and SKU as CSV", async () => {
    const co = await createCompany();
    const [machine] = await operatorJson<{ id: number }[]>("POST", `/companies/${co.id}/machines`, [
      { name: "Filler" },
    ]);
    await operatorJson("POST", `/companies/${co.id}/shifts`, [
      { name: "Day", startTime: "06:00", endTime: "18:00" },
    ]);
    // In service before the month asked: a report covers a machine from its first activity.
    await inServiceSince(co.id, [machine?.id ?? 0]);
    const { client } = clientOf(co.key);
    const text = await kpisCsv(client, "2026-03-01T00:00:00Z", "2026-03-31T23:59:59Z");
    const [header, ...rows] = text.trimEnd().split("\r\n");
    expect(header?.split(",").slice(0, 5)).toEqual([
      "machine.id",
      "machine.name",
      "sku.id",
      "sku.name",
      "instances",
    ]);
    // No logs: each machine's whole time is the null SKU's, one row, 31 Day shifts.
    expect(rows).toHaveLength(1);
    expect(rows[0]?.startsWith(`${machine?.id},Filler,,,31,`)).toBe(true);
  });
});

describe("the client's retries and pagination", () => {
  it("waits a 429's Retry-After, and gives a GET no Idempotency-Key", async () => {
    const seen: (string | null)[] = [];
    let limited = 1;
    const { client, waits } = clientOf(plant.key, {
      fetch: async (request) => {
        seen.push(request.headers.get(IDEMPOTENCY_HEADER));
        if (limited-- > 0) {
          return new Response('{"detail":"Too many requests"}', {
            status: 429,
            headers: { "retry-after": "7" },
          });
        }
        return workerFetch(request);
      },
    });
    const machines = unwrap(await client.GET("/v1/machines"));
    expect(machines.map((m) => m.uuid)).toEqual([ASSET_0_UUID]);
    expect(waits).toEqual([7000]);
    expect(seen).toEqual([null, null]);
  });

  it("sends back the latest x-d1-bookmark, so a search after a create sees the new row", async () => {
    const sent: (string | null)[] = [];
    const received: (string | null)[] = [];
    const { client } = clientOf(plant.key, {
      fetch: async (request) => {
        sent.push(request.headers.get(BOOKMARK_HEADER));
        const response = await workerFetch(request);
        received.push(response.headers.get(BOOKMARK_HEADER));
        return response;
      },
    });
    unwrap(await client.POST("/v1/skus", { body: [{ sku: "RYW-7" }] }));
    const page = unwrap(
      await client.POST("/v1/skus/filters", { body: { skus: { search: "RYW-7" } } }),
    );
    expect(page.totalCount).toBe(1);
    expect(sent[0]).toBeNull();
    expect(received[0]).toMatch(/^SHARD_\d+:/);
    expect(sent[1]).toBe(received[0]);

    const off = clientOf(plant.key, {
      readYourWrites: false,
      fetch: async (request) => {
        sent.push(request.headers.get(BOOKMARK_HEADER));
        return workerFetch(request);
      },
    });
    unwrap(await off.client.GET("/v1/machines"));
    unwrap(await off.client.GET("/v1/machines"));
    expect(sent.slice(2)).toEqual([null, null]);
  });

  it("retries a network error, doubling the wait, and gives up after maxRetries", async () => {
    let calls = 0;
    const { client, waits } = clientOf(plant.key, {
      maxRetries: 2,
      fetch: async () => {
        calls += 1;
        throw new TypeError("fetch failed");
      },
    });
    await expect(client.GET("/v1/machines")).rejects.toThrow("fetch failed");
    expect(calls).toBe(3);
    expect(waits).toEqual([500, 1000]);

    let served = 0;
    const failing = clientOf(plant.key, {
      maxRetries: 1,
      fetch: async () => {
        served += 1;
        return new Response('{"detail":"Internal Server Error"}', { status: 500 });
      },
    });
    const result = await failing.client.GET("/v1/machines");
    expect(served).toBe(2);
    expect(() => unwrap(result)).toThrow(ApiError);
    expect(result.response.status).toBe(500);
  });

  it("does not retry a 4XX, and keeps a caller's own Idempotency-Key", async () => {
    const keys: (string | null)[] = [];
    const { client, waits } = clientOf(plant.key, {
      fetch: async (request) => {
        keys.push(request.headers.get(IDEMPOTENCY_HEADER));
        return workerFetch(request);
      },
    });
    const result = await client.POST("/v1/skus", {
      body: [{ sku: "" }],
      headers: { [IDEMPOTENCY_HEADER]: "my-key-1" },
    });
    expect(result.response.status).toBe(422);
    expect(keys).toEqual(["my-key-1"]);
    expect(waits).toEqual([]);
    // Without retries, no key: nothing to make safe.
    const once = clientOf(plant.key, {
      maxRetries: 0,
      fetch: async (request) => {
        keys.push(request.headers.get(IDEMPOTENCY_HEADER));
        return workerFetch(request);
      },
    });
    expect((await once.client.POST("/v1/skus", { body: [{ sku: "ONCE" }] })).response.status).toBe(
      200,
    );
    expect(keys).toEqual(["my-key-1", null]);
    const error = (() => {
      try {
        unwrap(result);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(422);
  });

  it("gives one empty page for a search without rows, and stops on an error", async () => {
    const co = await createCompany();
    const { client } = clientOf(co.key);
    const pages = [];
    for await (const page of searchPages(client, "/v1/operators/filters")) pages.push(page);
    expect(pages).toEqual([{ totalCount: 0, totalPages: 0, currentPage: 1, operators: [] }]);

    const wrongKey = clientOf("not-a-key").client;
    await expect(searchPages(wrongKey, "/v1/skus/filters").next()).rejects.toMatchObject({
      status: 401,
    });
  });
});

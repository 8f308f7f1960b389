/**
 * `Idempotency-Key` through HTTP: replay of the stored response (once, nothing
 * done twice), a conflicting body, a concurrent duplicate, per-credential keys,
 * released keys after a non-stored answer, the reads that ignore it, and the
 * OpenAPI document.
 */
import { describe, expect, it } from "vitest";
import { getState, machineLogs, plant, postSku } from "../fixtures/plant";
import { api, call, createCompany, createKey, shardD1 } from "../harness";

const KEY = "Idempotency-Key";

function postSkus(co: { key: string }, body: unknown, key?: string): Promise<Response> {
  return api(co.key, "/v1/skus", {
    method: "POST",
    json: body,
    headers: key === undefined ? {} : { [KEY]: key },
  });
}

async function skuCount(co: { key: string }): Promise<number> {
  const res = await api(co.key, "/v1/skus/filters", { method: "POST", json: {} });
  return ((await res.json()) as { totalCount: number }).totalCount;
}

describe("Idempotency-Key", () => {
  it("replays the first response to a retry and creates nothing twice", async () => {
    const co = await createCompany();
    const key = crypto.randomUUID();
    const first = await postSkus(co, [{ sku: "K-1", name: "Kiwi" }], key);
    expect(first.status).toBe(200);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const firstBody = await first.text();

    // Same body with other key order and spacing: the same request.
    const retry = await api(co.key, "/v1/skus", {
      method: "POST",
      headers: { [KEY]: key, "content-type": "application/json" },
      body: '[ { "name": "Kiwi", "sku": "K-1" } ]',
    });
    expect(retry.status).toBe(200);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retry.headers.get("content-type")).toContain("application/json");
    expect(retry.headers.get("RateLimit-Policy")).not.toBeNull();
    expect(await retry.text()).toBe(firstBody);
    expect(await skuCount(co)).toBe(1);

    // Without a key, the same call creates again.
    expect((await postSkus(co, [{ sku: "K-1", name: "Kiwi" }])).status).toBe(200);
    expect(await skuCount(co)).toBe(2);
  });

  it("answers 422 to the same key with a different body, path or method", async () => {
    const co = await createCompany();
    const key = "order-42";
    expect((await postSkus(co, [{ sku: "A" }], key)).status).toBe(200);
    const other = await postSkus(co, [{ sku: "B" }], key);
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({
      detail: [{ loc: ["header", KEY], type: "idempotency_key_reused" }],
    });
    const otherPath = await api(co.key, "/v1/operators", {
      method: "POST",
      json: [{ firstName: "A" }],
      headers: { [KEY]: key },
    });
    expect(otherPath.status).toBe(422);
    expect(await skuCount(co)).toBe(1);
  });

  it("keeps keys per credential", async () => {
    const co = await createCompany();
    const second = await createKey(co.id, ["skus.create", "skus.read"]);
    const key = "shared-key";
    expect((await postSkus(co, [{ sku: "A" }], key)).status).toBe(200);
    const res = await postSkus({ key: second }, [{ sku: "B" }], key);
    expect(res.status).toBe(200);
    expect(res.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await skuCount(co)).toBe(2);
  });

  it("answers 409 while the first request with the key is still running", async () => {
    const co = await createCompany();
    const key = "in-flight";
    // The first request is running: its lock is held (taken a moment ago).
    const first = await postSkus(co, [{ sku: "A" }], key);
    expect(first.status).toBe(200);
    await (await shardD1(co.id))
      .prepare(
        "UPDATE idempotency_keys SET state = 'in_flight', lock_token = 'other', locked_at = ?1, status = NULL, body = NULL WHERE key = ?2",
      )
      .bind(Date.now(), key)
      .run();
    const res = await postSkus(co, [{ sku: "A" }], key);
    expect(res.status).toBe(409);
    expect(res.headers.get("Retry-After")).toBe("1");
    expect(((await res.json()) as { detail: string }).detail).toContain("still being processed");

    // A lock older than the lock timeout belongs to a request that died: taken over.
    await (await shardD1(co.id))
      .prepare("UPDATE idempotency_keys SET locked_at = ?1 WHERE key = ?2")
      .bind(Date.now() - 120_000, key)
      .run();
    const takeover = await postSkus(co, [{ sku: "A" }], key);
    expect(takeover.status).toBe(200);
    expect(takeover.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("runs a concurrent duplicate burst once: one 204, the others 409 or a replay", async () => {
    const p = await plant();
    const [m] = p.machines;
    if (!m) throw new Error("no machine");
    const key = crypto.randomUUID();
    const body = { skuId: p.a.id, quantity: 5 };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => postSku(p.co, m.id, body, { [KEY]: key })),
    );
    const executed = answers.filter(
      (r) => r.status === 204 && r.headers.get("Idempotent-Replayed") === null,
    );
    expect(executed).toHaveLength(1);
    for (const r of answers) {
      const replayed = r.headers.get("Idempotent-Replayed") === "true";
      expect(r.status === 409 || (r.status === 204 && (replayed || executed.includes(r)))).toBe(
        true,
      );
    }
    expect((await getState(p.co, m.id)).revision).toBe(1);
    // Once done, a retry is a replay and still changes nothing.
    const retry = await postSku(p.co, m.id, body, { [KEY]: key });
    expect(retry.status).toBe(204);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect((await getState(p.co, m.id)).revision).toBe(1);
    expect(await machineLogs(p.co, m.id)).toHaveLength(1);
  });

  it("stores a 4XX answer, but releases the key after a 409 so that a retry runs again", async () => {
    const idle = await plant(1, { shifts: [] });
    const [m] = idle.machines;
    if (!m) throw new Error("no machine");
    const key = crypto.randomUUID();
    const notRunning = await postSku(idle.co, m.id, { skuId: idle.a.id }, { [KEY]: key });
    expect(notRunning.status).toBe(409);
    const again = await postSku(idle.co, m.id, { skuId: idle.a.id }, { [KEY]: key });
    expect(again.status).toBe(409);
    expect(again.headers.get("Idempotent-Replayed")).toBeNull();

    // An unknown SKU on a machine that runs a shift (on an idle one the 409 comes first).
    const running = await plant(1);
    const [r] = running.machines;
    if (!r) throw new Error("no machine");
    const bad = crypto.randomUUID();
    const first = await postSku(running.co, r.id, { sku: "Nope" }, { [KEY]: bad });
    expect(first.status).toBe(422);
    const replayed = await postSku(running.co, r.id, { sku: "Nope" }, { [KEY]: bad });
    expect(replayed.status).toBe(422);
    expect(replayed.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await replayed.json()).toEqual(await first.json());
  });

  it("rejects a malformed key, and reads ignore the header", async () => {
    const co = await createCompany();
    const res = await postSkus(co, [{ sku: "A" }], "x".repeat(256));
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ detail: [{ loc: ["header", KEY] }] });
    for (let i = 0; i < 2; i += 1) {
      const read = await api(co.key, "/v1/skus/filters", {
        method: "POST",
        json: {},
        headers: { [KEY]: "read-key" },
      });
      expect(read.status).toBe(200);
      expect(read.headers.get("Idempotent-Replayed")).toBeNull();
    }
  });

  it("is documented on the routes that create or change, not on reads", async () => {
    const doc = (await (await call("/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<
          string,
          { parameters?: { name: string; in: string }[]; responses: Record<string, unknown> }
        >
      >;
    };
    const hasKey = (op: { parameters?: { name: string; in: string }[] } | undefined) =>
      (op?.parameters ?? []).some((p) => p.name === KEY && p.in === "header");
    const sku = doc.paths["/v1/realtime/{machine_id}/sku"]?.post;
    expect(hasKey(sku)).toBe(true);
    expect(sku?.responses["409"]).toBeDefined();
    expect(hasKey(doc.paths["/v1/skus"]?.post)).toBe(true);
    expect(hasKey(doc.paths["/v1/skus/filters"]?.post)).toBe(false);
    expect(hasKey(doc.paths["/v1/realtime/{machine_id}"]?.get)).toBe(false);
  });
});

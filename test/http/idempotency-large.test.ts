/**
 * `Idempotency-Key` keeps answers of any size the body limits allow: a ~3 MB create
 * answer is replayed exactly and nothing is written twice.
 */
import { describe, expect, it } from "vitest";
import { api, createCompany, shardD1, type TestCompany } from "../harness";

const KEY = "Idempotency-Key";

function postSkus(co: TestCompany, body: string, key: string): Promise<Response> {
  return api(co.key, "/v1/skus", {
    method: "POST",
    headers: { "content-type": "application/json", [KEY]: key },
    body,
  });
}

async function skuCount(co: TestCompany): Promise<number> {
  const res = await api(co.key, "/v1/skus/filters", { method: "POST", json: {} });
  return ((await res.json()) as { totalCount: number }).totalCount;
}

async function chunkCount(companyId: number, key: string): Promise<number> {
  const row = await (await shardD1(companyId))
    .prepare("SELECT COUNT(*) AS n FROM idempotency_chunks WHERE key = ?1")
    .bind(key)
    .first<{ n: number }>();
  return row?.n ?? 0;
}

/** A text that gzip cannot shrink much: random letters and digits. */
function noise(length: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join("");
}

describe("Idempotency-Key with large answers", () => {
  it("replays a ~3 MB create answer exactly and creates nothing twice", async () => {
    const co = await createCompany();
    const items = Array.from({ length: 1000 }, (_, i) => ({
      sku: `BIG-${i}`.padEnd(100, "x"),
      name: "n".repeat(200),
      description: "d".repeat(2000),
      unit: "u".repeat(50),
    }));
    const body = JSON.stringify(items);
    const key = crypto.randomUUID();
    const first = await postSkus(co, body, key);
    expect(first.status, (await first.clone().text()).slice(0, 200)).toBeLessThan(300);
    const firstText = await first.text();
    // Well past the 1.5 MB that used to release the key.
    expect(firstText.length).toBeGreaterThan(2_500_000);

    const retry = await postSkus(co, body, key);
    expect(retry.status).toBe(first.status);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await retry.text()).toBe(firstText);
    expect(await skuCount(co)).toBe(1000);
    // Kept compressed: repetitive JSON fits one piece.
    expect(await chunkCount(co.id, key)).toBe(1);
  });

  it("keeps an answer that does not compress in several pieces, and drops them with the key", async () => {
    const co = await createCompany();
    const items = Array.from({ length: 1000 }, (_, i) => ({
      sku: `NOISE-${i}`,
      description: noise(2000),
    }));
    const body = JSON.stringify(items);
    const key = crypto.randomUUID();
    const first = await postSkus(co, body, key);
    expect(first.status).toBeLessThan(300);
    const firstText = await first.text();
    expect(await chunkCount(co.id, key)).toBeGreaterThan(1);

    const retry = await postSkus(co, body, key);
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await retry.text()).toBe(firstText);
    expect(await skuCount(co)).toBe(1000);

    // Once the key expires, the next request of the credential deletes it and its pieces.
    await (await shardD1(co.id))
      .prepare("UPDATE idempotency_keys SET expires_at = 0 WHERE key = ?1")
      .bind(key)
      .run();
    const other = await postSkus(co, JSON.stringify([{ sku: "after" }]), crypto.randomUUID());
    expect(other.status).toBeLessThan(300);
    expect(await chunkCount(co.id, key)).toBe(0);
  });
});

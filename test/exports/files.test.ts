/**
 * The pieces under an export file: the R2 writer's parts (every part but the last of one
 * size, at most a part held in memory), and the direct URLs' signatures (AWS Signature
 * Version 4 in the query string, checked against AWS's own published example).
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { directUrl, presignGet, r2ObjectUrl } from "../../src/exports/presign";
import { PART_BYTES, R2FileWriter } from "../../src/exports/r2-file";

/** `n` bytes of a repeatable pattern, `seed` apart. */
function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

/** Hex SHA-256 of bytes (compares megabytes at once; `toEqual` walks them one by one). */
async function sha256(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

describe("R2FileWriter", () => {
  it("uploads a large file in parts, holding at most a part and a push", async () => {
    const key = `exports/test/${crypto.randomUUID()}/part-00001.csv`;
    const uploads: string[] = [];
    const writer = new R2FileWriter(env.HISTORY, key, "text/csv", (id) => uploads.push(id));
    const pushes = Array.from({ length: 25 }, (_, i) => bytes(500_000 + i * 7, i));
    for (const p of pushes) await writer.push(p);
    expect(writer.peakBuffered).toBeLessThan(PART_BYTES + 600_000);
    const size = await writer.close();
    const expected = pushes.reduce((n, p) => n + p.length, 0);
    expect(size).toBe(expected);
    expect(uploads).toHaveLength(1);
    const object = await env.HISTORY.get(key);
    const stored = new Uint8Array(await (object as R2ObjectBody).arrayBuffer());
    expect(stored.length).toBe(expected);
    const whole = new Uint8Array(expected);
    let at = 0;
    for (const p of pushes) {
      whole.set(p, at);
      at += p.length;
    }
    expect(await sha256(stored)).toBe(await sha256(whole));
    expect(object?.httpMetadata?.contentType).toBe("text/csv");
  });

  it("writes a small file with one put, and leaves nothing when aborted", async () => {
    const key = `exports/test/${crypto.randomUUID()}/part-00001.csv`;
    const uploads: string[] = [];
    const small = new R2FileWriter(env.HISTORY, key, "text/csv", (id) => uploads.push(id));
    await small.push(bytes(1000, 1));
    expect(await small.close()).toBe(1000);
    expect(uploads).toEqual([]);
    expect((await env.HISTORY.head(key))?.size).toBe(1000);

    const abandoned = `exports/test/${crypto.randomUUID()}/part-00001.csv`;
    const big = new R2FileWriter(env.HISTORY, abandoned, "text/csv");
    await big.push(bytes(PART_BYTES + 10, 2));
    await big.abort();
    expect(await env.HISTORY.head(abandoned)).toBeNull();
  });
});

describe("direct URLs", () => {
  it("signs as AWS's example of a presigned GET (Signature Version 4, query string)", async () => {
    // https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html
    const url = await presignGet(
      {
        accessKeyId: "AKIAIOSFODNN7EXAMPLE",
        secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        region: "us-east-1",
      },
      "https://examplebucket.s3.amazonaws.com/test.txt",
      86_400,
      Date.UTC(2013, 4, 24),
    );
    const query = new URL(url).searchParams;
    expect(query.get("X-Amz-Algorithm")).toBe("AWS4-HMAC-SHA256");
    expect(query.get("X-Amz-Credential")).toBe(
      "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
    );
    expect(query.get("X-Amz-Date")).toBe("20130524T000000Z");
    expect(query.get("X-Amz-Expires")).toBe("86400");
    expect(query.get("X-Amz-SignedHeaders")).toBe("host");
    expect(query.get("X-Amz-Signature")).toBe(
      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    );
  });

  it("points at the file in the configured bucket, or is absent without a configuration", async () => {
    const key = "exports/7/6f1c2a3e-8b4d-4c5e-9f60-7a8b9c0d1e2f/part-00001.parquet";
    const settings = {
      accountId: "0123abcd",
      bucket: "production-monitoring-history",
      accessKeyId: "key-id",
      secretAccessKey: "secret",
      seconds: 900,
    };
    const now = Date.UTC(2026, 10, 27, 12);
    const direct = await directUrl(settings, key, now);
    expect(direct?.expiresAt).toBe(now + 900_000);
    const url = new URL(direct?.url ?? "");
    expect(`${url.origin}${url.pathname}`).toBe(
      r2ObjectUrl("0123abcd", "production-monitoring-history", key),
    );
    expect(url.origin).toBe("https://0123abcd.r2.cloudflarestorage.com");
    expect(url.pathname).toBe(`/production-monitoring-history/${key}`);
    expect(url.searchParams.get("X-Amz-Credential")).toBe("key-id/20261127/auto/s3/aws4_request");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("900");
    expect(await directUrl({ seconds: 900 }, key, now)).toBeNull();
  });
});

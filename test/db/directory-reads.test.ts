/**
 * The directory off the primary (src/db/directory-reads.ts): reads start at the isolate's
 * anchor (a primary bookmark at most DIRECTORY_ANCHOR_MS old, which D1 serves from a copy at
 * least that fresh), one primary read refreshes the anchor for every company and key of the
 * isolate, a miss is confirmed at the primary, and answers are dated by the anchor.
 *
 * Locally every database has one copy, so where a read may go is seen by the session each
 * opens (`withSession`'s argument), recorded here.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { principalFromApiKey } from "../../src/auth/api-keys";
import {
  DIRECTORY_ANCHOR_MS,
  forgetDirectoryAnchor,
  readAtPrimary,
  readDirectory,
} from "../../src/db/directory-reads";
import { forgetShard, shardOf } from "../../src/db/shards";
import {
  api,
  createCompany,
  createKey,
  operator,
  operatorJson,
  recordingSessions,
} from "../harness";

/** The directory binding with every session it opens recorded (anchors: bookmark or constraint). */
function recorded() {
  const anchors: (string | undefined)[] = [];
  const DB = recordingSessions(env.DB, anchors);
  forgetDirectoryAnchor(DB);
  return { DB, anchors, directoryEnv: { ...env, DB } };
}

/**
 * Records the anchor of every session the Worker opens on this binding itself (the Worker
 * under test is handed the same binding object), until `restore`.
 */
function recordSessionsOf(db: D1Database) {
  const seen: (string | undefined)[] = [];
  const binding = db as D1Database & { withSession: D1Database["withSession"] };
  const original = binding.withSession;
  binding.withSession = (anchor?: string) => {
    seen.push(anchor);
    return original.call(db, anchor);
  };
  return {
    seen,
    restore: () => {
      binding.withSession = original;
    },
  };
}

const BOOKMARK = /^[0-9a-f]+(-[0-9a-f]+)*$/;

describe("directory reads", () => {
  it("send the primary one read per anchor time, however many companies an isolate serves", async () => {
    const companies = await Promise.all(Array.from({ length: 8 }, () => createCompany()));
    const { anchors, directoryEnv } = recorded();
    for (const co of companies) forgetShard(co.id);
    const shards = [];
    for (const co of companies) shards.push(await shardOf(directoryEnv, co.id));
    expect(shards.every((s) => /^SHARD_\d$/.test(s ?? ""))).toBe(true);
    // The first read refreshed the anchor at the primary; the seven others started at it.
    expect(anchors[0]).toBe("first-primary");
    expect(anchors.slice(1)).toHaveLength(7);
    for (const anchor of anchors.slice(1)) expect(anchor).toMatch(BOOKMARK);
    expect(new Set(anchors.slice(1)).size).toBe(1);
  });

  it("go to the primary again once the anchor is older than its time", async () => {
    const co = await createCompany();
    const { DB, anchors } = recorded();
    const read = () =>
      readDirectory(DB, (s) =>
        s.prepare("SELECT name FROM companies WHERE id = ?1").bind(co.id).first<{ name: string }>(),
      );
    const before = Date.now();
    const first = await read();
    expect(first).toMatchObject({ primary: true, value: { name: co.name } });
    expect(first.asOf).toBeGreaterThanOrEqual(before);
    const second = await read();
    // Dated by the anchor, not by the read: a cache of it counts from the primary's instant.
    expect(second).toMatchObject({ primary: false, asOf: first.asOf });
    await new Promise((resolve) => setTimeout(resolve, DIRECTORY_ANCHOR_MS + 50));
    const third = await read();
    expect(third.primary).toBe(true);
    expect(third.asOf).toBeGreaterThan(first.asOf);
    expect(anchors.map((a) => (a?.startsWith("first-") ? a : "bookmark"))).toEqual([
      "first-primary",
      "bookmark",
      "first-primary",
    ]);
  });

  it("confirm at the primary what the anchor does not know: a key works as soon as it is issued", async () => {
    const co = await createCompany();
    const { DB, anchors } = recorded();
    const known = await principalFromApiKey(DB, co.key);
    expect(known.principal?.companyId).toBe(co.id);
    // Issued after the anchor was taken: a replica at the anchor may not have it yet.
    const fresh = await createKey(co.id, ["machines.read"]);
    anchors.length = 0;
    const found = await principalFromApiKey(DB, fresh);
    expect(found.principal?.scopes).toEqual(new Set(["machines.read"]));
    const unknown = await principalFromApiKey(DB, `${fresh.slice(0, -4)}0000`);
    expect(unknown.principal).toBeNull();
    // Each was looked for at the anchor, then (not found there or not) as needed.
    expect(anchors[0]).toMatch(BOOKMARK);
    expect(anchors.at(-1)).toBe("first-primary");
  });

  it("keep a revocation's promise: the key stops at once in the isolate that revoked it", async () => {
    const co = await createCompany();
    // The lookup after a revocation must start at the primary, not at the isolate's anchor:
    // that anchor predates the revocation, and a replica at it may still hold the key as
    // valid (locally there is one copy, so only where the lookup starts shows it). The
    // anchor is refreshed just before the revocation, so that it is still young when the
    // lookup runs; under load that may take longer than its time, hence a few tries.
    let seen: (string | undefined)[] = [];
    let elapsed = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 3 && elapsed >= DIRECTORY_ANCHOR_MS; attempt++) {
      const [issued] = await operatorJson<{ id: number; key: string }[]>(
        "POST",
        `/companies/${co.id}/api-keys`,
        [{ name: `to revoke ${attempt}`, scopes: ["machines.read"] }],
      );
      const key = issued?.key ?? "";
      expect((await api(key, "/v1/machines")).status).toBe(200);
      const anchoredAt = Date.now();
      await readAtPrimary(env.DB, (s) => s.prepare("SELECT 1").first());
      expect((await operator("DELETE", `/api-keys/${issued?.id}`)).status).toBe(204);
      const sessions = recordSessionsOf(env.DB);
      try {
        expect((await api(key, "/v1/machines")).status).toBe(401);
        elapsed = Date.now() - anchoredAt;
      } finally {
        sessions.restore();
      }
      seen = sessions.seen;
    }
    expect(elapsed).toBeLessThan(DIRECTORY_ANCHOR_MS);
    expect(seen[0]).toBe("first-primary");
  });
});

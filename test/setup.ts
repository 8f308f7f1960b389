import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll, afterEach } from "vitest";
import { shardBindings } from "../src/db/shards";
import { testClient } from "./fixtures/worker";

// Setup files run before each test file; applyD1Migrations only applies what is missing.
// One migration stream for the directory and every shard (docs/deploying.md), applied to
// all of them at once (separate databases).
await Promise.all(
  [env.DB, ...shardBindings(env).values()].map((db) => applyD1Migrations(db, env.TEST_MIGRATIONS)),
);

// This file's own client address (test/fixtures/worker.ts): files sharing a runtime do not
// share a count of failed authentications.
testClient.address = `test-${crypto.randomUUID()}`;

/** The runtime's own `fetch`, kept before a test replaces it (test/fixtures/fake-network.ts). */
const runtimeFetch = globalThis.fetch.bind(globalThis);

/**
 * Fails when this runtime tried to reach a host outside the machine since the last check:
 * the tests' network (test/node/test-network.ts) refused it and kept its URL. After every
 * test, and after the file (for work a test left running, as an alarm or a queue consumer).
 */
async function checkNoNetworkReached(): Promise<void> {
  const refused = (await (await runtimeFetch(env.TEST_REFUSED_REQUESTS_URL)).json()) as string[];
  if (refused.length > 0) {
    throw new Error(
      `tried to reach outside the machine (no test may: docs/testing.md): ${refused.join(", ")}`,
    );
  }
}

afterEach(checkNoNetworkReached);
afterAll(checkNoNetworkReached);

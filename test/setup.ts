import { applyD1Migrations, env } from "cloudflare:test";
import { shardBindings } from "../src/db/shards";

// Setup files run before each test file; applyD1Migrations only applies what is missing.
// One migration stream for the directory and every shard (docs/deploying.md), applied to
// all of them at once (separate databases).
await Promise.all(
  [env.DB, ...shardBindings(env).values()].map((db) => applyD1Migrations(db, env.TEST_MIGRATIONS)),
);

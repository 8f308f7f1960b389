import { applyD1Migrations, env } from "cloudflare:test";
import { shardBindings } from "../src/db/shards";

// Setup files run before each test file; applyD1Migrations only applies what is missing.
// One migration stream for the directory and every shard (docs/deploying.md).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
for (const shard of shardBindings(env).values()) {
  await applyD1Migrations(shard, env.TEST_MIGRATIONS);
}

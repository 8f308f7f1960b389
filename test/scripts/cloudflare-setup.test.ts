/**
 * The Cloudflare set-up script's plan, on the real wrangler.toml: what it would create
 * for each deployed environment, and how it writes a new database id back.
 */
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import {
  createdDatabaseId,
  d1Bindings,
  environmentResources,
  setupCommands,
  withDatabaseId,
} from "../../scripts/lib/cloudflare-setup";
import wranglerToml from "../../wrangler.toml?raw";

const NEW_ID = "0f6b2c1e-8d3a-4c55-9a1e-2b7d4e6f8a90";

describe("npm run setup:cloudflare", () => {
  it("plans the directory, every shard, every queue (dead-letter queues included) and the R2 bucket of each environment", () => {
    expect(setupCommands(environmentResources(wranglerToml, "sandbox"))).toEqual([
      ["d1", "create", "production-monitoring-sandbox"],
      ["d1", "create", "production-monitoring-sandbox-shard-0"],
      ["d1", "create", "production-monitoring-sandbox-shard-1"],
      ["queues", "create", "webhook-deliveries-sandbox"],
      ["queues", "create", "webhook-deliveries-dlq-sandbox"],
      ["r2", "bucket", "create", "production-monitoring-history-sandbox"],
    ]);
    expect(setupCommands(environmentResources(wranglerToml, "production"))).toEqual([
      ["d1", "create", "production-monitoring-production"],
      ["d1", "create", "production-monitoring-production-shard-0"],
      ["d1", "create", "production-monitoring-production-shard-1"],
      ["queues", "create", "webhook-deliveries"],
      ["queues", "create", "webhook-deliveries-dlq"],
      ["r2", "bucket", "create", "production-monitoring-history"],
    ]);
    expect(() => environmentResources(wranglerToml, "staging")).toThrow(/no \[env.staging\]/);
  });

  it("reads the id that wrangler d1 create prints, as TOML or JSON", () => {
    expect(createdDatabaseId(`[[d1_databases]]\nbinding = "DB"\ndatabase_id = "${NEW_ID}"`)).toBe(
      NEW_ID,
    );
    expect(createdDatabaseId(`{"d1_databases": [{"database_id": "${NEW_ID}"}]}`)).toBe(NEW_ID);
    expect(() => createdDatabaseId("Error: not logged in")).toThrow(/no database_id/);
  });

  it("migrates the directory and every shard, locally and in each environment", () => {
    expect(d1Bindings(wranglerToml)).toEqual(["DB", "SHARD_0", "SHARD_1"]);
    expect(d1Bindings(wranglerToml, "production")).toEqual(["DB", "SHARD_0", "SHARD_1"]);
  });

  it("writes the id into that environment's block only, keeps every other line, and skips it next time", () => {
    const updated = withDatabaseId(wranglerToml, "sandbox", "DB", NEW_ID);
    const config = parse(updated) as {
      env: Record<string, { d1_databases: { database_id: string }[] }>;
    };
    expect(config.env.sandbox?.d1_databases[0]?.database_id).toBe(NEW_ID);
    expect(config.env.production?.d1_databases[0]?.database_id).toBe(
      "REPLACE-WITH-PRODUCTION-D1-ID",
    );
    const changed = updated.split("\n").filter((line, i) => line !== wranglerToml.split("\n")[i]);
    expect(changed).toEqual([`database_id = "${NEW_ID}"`]);
    // Once set, the database is not created again.
    expect(setupCommands(environmentResources(updated, "sandbox"))[0]).toEqual([
      "d1",
      "create",
      "production-monitoring-sandbox-shard-0",
    ]);
    // A shard's block is found by its binding.
    const shard = withDatabaseId(updated, "sandbox", "SHARD_1", NEW_ID.replace("0f", "1f"));
    const shards = parse(shard) as {
      env: Record<string, { d1_databases: { binding: string; database_id: string }[] }>;
    };
    expect(shards.env.sandbox?.d1_databases.map((d) => [d.binding, d.database_id])).toEqual([
      ["DB", NEW_ID],
      ["SHARD_0", "REPLACE-WITH-SANDBOX-SHARD-0-D1-ID"],
      ["SHARD_1", NEW_ID.replace("0f", "1f")],
    ]);
    expect(() => withDatabaseId(wranglerToml, "sandbox", "SHARD_9", NEW_ID)).toThrow(/SHARD_9/);
  });
});

/**
 * The Durable Objects' schemas through the one runner (src/db/object-migrations.ts): every
 * deployed object starts at the last of its steps, and an object stored by the code before
 * the runner (its tables there, a later column missing, no `object_schema`) ends at the same
 * schema as a new one, its rows kept.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { migrateObject, type ObjectMigration } from "../../src/db/object-migrations";
import { EXPORT_MIGRATIONS } from "../../src/exports/export-migrations";
import { SIGNAL_STORE_MIGRATIONS } from "../../src/machine-state/signal-store-migrations";
import { RATE_LIMITER_MIGRATIONS } from "../../src/rate-limit/rate-limiter-migrations";
import { REALTIME_MIGRATIONS } from "../../src/realtime/realtime-migrations";
import { LEASE_MIGRATIONS } from "../../src/streams/lease-migrations";
import {
  COMPANY_STREAM_MIGRATIONS,
  MACHINE_STREAM_MIGRATIONS,
} from "../../src/streams/stream-migrations";
import { TICKET_MIGRATIONS } from "../../src/streams/ticket-migrations";
import { ENDPOINT_MIGRATIONS } from "../../src/webhooks/endpoint-migrations";

type Namespace = DurableObjectNamespace<Rpc.DurableObjectBranded | undefined>;

/** Each deployed object's binding with its steps. */
const OBJECTS: [string, Namespace, readonly unknown[]][] = [
  ["RealtimeMachine", env.REALTIME_MACHINE as unknown as Namespace, REALTIME_MIGRATIONS],
  ["RateLimiter", env.RATE_LIMITER as unknown as Namespace, RATE_LIMITER_MIGRATIONS],
  ["SignalStore", env.SIGNAL_STORE as unknown as Namespace, SIGNAL_STORE_MIGRATIONS],
  ["MachineStream", env.MACHINE_STREAM as unknown as Namespace, MACHINE_STREAM_MIGRATIONS],
  ["CompanyStream", env.COMPANY_STREAM as unknown as Namespace, COMPANY_STREAM_MIGRATIONS],
  ["ConnectionLeases", env.CONNECTION_LEASES as unknown as Namespace, LEASE_MIGRATIONS],
  ["RealtimeTickets", env.REALTIME_TICKETS as unknown as Namespace, TICKET_MIGRATIONS],
  ["WebhookEndpoint", env.WEBHOOK_ENDPOINT as unknown as Namespace, ENDPOINT_MIGRATIONS],
  ["CompanyExports", env.COMPANY_EXPORTS as unknown as Namespace, EXPORT_MIGRATIONS],
];

/** A database's schema as a reader compares it: each table's columns, each index's table. */
function schemaOf(sql: SqlStorage): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const objects = sql
    .exec<{ type: string; name: string; tbl_name: string }>(
      "SELECT type, name, tbl_name FROM sqlite_master " +
        "WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
    )
    .toArray();
  for (const o of objects) {
    out[`${o.type} ${o.name}`] =
      o.type === "table" ? sql.exec(`PRAGMA table_info(${o.name})`).toArray() : { on: o.tbl_name };
  }
  return out;
}

/** The steps a database has run (src/db/object-migrations.ts), 0 before the runner. */
function versionOf(sql: SqlStorage): number {
  const table = sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'object_schema'").toArray();
  if (table.length === 0) return 0;
  return sql.exec<{ version: number }>("SELECT version FROM object_schema").one().version;
}

/** Empties a database, then makes it as the code before the runner left it. */
function storeTheOldWay(sql: SqlStorage, ddl: string): void {
  const names = sql
    .exec<{ type: string; name: string }>(
      "SELECT type, name FROM sqlite_master WHERE type = 'table' " +
        "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
    )
    .toArray();
  for (const { name } of names) sql.exec(`DROP TABLE ${name}`);
  sql.exec(ddl);
}

async function schemaAndVersion(stub: DurableObjectStub) {
  return runInDurableObject(stub, (_instance, ctx) => ({
    version: versionOf(ctx.storage.sql),
    schema: schemaOf(ctx.storage.sql),
  }));
}

describe("each Durable Object's schema", () => {
  it.each(OBJECTS)("%s starts at the last of its steps", async (_name, namespace, steps) => {
    const stub = namespace.get(namespace.idFromName(`fresh-${crypto.randomUUID()}`));
    const { version, schema } = await schemaAndVersion(stub);
    expect(steps.length).toBeGreaterThan(0);
    expect(version).toBe(steps.length);
    expect(Object.keys(schema).length).toBeGreaterThan(0);
  });
});

/**
 * The oldest schemas the code before the runner made (from its `CREATE TABLE IF NOT
 * EXISTS`), before the columns it added later by probing.
 */
const OLD_LEASES = `
  CREATE TABLE leases (id TEXT PRIMARY KEY, expires INTEGER NOT NULL);
  CREATE TABLE revoked (at INTEGER NOT NULL);
  INSERT INTO leases (id, expires) VALUES ('lease-1', 4102444800000);
`;
const OLD_SIGNAL_STORE = `
  CREATE TABLE blocks (
    signal_id INTEGER NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, sum REAL NOT NULL,
    lo REAL NOT NULL, hi REAL NOT NULL, minutes BLOB, samples BLOB,
    PRIMARY KEY (signal_id, hour));
  CREATE TABLE settings (id INTEGER PRIMARY KEY CHECK (id = 1), retention_ms INTEGER);
  INSERT INTO settings (id, retention_ms) VALUES (1, 86400000);
  INSERT INTO blocks (signal_id, hour, n, sum, lo, hi) VALUES (7, 3600000, 2, 3, 1, 2);
`;
const OLD_RATE_LIMITER = `
  CREATE TABLE hits (ts INTEGER PRIMARY KEY, n INTEGER NOT NULL);
  CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), period_ms INTEGER NOT NULL);
  INSERT INTO meta (id, period_ms) VALUES (1, 60000);
`;

describe("an object stored before the runner", () => {
  const cases: [string, Namespace, readonly ObjectMigration[], string, string][] = [
    [
      "ConnectionLeases",
      env.CONNECTION_LEASES as unknown as Namespace,
      LEASE_MIGRATIONS,
      OLD_LEASES,
      "SELECT id, stream FROM leases",
    ],
    [
      "SignalStore",
      env.SIGNAL_STORE as unknown as Namespace,
      SIGNAL_STORE_MIGRATIONS,
      OLD_SIGNAL_STORE,
      "SELECT retention_ms, hot_window_ms FROM settings",
    ],
    [
      "RateLimiter",
      env.RATE_LIMITER as unknown as Namespace,
      RATE_LIMITER_MIGRATIONS,
      OLD_RATE_LIMITER,
      "SELECT period_ms FROM meta",
    ],
  ];
  it.each(cases)(
    "%s ends at a new object's schema, with its rows",
    async (_name, namespace, steps, oldDdl, read) => {
      const fresh = await schemaAndVersion(
        namespace.get(namespace.idFromName(`new-${crypto.randomUUID()}`)),
      );
      const stub = namespace.get(namespace.idFromName(`old-${crypto.randomUUID()}`));
      await runInDurableObject(stub, (_instance, ctx) => storeTheOldWay(ctx.storage.sql, oldDdl));
      const before = await runInDurableObject(stub, (_instance, ctx) => ({
        version: versionOf(ctx.storage.sql),
        schema: schemaOf(ctx.storage.sql),
      }));
      expect(before.version).toBe(0);
      expect(before.schema).not.toEqual(fresh.schema);
      // What the object's constructor runs when it next starts (each object's constructor
      // calls the runner: the test above).
      await runInDurableObject(stub, (_instance, ctx) => migrateObject(ctx.storage, steps));
      const after = await schemaAndVersion(stub);
      expect(after).toEqual(fresh);
      const rows = await runInDurableObject(stub, (_instance, ctx) =>
        ctx.storage.sql.exec(read).toArray(),
      );
      expect(rows).toHaveLength(1);
      expect(Object.values(rows[0] ?? {})[0]).not.toBeNull();
    },
  );
});

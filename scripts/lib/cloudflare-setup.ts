/**
 * What `npm run setup:cloudflare` creates on a Cloudflare account for one environment of
 * wrangler.toml, and how it writes each new D1 database's id back into the file: the
 * directory (`DB`) and every shard (`SHARD_<n>`, docs/deploying.md), the queues and the R2
 * buckets. Pure functions (no
 * I/O), so that the tests can check them on the real wrangler.toml.
 */
import { parse } from "smol-toml";

/** One D1 database of an environment. */
export interface DatabaseResource {
  /** The binding name (`DB`, `SHARD_0`, ...). */
  binding: string;
  databaseName: string;
  /** The id in wrangler.toml; null while it is still a placeholder. */
  databaseId: string | null;
}

/** The account resources of one environment (`[env.<name>]` of wrangler.toml). */
export interface EnvironmentResources {
  env: string;
  /** Its D1 databases in file order: the directory first, then the shards. */
  databases: DatabaseResource[];
  /** Queues the Worker produces to or consumes from, dead-letter queues included. */
  queues: string[];
  /** R2 buckets (the signal archive and export files: `HISTORY`). */
  buckets: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface EnvTable {
  d1_databases?: { binding: string; database_name: string; database_id?: string }[];
  queues?: {
    producers?: { queue: string }[];
    consumers?: { queue: string; dead_letter_queue?: string }[];
  };
  r2_buckets?: { binding: string; bucket_name: string }[];
}

/**
 * Reads the resources of an environment from the text of wrangler.toml.
 *
 * @param toml the file's text; `env` the environment's name (`sandbox`, `production`).
 * @throws Error when the environment, or its `DB` database, is not in the file.
 */
export function environmentResources(toml: string, env: string): EnvironmentResources {
  const config = parse(toml) as { env?: Record<string, EnvTable> };
  const table = config.env?.[env];
  if (!table) throw new Error(`wrangler.toml has no [env.${env}]`);
  if (!table.d1_databases?.some((d) => d.binding === "DB")) {
    throw new Error(`[env.${env}] has no D1 database bound as DB`);
  }
  const queues = new Set<string>();
  for (const p of table.queues?.producers ?? []) queues.add(p.queue);
  for (const c of table.queues?.consumers ?? []) {
    queues.add(c.queue);
    if (c.dead_letter_queue) queues.add(c.dead_letter_queue);
  }
  const databases = (table.d1_databases ?? []).map((database) => {
    const id = database.database_id ?? "";
    return {
      binding: database.binding,
      databaseName: database.database_name,
      databaseId: UUID.test(id) && !/^0{8}-/.test(id) ? id : null,
    };
  });
  const buckets = [...new Set((table.r2_buckets ?? []).map((b) => b.bucket_name))];
  return { env, databases, queues: [...queues], buckets };
}

/**
 * The D1 binding names of the top level of wrangler.toml (local development) or of one
 * environment: what `npm run db:migrate` migrates, the directory and every shard alike.
 *
 * @param env the environment's name, or undefined for the top level.
 */
export function d1Bindings(toml: string, env?: string): string[] {
  const config = parse(toml) as EnvTable & { env?: Record<string, EnvTable> };
  const table = env === undefined ? config : config.env?.[env];
  if (!table) throw new Error(`wrangler.toml has no [env.${env}]`);
  return (table.d1_databases ?? []).map((d) => d.binding);
}

/**
 * The id of the database that `wrangler d1 create` printed (its output shows the new
 * binding as TOML or JSON, with `database_id`).
 *
 * @throws Error when the output holds no id.
 */
export function createdDatabaseId(output: string): string {
  const match = /"?database_id"?\s*[=:]\s*"([0-9a-f-]{36})"/i.exec(output);
  if (!match?.[1])
    throw new Error(`no database_id in the output of wrangler d1 create:\n${output}`);
  return match[1];
}

/**
 * wrangler.toml with the `database_id` of the `[[env.<env>.d1_databases]]` block of
 * `binding` set to `id`; every other line, comments included, unchanged.
 *
 * @throws Error when the environment has no such block with a `database_id` line.
 */
export function withDatabaseId(toml: string, env: string, binding: string, id: string): string {
  const header = `[[env.${env}.d1_databases]]`;
  let start = toml.indexOf(header);
  while (start >= 0 && !toml.slice(start).startsWith(`${header}\nbinding = "${binding}"`)) {
    start = toml.indexOf(header, start + header.length);
  }
  if (start < 0) throw new Error(`wrangler.toml has no ${header} with binding = "${binding}"`);
  const next = toml.indexOf("\n[", start + header.length);
  const end = next < 0 ? toml.length : next;
  const block = toml.slice(start, end);
  const replaced = block.replace(/^database_id = ".*"$/m, `database_id = "${id}"`);
  if (replaced === block && !block.includes(`database_id = "${id}"`)) {
    throw new Error(`${header} has no database_id line`);
  }
  return toml.slice(0, start) + replaced + toml.slice(end);
}

/**
 * The wrangler commands that create what the environment still lacks, in order.
 *
 * @returns argument lists for `wrangler` (a database only when its id is a placeholder;
 *   queues and buckets always, an existing one being kept by the caller).
 */
export function setupCommands(resources: EnvironmentResources): string[][] {
  return [
    ...resources.databases
      .filter((database) => database.databaseId === null)
      .map((database) => ["d1", "create", database.databaseName]),
    ...resources.queues.map((queue) => ["queues", "create", queue]),
    ...resources.buckets.map((bucket) => ["r2", "bucket", "create", bucket]),
  ];
}

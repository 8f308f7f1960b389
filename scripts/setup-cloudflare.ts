/**
 * `npm run setup:cloudflare -- --env sandbox [--dry-run]`: creates the D1 databases (the
 * directory `DB` and every shard `SHARD_<n>`), the Queues and the R2 bucket of one environment
 * of wrangler.toml on the Cloudflare account wrangler is logged in to (`npx wrangler login`),
 * and writes each new database's id into wrangler.toml. An existing queue or bucket is kept. Then it prints the remaining steps (the
 * operator secret, the migrations, the deployment).
 *
 * `--dry-run` prints the commands and the wrangler.toml change without running anything:
 * the only way to exercise it without an account (and without network).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  createdDatabaseId,
  environmentResources,
  setupCommands,
  withDatabaseId,
} from "./lib/cloudflare-setup";
import { PROJECT_ROOT } from "./lib/project";

const { values } = parseArgs({
  options: { env: { type: "string" }, "dry-run": { type: "boolean", default: false } },
});
const env = values.env;
if (env !== "sandbox" && env !== "production") {
  console.error("usage: npm run setup:cloudflare -- --env sandbox|production [--dry-run]");
  process.exit(2);
}
const dryRun = values["dry-run"] === true;
const configPath = join(PROJECT_ROOT, "wrangler.toml");
let toml = readFileSync(configPath, "utf8");
const resources = environmentResources(toml, env);

for (const args of setupCommands(resources)) {
  console.log(`${dryRun ? "would run" : "running"}: npx wrangler ${args.join(" ")}`);
  if (dryRun) continue;
  let output: string;
  try {
    output = execFileSync("npx", ["wrangler", ...args], { cwd: PROJECT_ROOT, encoding: "utf8" });
  } catch (error) {
    const text = String((error as { stderr?: string }).stderr ?? error);
    if (args[0] === "queues" && /already (exists|taken)/i.test(text)) {
      console.log(`  kept: queue ${args[2]} exists`);
      continue;
    }
    if (args[0] === "r2" && /already exists|already own/i.test(text)) {
      console.log(`  kept: bucket ${args[3]} exists`);
      continue;
    }
    throw error;
  }
  if (args[0] === "d1") {
    const binding = resources.databases.find((d) => d.databaseName === args[2])?.binding ?? "DB";
    const id = createdDatabaseId(output);
    toml = withDatabaseId(toml, env, binding, id);
    writeFileSync(configPath, toml);
    console.log(`  wrote database_id = "${id}" into the ${binding} block of wrangler.toml`);
  }
}
for (const database of resources.databases) {
  if (dryRun && database.databaseId === null) {
    console.log(
      `would write: database_id = "<the id printed by wrangler d1 create>" into the ${database.binding} block of [env.${env}]`,
    );
  }
}
console.log(`
Then:
  npx wrangler secret put OPERATOR_TOKEN --env ${env}   # a long random string
  npm run deploy${env === "sandbox" ? ":sandbox" : ""}                              # migrations of every database, then the Worker
  npm run operator -- --url https://<your worker> companies:create ...`);

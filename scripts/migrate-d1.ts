/**
 * `npm run db:migrate -- --local | --remote [--env sandbox|production]`: applies the D1
 * migrations (one stream, `migrations/`) to every D1 database of wrangler.toml's top level
 * or of one environment: the directory (`DB`) and every shard (`SHARD_<n>`), in file
 * order. Stops at the first failure. Used by `npm start`, `npm run deploy` and
 * `npm run deploy:sandbox` (docs/deploying.md).
 *
 * `--remote`: `wrangler d1 migrations apply <binding> --remote` for each binding. `--local`
 * (the databases of `wrangler dev`): all of them in one local runtime with wrangler's own
 * bookkeeping (./lib/local-migrations.ts), about five times faster than wrangler's command,
 * which starts a runtime per file. It prints one line per database.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { d1Bindings } from "./lib/cloudflare-setup";
import {
  applyLocalMigrations,
  localDatabases,
  recordAppliedMigrations,
} from "./lib/local-migrations";
import { PROJECT_ROOT, WRANGLER_BIN } from "./lib/project";

const { values } = parseArgs({
  options: {
    local: { type: "boolean", default: false },
    remote: { type: "boolean", default: false },
    env: { type: "string" },
  },
});
if (values.local === values.remote || (values.local && values.env)) {
  console.error("usage: npm run db:migrate -- --local | --remote [--env sandbox|production]");
  process.exit(2);
}
const toml = readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8");

if (values.local) {
  try {
    const databases = localDatabases(toml);
    const applied = await applyLocalMigrations(PROJECT_ROOT, databases);
    recordAppliedMigrations(PROJECT_ROOT, databases);
    for (const [binding, names] of applied) {
      console.log(
        names.length === 0
          ? `D1 migrations: the local database ${binding} is up to date.`
          : `D1 migrations applied to the local database ${binding}: ${names.join(", ")}.`,
      );
    }
  } catch (error) {
    console.error(`Applying the D1 migrations failed: ${String(error)}`);
    process.exit(1);
  }
} else {
  for (const binding of d1Bindings(toml, values.env)) {
    const args = [WRANGLER_BIN, "d1", "migrations", "apply", binding, "--remote"];
    if (values.env) args.push("--env", values.env);
    console.log(`D1 migrations: ${binding}`);
    const result = spawnSync(process.execPath, args, { cwd: PROJECT_ROOT, stdio: "inherit" });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
}

/**
 * `npm run db:migrate -- --local | --remote [--env sandbox|production]`: applies the D1
 * migrations (one stream, `migrations/`) to every D1 database of wrangler.toml's top level
 * or of one environment: the directory (`DB`) and every shard (`SHARD_<n>`), in file
 * order, each with `wrangler d1 migrations apply <binding>`. Stops at the first failure.
 * Used by `npm start`, `npm run deploy` and `npm run deploy:sandbox` (docs/deploying.md).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { d1Bindings } from "./lib/cloudflare-setup";
import { PROJECT_ROOT } from "./lib/project";

const { values } = parseArgs({
  options: {
    local: { type: "boolean", default: false },
    remote: { type: "boolean", default: false },
    env: { type: "string" },
  },
});
if (values.local === values.remote) {
  console.error("usage: npm run db:migrate -- --local | --remote [--env sandbox|production]");
  process.exit(2);
}
const wrangler = createRequire(join(PROJECT_ROOT, "package.json")).resolve(
  "wrangler/bin/wrangler.js",
);
const toml = readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8");
for (const binding of d1Bindings(toml, values.env)) {
  const args = [
    wrangler,
    "d1",
    "migrations",
    "apply",
    binding,
    values.local ? "--local" : "--remote",
  ];
  if (values.env) args.push("--env", values.env);
  console.log(`D1 migrations: ${binding}`);
  const result = spawnSync(process.execPath, args, { cwd: PROJECT_ROOT, stdio: "inherit" });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

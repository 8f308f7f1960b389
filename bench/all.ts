/**
 * `npm run bench`: every benchmark, one after the other (each starts its own
 * local Worker on its own port and database), so that a missed target in one
 * does not skip the others. Exits 1 when any of them failed or missed a target.
 */
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { ROOT } from "./lib/bench-env";

const TSX_CLI = createRequire(join(ROOT, "package.json")).resolve("tsx/cli");
const BENCHES = [
  "run.ts",
  "session-client.ts",
  "company-move.ts",
  "signals-plant.ts",
  "archive.ts",
  "rate-limit.ts",
  "realtime.ts",
  "reports.ts",
  "bounded.ts",
  "bounded-window.ts",
  "kpis.ts",
  "exports.ts",
  "webhooks.ts",
  "events.ts",
  "revocation.ts",
  "stop-reason.ts",
  "d1-load.ts",
  "detection.ts",
];

const failed: string[] = [];
for (const bench of BENCHES) {
  console.log(`\n=== bench/${bench}\n`);
  const result = spawnSync(process.execPath, [TSX_CLI, join(ROOT, "bench", bench)], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (result.status !== 0) failed.push(`bench/${bench} (exit ${result.status ?? result.signal})`);
}
console.log(
  failed.length === 0
    ? "\nEvery benchmark ran and met its targets."
    : `\nFailed or missed a target: ${failed.join(", ")}.`,
);
process.exitCode = failed.length === 0 ? 0 : 1;

/**
 * `npm run requests [-- FILE.http ...]`: runs the request collection (`requests/*.http`, or
 * the files given) against the local Worker, as VS Code's REST Client would, and fails on
 * the first answer that is not 2XX. The key is `$PM_KEY`, else the demo's full-access key of
 * Demo Plant A (`.wrangler/demo-keys.json`); the Worker is `$PM_URL`, else the one
 * `npm start` runs, whatever its port (./lib/local-server.ts).
 *
 * It leaves the demo as it found it (scripts/lib/requests-restore.ts): Asset 0's segment put
 * back as it was, and the records the run left deleted; then it compares every record and
 * Asset 0's running shift with what they were before, and prints one summary line saying
 * so, or what differs (and exits 1).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { demoFetch } from "./lib/demo-fetch";
import { readDemoKeys } from "./lib/demo-seed";
import { parseHttpFile, runHttpFile } from "./lib/http-files";
import { resolveBaseUrl } from "./lib/local-server";
import { PROJECT_ROOT } from "./lib/project";
import { compareWith, restore, takeSnapshot } from "./lib/requests-restore";

const REQUESTS_DIR = join(PROJECT_ROOT, "requests");
/** The machine the collection's realtime writes address: Asset 0 (requests/realtime.http). */
const REALTIME_MACHINE_ID = 1;

async function main(files: string[]): Promise<number> {
  const baseUrl = resolveBaseUrl();
  const key =
    process.env.PM_KEY ??
    readDemoKeys(baseUrl).find((k) => k.company === "Demo Plant A" && k.name === "demo-full-access")
      ?.key;
  if (!key) {
    console.error(
      `No key for ${baseUrl}: set PM_KEY (eval "$(npm run --silent demo-env)") or run npm start.`,
    );
    return 2;
  }
  const paths =
    files.length > 0
      ? files
      : readdirSync(REQUESTS_DIR)
          .filter((name) => name.endsWith(".http"))
          .sort()
          .map((name) => join(REQUESTS_DIR, name));
  // A request that was not done (a 429, a 503 with Retry-After such as one wrangler dev's proxy
  // lost, a connection closed unanswered) is sent again (docs/demo-data.md).
  const send = demoFetch({ onRetry: (line) => console.log(`  (retrying ${line})`) });
  const target = {
    baseUrl,
    key,
    fetch: (url: string, init: RequestInit) => send(new Request(url, init)),
  };
  const before = await takeSnapshot(target, REALTIME_MACHINE_ID);
  let failed = 0;
  let sent = 0;
  for (const path of paths) {
    console.log(path);
    const results = await runHttpFile(parseHttpFile(readFileSync(path, "utf8")), send, {
      env: { ...process.env, PM_KEY: key },
      overrides: { baseUrl },
    });
    for (const result of results) {
      console.log(`  ${result.status} ${result.method} ${result.url}  (${result.title})`);
      sent += 1;
      if (result.status < 200 || result.status > 299) failed += 1;
    }
  }
  const undone = await restore(target, before);
  const { differences, checked } = await compareWith(target, before);
  console.log(
    `Requests: ${sent} sent from ${paths.length} files, ` +
      `${failed === 0 ? "every answer 2XX" : `${failed} not 2XX`}; ` +
      (differences.length === 0
        ? `the demo left as found (${undone}; checked: ${checked}, as before).`
        : `the demo differs from before (${undone}): ${differences.join("; ")}.`),
  );
  if (differences.length > 0) return 1;
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));

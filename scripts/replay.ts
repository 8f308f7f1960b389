/**
 * `npm run replay`: fills the last 7 days of Demo Plant A from its recorded week, then plays
 * the running shift at the current time of day against a deployment (scripts/lib/replay.ts),
 * until Ctrl-C.
 *
 *   npm run replay -- [--url URL] [--key KEY] [--operator-token TOKEN] [--once]
 *
 * Defaults: `$PM_URL`, else the server `npm start` runs (whatever its port); the
 * "demo-full-access" key that `npm start` saved for it; and the operator token of `OPERATOR_TOKEN` or `.dev.vars`. Against another
 * deployment, give its URL, a key of its Demo Plant A and its operator token. `--once`
 * fills the week and plays the running shift so far, then exits. Every pass is idempotent
 * (docs/demo-data.md, "The demo week"). (`npm start` runs the replay itself unless given
 * `--no-replay`.)
 */
import { parseArgs } from "node:util";
import { DEMO_PLANT_A } from "./lib/demo-data";
import { readDemoKeys } from "./lib/demo-seed";
import { resolveBaseUrl } from "./lib/local-server";
import { resolveOperatorToken } from "./lib/project";
import { startReplay } from "./lib/replay";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    key: { type: "string" },
    "operator-token": { type: "string" },
    once: { type: "boolean", default: false },
  },
});
const baseUrl = resolveBaseUrl(values.url);
const key =
  values.key ??
  process.env.PM_KEY ??
  readDemoKeys(baseUrl).find((k) => k.company === DEMO_PLANT_A && k.name === "demo-full-access")
    ?.key;
if (!key) {
  console.error("No key: pass --key (a Demo Plant A key), or run npm start first (it saves them).");
  process.exit(2);
}
const operatorToken = values["operator-token"] ?? resolveOperatorToken();
const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
process.once("SIGTERM", () => controller.abort());
const { running } = await startReplay(
  { baseUrl, key, operatorToken },
  { signal: controller.signal },
);
if (values.once) controller.abort();
await running;

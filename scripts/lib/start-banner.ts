/**
 * The banner `npm start` prints once the API answers and the demo is loaded: the URLs, the
 * demo keys, the webhook secret, the follow-up commands and curl calls to paste, and where
 * the start-up time went. Every command in it works as printed against this server,
 * whatever its port (scripts/lib/local-server.ts).
 */
import { DEMO_PLANT_A, FLEET_B } from "./demo-data";
import { ASSET_0_POWER_ID, ASSET_0_UUID } from "./demo-ids";
import type { DemoKey } from "./demo-seed";
import { DEFAULT_BASE_URL } from "./project";

/** The day of the recorded data used in the example calls (a full working day). */
const EXAMPLE_DAY = "2022-09-05";
/** The body of the example metrics report: the shifts of the week from EXAMPLE_DAY. */
const EXAMPLE_METRICS_BODY = JSON.stringify({
  startDate: { between: { start: `${EXAMPLE_DAY}T00:00:00Z`, end: "2022-09-12T00:00:00Z" } },
  limit: 100,
});

/** What the banner shows. */
export interface BannerInput {
  /** The origin served, for example `http://127.0.0.1:8821`. */
  baseUrl: string;
  keys: readonly DemoKey[];
  /** Whether wrangler's output is on the terminal (else in `logName`). */
  verbose: boolean;
  /** The log file, relative to the project root. */
  logName: string;
  /** Whether the demo replay runs (it fills the last 7 days after the banner). */
  replay: boolean;
  /** The phases of the start and their durations in seconds, in order. */
  phases: readonly [string, number][];
}

const seconds = (s: number) => `${s.toFixed(1)} s`;

/**
 * Builds the banner's lines.
 *
 * @returns the text to print, starting and ending with an empty line.
 */
export function startBanner(input: BannerInput): string {
  const { baseUrl, keys } = input;
  const fullKey =
    keys.find((key) => key.company === DEMO_PLANT_A && key.name === "demo-full-access") ?? keys[0];
  const width = Math.max(...keys.map((key) => `${key.company} / ${key.name}`.length));
  // On another port than the default, the follow-up commands name it: a shell may still hold
  // the PM_URL of an earlier start.
  const urlOption = baseUrl === DEFAULT_BASE_URL ? "" : ` -- --url ${baseUrl}`;
  const total = input.phases.reduce((sum, [, s]) => sum + s, 0);
  const lines = [
    "",
    "=".repeat(72),
    `Production Monitoring API running at ${baseUrl}`,
    `API reference: ${baseUrl}/docs   (OpenAPI: ${baseUrl}/openapi.json)`,
    `Plant board:   ${baseUrl}/board   (enter the demo-full-access key)`,
    "",
    "Demo API keys (header x-api-key; also in .wrangler/demo-keys.json):",
    ...keys.map((key) => `  ${`${key.company} / ${key.name}`.padEnd(width)}  ${key.key}`),
  ];
  const secrets = new Map<string, string>();
  for (const key of keys) if (key.webhookSecret) secrets.set(key.company, key.webhookSecret);
  const plantSecret = secrets.get(DEMO_PLANT_A);
  if (secrets.size > 0) {
    lines.push("", "Webhook signing secrets (docs/webhooks.md; also in .wrangler/demo-keys.json):");
    for (const company of [DEMO_PLANT_A, FLEET_B]) {
      const secret = secrets.get(company);
      if (secret) lines.push(`  ${company.padEnd(width)}  ${secret}`);
    }
  }
  lines.push(
    "",
    "In another terminal of this folder: the keys and ids as shell variables (PM_URL, PM_KEY,",
    "PM_MACHINE_UUID, PM_WEBHOOK_SECRET, ...; docs/demo-data.md), then the request collection,",
    "the TypeScript client's examples and the MCP client against this server:",
    `  eval "$(npm run --silent demo-env${urlOption})"`,
    "  npm run requests",
    "  npm run client:examples",
    "  npm run mcp",
  );
  if (plantSecret) {
    lines.push(
      '  npm run receiver -- --secret "$PM_WEBHOOK_SECRET"   # a webhook receiver (docs/operator-api.md)',
    );
  }
  if (fullKey) {
    const header = `-H "x-api-key: ${fullKey.key}"`;
    const query =
      `start_time=${EXAMPLE_DAY}T00:00:00Z&end_time=${nextDay(EXAMPLE_DAY)}T00:00:00Z` +
      "&agg_unit=h&agg_function=avg";
    lines.push(
      "",
      "Try it:",
      "  # the machines of Demo Plant A",
      `  curl -s ${baseUrl}/v1/machines ${header}`,
      "  # the signals of Asset 0",
      `  curl -s ${baseUrl}/v1/machines/${ASSET_0_UUID}/signals ${header}`,
      `  # hourly average power of Asset 0 on ${EXAMPLE_DAY}`,
      `  curl -s "${baseUrl}/v1/machines/${ASSET_0_UUID}/signals/${ASSET_0_POWER_ID}?${query}" ${header}`,
      `  # OEE of Demo Plant A per machine and shift, the week from ${EXAMPLE_DAY}`,
      `  curl -s -X POST ${baseUrl}/v1/reports/metrics ${header} -H "content-type: application/json" -d '${EXAMPLE_METRICS_BODY}'`,
    );
  }
  lines.push(
    "",
    input.replay
      ? "Demo Plant A plays its recorded week at the current time of day: its last 7 days are being " +
          "filled in now, then the running shift plays live, every minute (npm start -- --no-replay " +
          "to switch off). Fleet B's history (three months of telemetry, its stops) loads next on a " +
          "first start, then its week. A line below says when each is done."
      : "The replay is off (--no-replay): no production plays live. Fleet B's history (three months " +
          "of telemetry, its stops) loads now on a first start; a line below says when it is done.",
    "",
    `Up in ${seconds(total)}: ${input.phases.map(([name, s]) => `${name} ${seconds(s)}`).join(", ")}.`,
  );
  if (!input.verbose) lines.push(`Request log: ${input.logName} (or: npm start -- --verbose)`);
  lines.push("Press Ctrl-C to stop.", "=".repeat(72), "");
  return lines.join("\n");
}

function nextDay(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + 1);
  return date.toISOString().slice(0, 10);
}

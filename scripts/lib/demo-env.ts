/**
 * The demo's keys and ids as shell `export` lines, for `eval "$(npm run --silent demo-env)"`:
 * the names the README, docs/demo-data.md and the request collection use.
 */
import { DEMO_PLANT_A, FLEET_B } from "./demo-data";
import { ASSET_0_COUNT_ID, ASSET_0_POWER_ID, ASSET_0_UUID } from "./demo-ids";

/** Quotes a value for a POSIX shell (single quotes; a `'` inside is closed and escaped). */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * Builds the `export` lines.
 *
 * @param baseUrl the Worker's origin, exported as `PM_URL`.
 * @param keys the demo keys (`DemoKey` of ./demo-seed.ts); a key that is missing is left out.
 * @returns one `export NAME='value'` per line: PM_URL, PM_KEY (Demo Plant A, every scope),
 *   PM_READ_KEY (Demo Plant A, read only), PM_FLEET_KEY (Fleet B, every scope),
 *   PM_WEBHOOK_SECRET (Demo Plant A's webhook signing secret, when known), PM_MACHINE_UUID
 *   (Asset 0), PM_POWER_ID and PM_COUNT_ID (its signals).
 */
export function demoEnvLines(
  baseUrl: string,
  keys: readonly { company: string; name: string; key: string; webhookSecret?: string }[],
): string[] {
  const keyOf = (company: string, name: string) =>
    keys.find((key) => key.company === company && key.name === name)?.key;
  const secretOf = (company: string) =>
    keys.find((key) => key.company === company && key.webhookSecret)?.webhookSecret;
  const values: [string, string | undefined][] = [
    ["PM_URL", baseUrl],
    ["PM_KEY", keyOf(DEMO_PLANT_A, "demo-full-access")],
    ["PM_READ_KEY", keyOf(DEMO_PLANT_A, "demo-read-only")],
    ["PM_FLEET_KEY", keyOf(FLEET_B, "fleet-full-access")],
    ["PM_WEBHOOK_SECRET", secretOf(DEMO_PLANT_A)],
    ["PM_MACHINE_UUID", ASSET_0_UUID],
    ["PM_POWER_ID", ASSET_0_POWER_ID],
    ["PM_COUNT_ID", ASSET_0_COUNT_ID],
  ];
  return values.flatMap(([name, value]) =>
    value === undefined ? [] : [`export ${name}=${shellQuote(value)}`],
  );
}

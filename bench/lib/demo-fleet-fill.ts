/**
 * Fleet B's part of what `npm start` runs after its banner (scripts/start.ts): its three
 * months of history, then its recorded week played up to now, for the benches that measure
 * the API while the demo loads.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildDemoCompanies, DEMO_PLANT_A, FLEET_B } from "../../scripts/lib/demo-data";
import { demoFetch } from "../../scripts/lib/demo-fetch";
import { loadFleetHistory, readFleetFiles } from "../../scripts/lib/demo-fleet-history";
import { seedDemo } from "../../scripts/lib/demo-seed";
import { connectOperator, type OperatorConnection } from "../../scripts/lib/operator-api";
import { Replay } from "../../scripts/lib/replay";
import { fillFleetWeek } from "../../scripts/lib/replay-fleet";
import { ROOT } from "./bench-env";

const readText = (path: string) => readFileSync(join(ROOT, path), "utf8");

/**
 * Loads the demo as `npm start` does before its banner (Fleet B's history deferred), every
 * call retrying what says nothing was done, as npm start's do (docs/demo-data.md).
 *
 * @param base the Worker's URL; `operatorToken` its operator token.
 * @returns the operator client and the full-access keys of Demo Plant A and Fleet B.
 * @throws Error when the seed made no such keys; HttpError from the API.
 */
export async function seedDemoBeforeBanner(base: string, operatorToken: string) {
  const quiet = () => undefined;
  const client = connectOperator(base, operatorToken, demoFetch({ onRetry: quiet }));
  console.log("Loading the demo as npm start does before its banner ...");
  const { keys } = await seedDemo(client, quiet, { deferFleetHistory: true, saveKeys: false });
  const plantKey = keys.find((k) => k.company === DEMO_PLANT_A && k.name === "demo-full-access");
  const fleetKey = keys.find((k) => k.company === FLEET_B);
  if (!plantKey || !fleetKey) throw new Error("no demo keys");
  return { client, plantKey, fleetKey };
}

/**
 * Loads Fleet B's history, then fills its week, as `npm start` does after its banner.
 *
 * @param options.base the Worker's URL; `client` the operator API; `fleetKey` a key of Fleet
 *   B with every scope (its id and secret); `operatorToken` the operator token; `log` where
 *   the loaders' lines go.
 * @param phase wraps each of the two steps (a timer of the bench's phases); by default runs it.
 * @throws HttpError from the API.
 */
export async function fillFleetB(
  options: {
    base: string;
    client: OperatorConnection;
    fleetKey: { companyId: number; key: string };
    operatorToken: string;
    log: (line: string) => void;
  },
  phase: (name: string, work: () => Promise<unknown>) => Promise<unknown> = (_, work) => work(),
): Promise<void> {
  const { base, client, fleetKey, operatorToken, log } = options;
  const [fleet] = buildDemoCompanies(readText, [FLEET_B]);
  if (!fleet) throw new Error("no Fleet B");
  const machines = (await (
    await fetch(`${base}/v1/machines`, { headers: { "x-api-key": fleetKey.key } })
  ).json()) as { id: number; name: string }[];
  await phase("Fleet B: history", () =>
    loadFleetHistory(client, fleetKey.companyId, machines, fleet, fleetKey.key, log),
  );
  await phase("Fleet B: week", () =>
    fillFleetWeek(
      new Replay({ baseUrl: base, key: fleetKey.key, operatorToken }, log),
      readFleetFiles(),
      Date.now(),
    ),
  );
}

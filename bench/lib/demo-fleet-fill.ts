/**
 * Fleet B's part of what `npm start` runs after its banner (scripts/start.ts): its three
 * months of history, then its recorded week played up to now, for the benches that measure
 * the API while the demo loads.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildDemoCompanies, FLEET_B } from "../../scripts/lib/demo-data";
import { loadFleetHistory, readFleetFiles } from "../../scripts/lib/demo-fleet-history";
import type { OperatorConnection } from "../../scripts/lib/operator-api";
import { Replay } from "../../scripts/lib/replay";
import { fillFleetWeek } from "../../scripts/lib/replay-fleet";
import { ROOT } from "./bench-env";

const readText = (path: string) => readFileSync(join(ROOT, path), "utf8");

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

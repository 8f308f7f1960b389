/**
 * Fleet B's history: three months of hourly telemetry of 20 machines (172,800 samples), its
 * 24-hour shift and its classified failure and maintenance stops. It is about two thirds of
 * the demo's first load, and nothing `npm start`'s banner shows needs it, so `npm start` loads
 * it after the banner ({@link completeFleetHistory}); `npm run seed` loads it with the rest.
 * Every step is idempotent (a sample at an existing instant replaces it; shift and stops are
 * created only when missing), so a load cut short is completed by the next start.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createClient } from "../../clients/typescript/src/index";
import { mapWithConcurrency } from "./concurrency";
import { buildDemoCompanies, DEMO_FILES, type DemoCompany, FLEET_B } from "./demo-data";
import { deriveFleetStops } from "./demo-operations";
import { loadFleetBOperations } from "./demo-seed-operations";
import { ok } from "./http";
import { loadSamples, type OperatorConnection } from "./operator-api";
import { PROJECT_ROOT } from "./project";
import type { FleetFiles } from "./replay-fleet";

/**
 * Signals whose samples are sent at the same time, and the most samples of a call: a week of
 * hourly samples (168 hour blocks stored in one step of the signal's store), as Plant A's
 * week is sent. The history loads after `npm start`'s banner, while the user already calls
 * the API: calls of a signal's whole three months (2,160 hour blocks in one step), four at a
 * time, held the local runtime's one thread for seconds (docs/demo-data.md).
 */
const SAMPLE_CONCURRENCY = 2;
const SAMPLES_PER_CALL = 168;

/**
 * Where `npm start` notes that Fleet B's history is complete, by Worker URL: inside the local
 * state, so that deleting `.wrangler/state` forgets it with the data.
 */
const RECORD_PATH = join(PROJECT_ROOT, ".wrangler", "state", "demo-fleet-history.json");

const readText = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");

/**
 * Reads Fleet B's source files (its recorded week's telemetry, machines, failures and
 * maintenance) from the project's demo data, for `fillFleetWeek` (./replay-fleet.ts).
 *
 * @throws Error when a file is missing.
 */
export function readFleetFiles(): FleetFiles {
  return {
    telemetry: readText(DEMO_FILES.azureTelemetry),
    machines: readText(DEMO_FILES.azureMachines),
    failures: readText(DEMO_FILES.azureFailures),
    maintenance: readText(DEMO_FILES.azureMaint),
  };
}

/**
 * Loads Fleet B's telemetry, shift and stops into its existing machines.
 *
 * @param client the operator API.
 * @param company Fleet B's id.
 * @param machines its machines ("Machine 1" ..), with the demo's signals.
 * @param definition Fleet B as ./demo-data.ts builds it (its samples).
 * @param apiKey a key of Fleet B with `reports.read` (the stops it already has).
 * @param log where progress lines go.
 * @throws HttpError from the API.
 */
export async function loadFleetHistory(
  client: OperatorConnection,
  company: number,
  machines: readonly { id: number; name: string }[],
  definition: DemoCompany,
  apiKey: string,
  log: (line: string) => void,
): Promise<void> {
  const uploads = definition.machines.flatMap((machine) =>
    machine.signals.map((signal) => {
      if (!signal.input.publicId) throw new Error(`${signal.input.name} has no fixed public id`);
      return {
        label: `${FLEET_B} / ${machine.input.name} / ${signal.input.name}`,
        publicId: signal.input.publicId,
        samples: signal.samples,
      };
    }),
  );
  await mapWithConcurrency(uploads, SAMPLE_CONCURRENCY, async (upload) => {
    const accepted = await loadSamples(client, upload.publicId, upload.samples, SAMPLES_PER_CALL);
    log(`  ${upload.label}: ${accepted} samples`);
  });
  const instants = uploads.flatMap((u) => u.samples.map((s) => Date.parse(s.timestamp)));
  if (instants.length === 0) throw new Error("Fleet B has no telemetry");
  const period = instants.reduce(
    (acc, t) => ({ min: Math.min(acc.min, t), max: Math.max(acc.max, t) }),
    { min: Number.POSITIVE_INFINITY, max: Number.NEGATIVE_INFINITY },
  );
  const stops = deriveFleetStops(
    readText(DEMO_FILES.azureFailures),
    readText(DEMO_FILES.azureMaint),
    period.min,
    period.max,
  );
  await loadFleetBOperations(client, company, machines, stops, apiKey, log);
}

/**
 * After `npm start`'s banner: completes Fleet B's history unless the record says it is
 * complete at this URL.
 *
 * @param keys the demo keys (Fleet B's finds its machines and stops).
 * @returns what it did, for one line of the terminal; null when there was nothing to do.
 * @throws HttpError from the API.
 */
export async function completeFleetHistory(
  client: OperatorConnection,
  keys: readonly { company: string; companyId: number; key: string }[],
  log: (line: string) => void,
): Promise<string | null> {
  const record = readRecord();
  const fleetKey = keys.find((key) => key.company === FLEET_B);
  if (!fleetKey || record[client.baseUrl]) return null;
  const [definition] = buildDemoCompanies(readText, [FLEET_B]);
  if (!definition) return null;
  const api = createClient({
    baseUrl: client.baseUrl,
    apiKey: fleetKey.key,
    maxRetries: 0,
    ...(client.fetch ? { fetch: client.fetch } : {}),
  });
  const machines = ok("GET", await api.GET("/v1/machines"));
  await loadFleetHistory(client, fleetKey.companyId, machines, definition, fleetKey.key, log);
  record[client.baseUrl] = new Date().toISOString();
  mkdirSync(dirname(RECORD_PATH), { recursive: true });
  writeFileSync(RECORD_PATH, `${JSON.stringify(record, null, 2)}\n`);
  const samples = definition.machines.reduce(
    (sum, machine) => sum + machine.signals.reduce((n, s) => n + s.samples.length, 0),
    0,
  );
  return `${samples} samples of ${definition.machines.length} machines, its shift and classified stops`;
}

function readRecord(): Record<string, string> {
  if (!existsSync(RECORD_PATH)) return {};
  try {
    return JSON.parse(readFileSync(RECORD_PATH, "utf8")) as Record<string, string>;
  } catch {
    return {};
  }
}

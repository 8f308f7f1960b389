/**
 * Loads the demo data set (./demo-data.ts, ./demo-operations.ts) into a running Worker,
 * once, and keeps the demo API keys in `.wrangler/demo-keys.json`: companies, keys,
 * machines, signals, samples, shifts and stops through the operator API; the catalog
 * and production logs through the public API with the demo full-access key.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createClient as createPublicClient } from "../../clients/typescript/src/index";
import { mapWithConcurrency } from "./concurrency";
import {
  buildDemoCompanies,
  DEMO_COMPANY_NAMES,
  DEMO_FILES,
  DEMO_KEYS,
  DEMO_PLANT_A,
  type DemoCompany,
  FLEET_B,
} from "./demo-data";
import { keepDocsStopReason } from "./demo-docs-stop";
import { loadFleetHistory } from "./demo-fleet-history";
import { deriveNominalSpeeds } from "./demo-nominal-speeds";
import { derivePlantAOperations, parseSmeRows } from "./demo-operations";
import { loadPlantAOperations } from "./demo-seed-operations";
import type { components } from "./generated/operator-api";
import { HttpError, ok } from "./http";
import {
  type ApiKeyInput,
  loadSamples,
  type Machine,
  type OperatorConnection,
  type Sample,
  type Scope,
} from "./operator-api";
import { PROJECT_ROOT } from "./project";

type Company = components["schemas"]["Company"];
/** A created company, with its webhook signing secret. */
type CreatedCompany = Company & { webhookSecret: string };

/** Where the demo keys are kept (git-ignored with the rest of `.wrangler/`). */
export const DEMO_KEYS_PATH = join(PROJECT_ROOT, ".wrangler", "demo-keys.json");

/** Signals whose samples are sent at the same time. */
const SAMPLE_CONCURRENCY = 4;

/** A demo API key as saved in the keys file. */
export interface DemoKey {
  /** Key name, for example `demo-full-access`. */
  name: string;
  /** Company name. */
  company: string;
  companyId: number;
  /** The whole key, for `x-api-key`. */
  key: string;
  /**
   * The company's webhook signing secret (the same on each key of the company), so that a
   * receiver of the demo's webhooks can verify them (docs/webhooks.md). Absent in a keys
   * file written before it was kept: {@link getDemoKeys} then rotates the secret to learn it.
   */
  webhookSecret?: string;
}

/** The keys file: demo keys per Worker base URL (local and remote seeds do not mix). */
type DemoKeysFile = Record<string, DemoKey[]>;

/** Result of {@link seedDemo}. */
export interface SeedResult {
  /** False when the demo was already loaded and nothing was sent. */
  seeded: boolean;
  keys: DemoKey[];
}

/**
 * A seed that failed after the companies were created: the demo is partly loaded
 * and later seeds will not complete it. `cause` is the original error.
 */
export class PartialSeedError extends Error {
  override readonly name = "PartialSeedError";

  /** @param cause the error that stopped the seed. */
  constructor(override readonly cause: unknown) {
    super(
      "The demo is partly loaded. For a local Worker: stop it, delete .wrangler/state, and start again.",
    );
  }
}

/** Progress lines go here (default: console.log). */
export type Log = (line: string) => void;

/** Options of {@link seedDemo}. */
export interface SeedOptions {
  /**
   * The demo companies to load (default both). Whatever the list, the demo counts as
   * loaded once "Demo Plant A" exists.
   */
  companies?: readonly string[];
  /**
   * Save the keys issued by this load in `.wrangler/demo-keys.json` (default true). When the
   * demo is already loaded, nothing is issued here and the keys come from {@link getDemoKeys}.
   */
  saveKeys?: boolean;
  /**
   * Leave Fleet B's telemetry, shift and stops (its machines, signals and keys are made here)
   * to `completeFleetHistory` of ./demo-fleet-history.ts, which `npm start` runs after its
   * banner. Default false: everything is loaded here.
   */
  deferFleetHistory?: boolean;
}

/** Reads a file of `data/` (path relative to the project root). */
const readDataFile = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");

/** The key of Demo Plant A that loads its catalog and production logs (every scope). */
const PLANT_A_LOADER_KEY = "demo-full-access";

/**
 * Demo Plant A's catalog of stop causes and the bench's recent stop that the stop-reason
 * example of `/docs` names (./demo-docs-stop.ts), at every load and start: the stop must be
 * recent when the example is pressed, whenever the demo was first loaded.
 */
async function keepDocsRecords(
  client: OperatorConnection,
  companies: readonly { id: number; name: string }[],
  keys: readonly DemoKey[],
): Promise<void> {
  const plantA = companies.find((company) => company.name === DEMO_PLANT_A);
  const key = keys.find((k) => k.company === DEMO_PLANT_A && k.name === PLANT_A_LOADER_KEY);
  if (plantA && key) await keepDocsStopReason(client, plantA.id, key.key);
}

/**
 * Loads the demo companies, keys, machines, signals and samples, then the shifts,
 * SKUs, operators, work orders, nominal speeds, production logs and stops
 * (data/README.md, "Production, stops and OEE"), unless "Demo Plant A" already exists
 * (then it only makes sure the keys are known).
 *
 * Prints one line per signal loaded and one per group of records. Samples are sent
 * for at most 4 signals at a time; the chunks of one signal go one after the other.
 * The keys are saved as soon as they are issued, before any sample is sent.
 *
 * @param client the operator API of the Worker.
 * @param log where progress lines go.
 * @param options the companies to load and whether to save the keys (default: both, saved).
 * @returns whether data was loaded, and the demo keys.
 * @throws HttpError from the API, Error on unreadable data files; PartialSeedError
 *   (wrapping the cause) when the failure came after the companies were created, since
 *   later runs will not complete that demo (they see "Demo Plant A" and stop).
 */
export async function seedDemo(
  client: OperatorConnection,
  log: Log = console.log,
  options: SeedOptions = {},
): Promise<SeedResult> {
  const existing = ok("GET", await client.api.GET("/companies"));
  if (existing.some((company) => company.name === DEMO_PLANT_A)) {
    const keys = await getDemoKeys(client, existing);
    await keepDocsRecords(client, existing, keys);
    return { seeded: false, keys };
  }
  const demo = buildDemoCompanies(readDataFile, options.companies ?? DEMO_COMPANY_NAMES);
  const companies = ok(
    "POST",
    await client.api.POST("/companies", { body: demo.map((company) => company.input) }),
  );
  try {
    const keys = await loadCompanies(client, demo, companies, log, {
      saveKeys: options.saveKeys ?? true,
      deferFleetHistory: options.deferFleetHistory ?? false,
    });
    await keepDocsRecords(client, companies, keys);
    return { seeded: true, keys };
  } catch (error) {
    throw new PartialSeedError(error);
  }
}

/**
 * Issues the keys (saved at once unless `saveKeys` is false), creates machines and
 * signals, sends the samples, then loads the operational records of each company.
 */
async function loadCompanies(
  client: OperatorConnection,
  demo: DemoCompany[],
  companies: CreatedCompany[],
  log: Log,
  { saveKeys, deferFleetHistory }: { saveKeys: boolean; deferFleetHistory: boolean },
): Promise<DemoKey[]> {
  const keys: DemoKey[] = [];
  for (const [i, company] of companies.entries()) {
    const issued = await issueKeys(client, company, demo[i]?.keys ?? []);
    keys.push(...issued.map((key) => ({ ...key, webhookSecret: company.webhookSecret })));
  }
  if (saveKeys) saveDemoKeys(client.baseUrl, keys);
  log(
    `Created ${companies.map((c) => `${c.name} (id ${c.id})`).join(", ")}` +
      (saveKeys ? `; keys in ${DEMO_KEYS_PATH}` : ""),
  );

  const uploads: { label: string; publicId: string; samples: Sample[] }[] = [];
  const machinesOf = new Map<string, Machine[]>();
  for (const [i, company] of companies.entries()) {
    const definition = demo[i];
    if (!definition) continue;
    const machines = ok(
      "POST",
      await client.api.POST("/companies/{company_id}/machines", {
        params: { path: { company_id: company.id } },
        body: definition.machines.map((machine) => machine.input),
      }),
    );
    machinesOf.set(company.name, machines);
    // Fleet B's samples go with the rest of its history (./demo-fleet-history.ts).
    const upload = company.name !== FLEET_B;
    for (const [j, machine] of machines.entries()) {
      const signals = definition.machines[j]?.signals ?? [];
      if (signals.length === 0) continue;
      const created = ok(
        "POST",
        await client.api.POST("/machines/{machine_id}/signals", {
          params: { path: { machine_id: machine.id } },
          body: signals.map((signal) => signal.input),
        }),
      );
      created.forEach((signal, k) => {
        if (!upload) return;
        uploads.push({
          label: `${company.name} / ${machine.name} / ${signal.name}`,
          publicId: signal.publicId,
          samples: signals[k]?.samples ?? [],
        });
      });
    }
  }
  await mapWithConcurrency(uploads, SAMPLE_CONCURRENCY, async (upload) => {
    const accepted = await loadSamples(client, upload.publicId, upload.samples);
    log(`  ${upload.label}: ${accepted} samples`);
  });
  log(`Loaded ${uploads.length} signals; loading shifts, catalog, production logs and stops ...`);
  await loadOperations(client, companies, machinesOf, keys, log);
  const fleet = companies.find((company) => company.name === FLEET_B);
  const fleetDefinition = demo.find((company) => company.input.name === FLEET_B);
  const fleetKey = keys.find((key) => key.company === FLEET_B);
  if (fleet && fleetDefinition && fleetKey && !deferFleetHistory) {
    const machines = machinesOf.get(FLEET_B) ?? [];
    await loadFleetHistory(client, fleet.id, machines, fleetDefinition, fleetKey.key, log);
  }
  log(deferFleetHistory && fleet ? "Demo loaded, but for Fleet B's history." : "Demo loaded.");
  return keys;
}

/** Derives and loads Demo Plant A's catalog, shifts, production logs and alarm stops. */
async function loadOperations(
  client: OperatorConnection,
  companies: CreatedCompany[],
  machinesOf: Map<string, Machine[]>,
  keys: DemoKey[],
  log: Log,
): Promise<void> {
  const company = companies.find((c) => c.name === DEMO_PLANT_A);
  if (!company) return;
  const key = keys.find((k) => k.company === company.name && k.name === PLANT_A_LOADER_KEY);
  if (!key) throw new Error(`No ${PLANT_A_LOADER_KEY} key was issued`);
  const sme = readDataFile(DEMO_FILES.sme);
  const ops = {
    ...derivePlantAOperations(sme),
    nominalSpeeds: deriveNominalSpeeds(parseSmeRows(sme), Date.now()),
  };
  await loadPlantAOperations(
    client,
    company.id,
    machinesOf.get(company.name) ?? [],
    key.key,
    ops,
    log,
  );
}

/**
 * Returns the demo keys of the Worker the client talks to: those saved in
 * `.wrangler/demo-keys.json` when they still belong to existing companies and still
 * open the public API; otherwise (file lost, or the data was reset) it issues fresh
 * keys for the existing demo companies and saves them. Old keys are not revoked
 * (their ids are not known).
 *
 * @param client the operator API of the Worker.
 * @param companies the company list when the caller already has it (saves a GET).
 * @returns the keys, full-access key of Demo Plant A first.
 * @throws Error when no demo company exists (run the seed first); HttpError from the API.
 */
export async function getDemoKeys(
  client: OperatorConnection,
  companies?: Company[],
): Promise<DemoKey[]> {
  const list = companies ?? ok("GET", await client.api.GET("/companies"));
  const saved = readDemoKeys(client.baseUrl);
  if (saved.length > 0 && (await keysStillValid(client.baseUrl, saved, list, client.fetch))) {
    if (saved.every((key) => key.webhookSecret)) return saved;
    const withSecrets = await withWebhookSecrets(client, saved);
    saveDemoKeys(client.baseUrl, withSecrets);
    return withSecrets;
  }

  const issued: DemoKey[] = [];
  for (const [name, definitions] of Object.entries(DEMO_KEYS)) {
    const company = list.find((c) => c.name === name);
    if (company) issued.push(...(await issueKeys(client, company, definitions)));
  }
  const keys = await withWebhookSecrets(client, issued);
  if (keys.length === 0) {
    throw new Error(
      `No demo company ("${DEMO_PLANT_A}", "${FLEET_B}") at ${client.baseUrl}: run the seed first.`,
    );
  }
  saveDemoKeys(client.baseUrl, keys);
  return keys;
}

/**
 * The keys with their company's webhook secret. The API shows a secret only when it issues
 * one, so a company whose secret is not known here gets a new one (`webhook-secret/rotate`;
 * for 24 hours deliveries carry both signatures, docs/webhooks.md).
 */
async function withWebhookSecrets(
  client: OperatorConnection,
  keys: readonly DemoKey[],
): Promise<DemoKey[]> {
  const secrets = new Map<number, string>();
  for (const key of keys) if (key.webhookSecret) secrets.set(key.companyId, key.webhookSecret);
  for (const companyId of new Set(keys.map((key) => key.companyId))) {
    if (secrets.has(companyId)) continue;
    const { webhookSecret } = ok(
      "POST",
      await client.api.POST("/companies/{company_id}/webhook-secret/rotate", {
        params: { path: { company_id: companyId } },
      }),
    );
    secrets.set(companyId, webhookSecret);
  }
  return keys.map((key) => ({ ...key, webhookSecret: secrets.get(key.companyId) ?? "" }));
}

/** Issues a company's demo keys and returns them in the keys-file shape. */
async function issueKeys(
  client: OperatorConnection,
  company: Company,
  definitions: readonly ApiKeyInput[],
): Promise<DemoKey[]> {
  if (definitions.length === 0) return [];
  const issued = ok(
    "POST",
    await client.api.POST("/companies/{company_id}/api-keys", {
      params: { path: { company_id: company.id } },
      body: definitions.map((key) => ({ ...key, scopes: [...key.scopes] as Scope[] })),
    }),
  );
  return issued.map((k) => ({
    name: k.name,
    company: company.name,
    companyId: company.id,
    key: k.key,
  }));
}

/**
 * Reads the saved demo keys of one Worker.
 *
 * @param baseUrl the Worker's base URL (the file is keyed by it).
 * @returns the keys, or [] when the file or the entry is missing or unreadable.
 */
export function readDemoKeys(baseUrl: string): DemoKey[] {
  return readKeysFile()[baseUrl] ?? [];
}

/**
 * Saves the demo keys of one Worker, keeping those of other Workers; creates
 * `.wrangler/` when needed.
 *
 * @param baseUrl the Worker's base URL.
 * @param keys the keys to save (replacing any saved for that URL).
 */
export function saveDemoKeys(baseUrl: string, keys: DemoKey[]): void {
  const file = readKeysFile();
  file[baseUrl] = keys;
  mkdirSync(dirname(DEMO_KEYS_PATH), { recursive: true });
  writeFileSync(DEMO_KEYS_PATH, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}

function readKeysFile(): DemoKeysFile {
  if (!existsSync(DEMO_KEYS_PATH)) return {};
  try {
    const parsed: unknown = JSON.parse(readFileSync(DEMO_KEYS_PATH, "utf8"));
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as DemoKeysFile)
      : {};
  } catch {
    return {};
  }
}

/**
 * True when every saved key's company still exists with the same id and name, and
 * the first key still opens the public API (a reset of the local data keeps the ids
 * but drops the keys).
 */
async function keysStillValid(
  baseUrl: string,
  keys: DemoKey[],
  companies: Company[],
  send?: (request: Request) => Promise<Response>,
): Promise<boolean> {
  const sameCompanies = keys.every((key) =>
    companies.some((company) => company.id === key.companyId && company.name === key.company),
  );
  const first = keys[0];
  if (!sameCompanies || !first) return false;
  try {
    // No retries of its own: a refused key must show at once.
    const api = createPublicClient({
      baseUrl,
      apiKey: first.key,
      maxRetries: 0,
      ...(send ? { fetch: send } : {}),
    });
    ok("GET", await api.GET("/v1/machines"));
    return true;
  } catch (error) {
    // Only a refused key proves the file stale; other failures are not ours to fix here.
    if (error instanceof HttpError && error.status === 401) return false;
    throw error;
  }
}

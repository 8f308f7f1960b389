/**
 * The demo data set, as pure functions from the CSV files of `data/` to what the
 * operator API takes (see data/README.md, "How the demo maps the data").
 *
 * - "Demo Plant A" (Europe/Rome): the real SME plant of Atzeni et al. (2023), three
 *   machines with a `power` and a `count` signal at 5-minute resolution, plus a
 *   machine without a uuid.
 * - "Fleet B" (UTC): 20 simulated machines of the Azure predictive-maintenance
 *   sample, four hourly analog signals each.
 */
import { latestPerTimestamp, parseCsv, toIsoUtc, toNumber } from "./csv";
import { demoMachineUuid, demoSignalId } from "./demo-ids";
import type { ApiKeyInput, CompanyInput, MachineInput, Sample, SignalInput } from "./operator-api";
import { ALL_SCOPES, READ_SCOPES } from "./scopes";

/** One signal to create, with its samples (time-ordered, one per instant). */
export interface DemoSignal {
  input: SignalInput;
  samples: Sample[];
}

/** One machine to create, with its signals. */
export interface DemoMachine {
  input: MachineInput;
  signals: DemoSignal[];
}

/** One company to create, with its API keys and machines. */
export interface DemoCompany {
  input: CompanyInput;
  keys: readonly ApiKeyInput[];
  machines: DemoMachine[];
}

/** Name of the demo's first company; its presence means the demo is already loaded. */
export const DEMO_PLANT_A = "Demo Plant A";
/** Name of the demo's second company. */
export const FLEET_B = "Fleet B";

/** Files of `data/` the demo reads, relative to the project root. */
export const DEMO_FILES = {
  sme: "data/sme-manufacturing-atzeni2023/company_A_labelled_subset.csv",
  azureTelemetry: "data/azure-pdm/PdM_telemetry.csv",
  azureMachines: "data/azure-pdm/PdM_machines.csv",
  azureFailures: "data/azure-pdm/PdM_failures.csv",
  azureMaint: "data/azure-pdm/PdM_maint.csv",
} as const;

const SME_SIGNALS = {
  power: {
    column: "power_avg",
    input: {
      name: "power",
      displayName: "Power",
      kind: "analog",
      description: {
        en: "Average electrical power over the 5-minute interval, in kW",
        es: "Potencia eléctrica media en el intervalo de 5 minutos, en kW",
      },
    },
  },
  count: {
    column: "items",
    input: {
      name: "count",
      displayName: "Piece count",
      kind: "counter",
      description: {
        en: "Pieces produced in the interval",
        es: "Piezas producidas en el intervalo",
      },
    },
  },
} as const satisfies Record<string, { column: string; input: SignalInput }>;

// The telemetry is hourly means of simulated sensors (Azure AI Gallery description);
// the source gives units for none of them, these are the usual readings of the sample.
const AZURE_SIGNALS = [
  {
    column: "volt",
    input: {
      name: "voltage",
      displayName: "Voltage",
      kind: "analog",
      description: {
        en: "Average supply voltage over the hour, in V",
        es: "Tensión de alimentación media en la hora, en V",
      },
    },
  },
  {
    column: "rotate",
    input: {
      name: "rotation",
      displayName: "Rotation speed",
      kind: "analog",
      description: {
        en: "Average rotation speed over the hour, in rpm",
        es: "Velocidad de rotación media en la hora, en rpm",
      },
    },
  },
  {
    column: "pressure",
    input: {
      name: "pressure",
      displayName: "Pressure",
      kind: "analog",
      description: {
        en: "Average pressure over the hour, in psi",
        es: "Presión media en la hora, en psi",
      },
    },
  },
  {
    column: "vibration",
    input: {
      name: "vibration",
      displayName: "Vibration",
      kind: "analog",
      description: {
        en: "Average vibration level over the hour (the source states no unit)",
        es: "Nivel medio de vibración en la hora (la fuente no indica la unidad)",
      },
    },
  },
] as const satisfies readonly { column: string; input: SignalInput }[];

/** The API keys of each demo company, by company name. */
export const DEMO_KEYS = {
  [DEMO_PLANT_A]: [
    { name: "demo-full-access", scopes: ALL_SCOPES },
    { name: "demo-read-only", scopes: READ_SCOPES },
  ],
  [FLEET_B]: [{ name: "fleet-full-access", scopes: ALL_SCOPES }],
} as const satisfies Record<string, readonly ApiKeyInput[]>;

/** A machine of Demo Plant A that is listed but has no uuid (no signals can be read). */
export const MANUAL_BENCH: MachineInput = { name: "Manual packing bench", uuid: null };

/**
 * Builds "Demo Plant A" from the SME file.
 *
 * One machine per `asset` value, in numeric order ("Asset 0", external name `asset-0`),
 * each with `power` (from `power_avg`, kW) and `count` (from `items`, pieces per
 * interval) sampled at the row's `ts`. Ids are fixed (./demo-ids.ts): "Asset n" is machine
 * number n + 1 of company `a`, power its signal 1, count its signal 2. When two rows share an asset and `ts`, the
 * later row wins. The manual bench (uuid null) comes last.
 *
 * @param smeCsv content of company_A_labelled_subset.csv.
 * @returns the company, its two keys (full access and read only) and four machines.
 * @throws Error on a missing column or a malformed field (message names the line).
 */
export function buildDemoPlantA(smeCsv: string): DemoCompany {
  const { rows } = parseCsv(smeCsv, [
    "ts",
    "asset",
    SME_SIGNALS.power.column,
    SME_SIGNALS.count.column,
  ]);
  const byAsset = new Map<string, { power: Sample[]; count: Sample[] }>();
  rows.forEach((row, index) => {
    const where = `SME line ${index + 2}`;
    const asset = String(toNumber(row.asset ?? "", `${where} asset`));
    const timestamp = toIsoUtc(row.ts ?? "");
    let series = byAsset.get(asset);
    if (!series) {
      series = { power: [], count: [] };
      byAsset.set(asset, series);
    }
    series.power.push({ timestamp, value: toNumber(row.power_avg ?? "", `${where} power_avg`) });
    series.count.push({ timestamp, value: toNumber(row.items ?? "", `${where} items`) });
  });
  const machines: DemoMachine[] = [...byAsset]
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([asset, series]) => {
      const number = Number(asset) + 1;
      return {
        input: {
          name: `Asset ${asset}`,
          uuid: demoMachineUuid("a", number),
          externalName: `asset-${asset}`,
        },
        signals: [
          {
            input: { ...SME_SIGNALS.power.input, publicId: demoSignalId("a", number, 1) },
            samples: latestPerTimestamp(series.power),
          },
          {
            input: { ...SME_SIGNALS.count.input, publicId: demoSignalId("a", number, 2) },
            samples: latestPerTimestamp(series.count),
          },
        ],
      };
    });
  machines.push({ input: MANUAL_BENCH, signals: [] });
  return {
    input: { name: DEMO_PLANT_A, timezone: "Europe/Rome" },
    keys: DEMO_KEYS[DEMO_PLANT_A],
    machines,
  };
}

/**
 * Builds "Fleet B" from the Azure PdM files.
 *
 * One machine per `machineID` in numeric order ("Machine 1", external name = its
 * `model` from PdM_machines.csv), with `voltage`, `rotation`, `pressure` and
 * `vibration` (kind `analog`) from the hourly telemetry; ids are fixed (./demo-ids.ts):
 * "Machine n" is machine number n of company `b`, its signals 1 to 4 in that order. Timestamps carry no zone
 * in the source and are read as UTC. The machines have no count signal, so they
 * are created with `isCountEnabled: false`.
 *
 * @param telemetryCsv content of PdM_telemetry.csv.
 * @param machinesCsv content of PdM_machines.csv.
 * @returns the company, its full-access key and 20 machines.
 * @throws Error on a missing column or a malformed field.
 */
export function buildFleetB(telemetryCsv: string, machinesCsv: string): DemoCompany {
  const models = new Map<string, string>();
  for (const row of parseCsv(machinesCsv, ["machineID", "model"]).rows) {
    models.set(String(toNumber(row.machineID ?? "", "PdM_machines machineID")), row.model ?? "");
  }
  const columns = AZURE_SIGNALS.map((signal) => signal.column);
  const { rows } = parseCsv(telemetryCsv, ["datetime", "machineID", ...columns]);
  const byMachine = new Map<string, Sample[][]>();
  rows.forEach((row, index) => {
    const where = `PdM_telemetry line ${index + 2}`;
    const machineId = String(toNumber(row.machineID ?? "", `${where} machineID`));
    const timestamp = toIsoUtc(row.datetime ?? "");
    let series = byMachine.get(machineId);
    if (!series) {
      series = columns.map(() => []);
      byMachine.set(machineId, series);
    }
    columns.forEach((column, i) => {
      series[i]?.push({ timestamp, value: toNumber(row[column] ?? "", `${where} ${column}`) });
    });
  });
  const machines: DemoMachine[] = [...byMachine]
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([machineId, series]) => {
      const model = models.get(machineId);
      const number = Number(machineId);
      return {
        input: {
          name: `Machine ${machineId}`,
          uuid: demoMachineUuid("b", number),
          ...(model ? { externalName: model } : {}),
          isCountEnabled: false,
        },
        signals: AZURE_SIGNALS.map((signal, i) => ({
          input: { ...signal.input, publicId: demoSignalId("b", number, i + 1) },
          samples: latestPerTimestamp(series[i] ?? []),
        })),
      };
    });
  return {
    input: { name: FLEET_B, timezone: "UTC" },
    keys: DEMO_KEYS[FLEET_B],
    machines,
  };
}

/** The demo companies, in the order they are created. */
export const DEMO_COMPANY_NAMES = [DEMO_PLANT_A, FLEET_B] as const;

/**
 * Builds demo companies from file contents (only the files of the companies asked for
 * are read).
 *
 * @param readText reads a file of {@link DEMO_FILES} (path relative to the project root).
 * @param names the companies to build, default both; kept in {@link DEMO_COMPANY_NAMES} order.
 * @returns the companies, Demo Plant A first.
 * @throws whatever `readText` throws, and the parse errors of the builders.
 */
export function buildDemoCompanies(
  readText: (path: string) => string,
  names: readonly string[] = DEMO_COMPANY_NAMES,
): DemoCompany[] {
  const out: DemoCompany[] = [];
  if (names.includes(DEMO_PLANT_A)) out.push(buildDemoPlantA(readText(DEMO_FILES.sme)));
  if (names.includes(FLEET_B)) {
    out.push(buildFleetB(readText(DEMO_FILES.azureTelemetry), readText(DEMO_FILES.azureMachines)));
  }
  return out;
}

/**
 * The demo's fixed ids (scripts/lib/demo-ids.ts): the demo data uses them, docs/demo-data.md
 * lists them as they are, and `npm run demo-env` exports them.
 */
import { describe, expect, it } from "vitest";
import smeCsv from "../../data/sme-manufacturing-atzeni2023/company_A_labelled_subset.csv?raw";
import doc from "../../docs/demo-data.md?raw";
import { buildDemoPlantA } from "../../scripts/lib/demo-data";
import { demoEnvLines } from "../../scripts/lib/demo-env";
import {
  ASSET_0_COUNT_ID,
  ASSET_0_POWER_ID,
  ASSET_0_UUID,
  DOCS_RECORDS,
  demoMachineUuid,
  demoRecordId,
  demoSignalId,
} from "../../scripts/lib/demo-ids";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const FLEET_SIGNALS = ["voltage", "rotation", "pressure", "vibration"];

/** The rows of the machines table of docs/demo-data.md. */
function documentedMachines() {
  return [
    ...doc.matchAll(/^\| (Demo Plant A|Fleet B) \| ([^|]+) \| (\d+) \| ([^|]+) \| ([^|]+) \|$/gm),
  ].map(([, plant, machine, id, uuid, signals]) => ({
    plant,
    machine: machine?.trim(),
    id: Number(id),
    uuid: uuid?.trim().replaceAll("`", ""),
    signals: [...(signals ?? "").matchAll(/(\w+) `([0-9a-f-]+)`/g)].map(([, name, publicId]) => ({
      name,
      publicId,
    })),
  }));
}

describe("the demo's fixed ids", () => {
  it("of the records the /docs examples name are uuids, distinct, and listed in docs/demo-data.md", () => {
    const ids = Object.values(DOCS_RECORDS);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(DOCS_RECORDS.sku).toBe("a1000000-0000-4000-8000-000000000001");
    expect(demoRecordId("a", "productionLog", 2)).toBe("a4000000-0000-4000-8000-000000000002");
    expect(() => demoRecordId("a", "sku", 0)).toThrow(RangeError);
    const documented = [
      ...doc.matchAll(
        /^\| (?:SKU|Simple work order|Nominal speed|Production log) \| `([0-9a-f-]+)` \|/gm,
      ),
    ].map((m) => m[1]);
    expect(documented.sort()).toEqual([...ids].sort());
  });

  it("are version-4 uuids, distinct, and refused outside 1..999,999", () => {
    const ids = [
      ...[1, 2, 3].flatMap((n) => [demoMachineUuid("a", n), demoSignalId("a", n, 1)]),
      ...[1, 20].flatMap((n) => [demoMachineUuid("b", n), demoSignalId("b", n, 4)]),
    ];
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ASSET_0_UUID).toBe("a0000000-0000-4000-8000-000001000000");
    expect(ASSET_0_POWER_ID).toBe("a5000000-0000-4000-8000-000001000001");
    expect(() => demoMachineUuid("a", 0)).toThrow(RangeError);
    expect(() => demoSignalId("b", 1, 1_000_000)).toThrow(RangeError);
  });

  it("are the ones Demo Plant A is built with", () => {
    const plant = buildDemoPlantA(smeCsv);
    expect(
      plant.machines.map((machine) => ({
        name: machine.input.name,
        uuid: machine.input.uuid,
        signals: machine.signals.map((signal) => [signal.input.name, signal.input.publicId]),
      })),
    ).toEqual([
      ...[0, 1, 2].map((asset) => ({
        name: `Asset ${asset}`,
        uuid: demoMachineUuid("a", asset + 1),
        signals: [
          ["power", demoSignalId("a", asset + 1, 1)],
          ["count", demoSignalId("a", asset + 1, 2)],
        ],
      })),
      { name: "Manual packing bench", uuid: null, signals: [] },
    ]);
  });

  it("are listed in docs/demo-data.md exactly", () => {
    const expected = [
      ...[0, 1, 2].map((asset) => ({
        plant: "Demo Plant A",
        machine: `Asset ${asset}`,
        id: asset + 1,
        uuid: demoMachineUuid("a", asset + 1),
        signals: ["power", "count"].map((name, i) => ({
          name,
          publicId: demoSignalId("a", asset + 1, i + 1),
        })),
      })),
      {
        plant: "Demo Plant A",
        machine: "Manual packing bench",
        id: 4,
        uuid: "(none)",
        signals: [],
      },
      ...Array.from({ length: 20 }, (_, i) => ({
        plant: "Fleet B",
        machine: `Machine ${i + 1}`,
        // The second shard's range (docs/scaling.md): ids from 2^40 + 1.
        id: 2 ** 40 + i + 1,
        uuid: demoMachineUuid("b", i + 1),
        signals: FLEET_SIGNALS.map((name, s) => ({
          name,
          publicId: demoSignalId("b", i + 1, s + 1),
        })),
      })),
    ];
    expect(documentedMachines()).toEqual(expected);
  });

  it("are exported by demo-env with the keys, quoted for the shell", () => {
    const key = (company: string, name: string, value: string) => ({
      company,
      name,
      companyId: 1,
      key: value,
    });
    const lines = demoEnvLines("http://127.0.0.1:8821", [
      key("Demo Plant A", "demo-full-access", "pm_abc"),
      { ...key("Demo Plant A", "demo-read-only", "pm_it's"), webhookSecret: "whsec_a" },
      { ...key("Fleet B", "fleet-full-access", "pm_fleet"), webhookSecret: "whsec_b" },
    ]);
    expect(lines).toEqual([
      "export PM_URL='http://127.0.0.1:8821'",
      "export PM_KEY='pm_abc'",
      "export PM_READ_KEY='pm_it'\\''s'",
      "export PM_FLEET_KEY='pm_fleet'",
      "export PM_WEBHOOK_SECRET='whsec_a'",
      `export PM_MACHINE_UUID='${ASSET_0_UUID}'`,
      `export PM_POWER_ID='${ASSET_0_POWER_ID}'`,
      `export PM_COUNT_ID='${ASSET_0_COUNT_ID}'`,
    ]);
  });
});

/**
 * The fixed ids of the demo data: every fresh install gets the same machine uuids, signal
 * public ids, and ids of the records the examples of `/docs` name (a SKU, a simple work
 * order, a nominal speed and a production log of the data, and a placeholder of each kind for
 * the DELETE examples), so that the README's commands, the request collection (requests/), the client
 * examples and "Try it out" work as pasted. docs/demo-data.md lists them all; a test
 * (test/scripts/demo-ids.test.ts) keeps those tables equal to this module.
 *
 * The pattern is readable on purpose: `{company}{kind}000000-0000-4000-8000-{machine}{signal}`
 * with company `a` (Demo Plant A) or `b` (Fleet B), kind `0` for a machine and `5` for a
 * signal, the machine's number and the signal's number (from 1) in six decimal digits each.
 * Every id is a valid version-4 uuid (the API takes any uuid).
 */

/** The demo company an id belongs to: `a` = Demo Plant A, `b` = Fleet B. */
export type DemoCompanyLetter = "a" | "b";

/**
 * The uuid of a demo machine.
 *
 * @param company `a` (Demo Plant A) or `b` (Fleet B).
 * @param machine the machine's number: Plant A's "Asset n" is n + 1, Fleet B's "Machine n" is n
 *   (1 to 999,999).
 * @returns for example `a0000000-0000-4000-8000-000001000000` for Asset 0.
 * @throws RangeError when the number is not an integer from 1 to 999,999.
 */
export function demoMachineUuid(company: DemoCompanyLetter, machine: number): string {
  return `${company}0000000-0000-4000-8000-${six(machine)}000000`;
}

/**
 * The public id of a demo signal.
 *
 * @param company `a` or `b`, as for {@link demoMachineUuid}.
 * @param machine the machine's number, as for {@link demoMachineUuid}.
 * @param signal the signal's number on its machine, from 1 in the order the demo creates them
 *   (Plant A: power, count; Fleet B: voltage, rotation, pressure, vibration).
 * @returns for example `a5000000-0000-4000-8000-000001000001` for Asset 0's power.
 * @throws RangeError when a number is not an integer from 1 to 999,999.
 */
export function demoSignalId(company: DemoCompanyLetter, machine: number, signal: number): string {
  return `${company}5000000-0000-4000-8000-${six(machine)}${six(signal)}`;
}

function six(n: number): string {
  if (!Number.isInteger(n) || n < 1 || n > 999_999) {
    throw new RangeError(`A demo id number runs from 1 to 999,999, got ${n}`);
  }
  return String(n).padStart(6, "0");
}

/** The machine of the examples: Demo Plant A's "Asset 0". */
export const ASSET_0_UUID = demoMachineUuid("a", 1);
/** Asset 0's `power` signal (kW, 5-minute averages). */
export const ASSET_0_POWER_ID = demoSignalId("a", 1, 1);
/** Asset 0's `count` signal (pieces per 5 minutes). */
export const ASSET_0_COUNT_ID = demoSignalId("a", 1, 2);

/** The record kinds with fixed ids, and their digit in the id. */
export const DEMO_RECORD_KINDS = {
  sku: 1,
  simpleWorkOrder: 2,
  nominalSpeed: 3,
  productionLog: 4,
} as const;
export type DemoRecordKind = keyof typeof DEMO_RECORD_KINDS;

/**
 * The id of a demo record of the public API: `{company}{kind}000000-0000-4000-8000-{n}`
 * with the kind's digit (1 SKU, 2 simple work order, 3 nominal speed, 4 production log)
 * and the record's number in twelve digits.
 *
 * @param company `a` or `b`, as for {@link demoMachineUuid}.
 * @param kind the record's kind.
 * @param n the record's number, 1 to 999,999.
 * @returns for example `a1000000-0000-4000-8000-000000000001` for the example SKU.
 * @throws RangeError when `n` is not an integer from 1 to 999,999.
 */
export function demoRecordId(company: DemoCompanyLetter, kind: DemoRecordKind, n: number): string {
  return `${company}${DEMO_RECORD_KINDS[kind]}000000-0000-4000-8000-000000${six(n)}`;
}

/**
 * Demo Plant A's records named by the examples of `/docs`: number 1 of each kind is a record
 * of the data (GET and PATCH examples); number 2 is the DELETE example's placeholder, which
 * no record has (the page puts there the id its create example answered: docs/demo-data.md).
 */
export const DOCS_RECORDS = {
  /** SKU P00, which Asset 0 has a nominal speed for (the realtime SKU write's example). */
  sku: demoRecordId("a", "sku", 1),
  /** The DELETE example's placeholder. */
  disposableSku: demoRecordId("a", "sku", 2),
  /** Simple work order WO-2022-W35. */
  simpleWorkOrder: demoRecordId("a", "simpleWorkOrder", 1),
  /** The DELETE example's placeholder. */
  disposableSimpleWorkOrder: demoRecordId("a", "simpleWorkOrder", 2),
  /** Asset 0's nominal speed for P00. */
  nominalSpeed: demoRecordId("a", "nominalSpeed", 1),
  /** The DELETE example's placeholder. */
  disposableNominalSpeed: demoRecordId("a", "nominalSpeed", 2),
  /** The first production log of the data (Asset 0, P00). */
  productionLog: demoRecordId("a", "productionLog", 1),
  /** The DELETE example's placeholder. */
  disposableProductionLog: demoRecordId("a", "productionLog", 2),
} as const;

/**
 * The reason of the manual packing bench's stop, kept recent for the stop-reason example of
 * `/docs` (./demo-docs-stop.ts); the example gives the same reason (src/http/examples.ts
 * `EXAMPLE_STOP_REASON`), so pressing it changes nothing.
 */
export const DOCS_STOP_REASON = {
  generalCause: "Material shortage",
  specificCause: "Waiting for cartons",
} as const;

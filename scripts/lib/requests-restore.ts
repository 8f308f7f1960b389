/**
 * What `npm run requests` does around the collection so that it leaves the live demo as it
 * found it, and says so only when the data shows it (requests/README.md):
 *
 * - before: a snapshot of the company's records (SKUs, operators, simple work orders, nominal
 *   speeds, production logs) and of the realtime state of the machine the collection writes
 *   to (Asset 0);
 * - after: the machine's segment put back as it was (the collection's SKU write replaced the
 *   segment running then, by its `start`; writing the snapshot's SKU, work order, quantity and
 *   `custom` with that `start` replaces it again, so the live log keeps its id and no segment
 *   is added), and every record the run created and did not delete itself deleted;
 * - then a second snapshot compared with the first, record by record.
 */

import { demoFetch } from "./demo-fetch";

/** How to call the public API of the demo. */
export interface Target {
  baseUrl: string;
  key: string;
  /** The fetch to send with (default: the global one, with the demo load's retries). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

/** The realtime segment a machine is on (`current` of `GET /v1/realtime/{id}`). */
interface Segment {
  start: string;
  sku: { id: string; sku: string };
  simpleWorkOrder: { id: string; name: string } | null;
  quantity: number | null;
  custom: Record<string, unknown> | null;
}

interface RealtimeState {
  current: Segment | null;
  operators: { id: number; start: string }[];
}

type Row = Record<string, unknown> & { id: string | number };

/**
 * The record kinds, with their search, the answer's list field, and what of a row is
 * compared: everything but `updatedAt` (a PATCH to the same values moves it) and, for
 * production logs, the figures of a live log (the replay and the samples move them).
 */
const KINDS = [
  {
    label: "production log",
    search: "/v1/production-logs/filters",
    list: "productionLogs",
    path: "/v1/production-logs",
  },
  {
    label: "nominal speed",
    search: "/v1/nominal-speeds/filters",
    list: "nominalSpeeds",
    path: "/v1/nominal-speeds",
  },
  { label: "operator", search: "/v1/operators/filters", list: "operators", path: "/v1/operators" },
  { label: "SKU", search: "/v1/skus/filters", list: "skus", path: "/v1/skus" },
  {
    label: "work order",
    search: "/v1/simple-work-orders/filters",
    list: "simpleWorkOrders",
    path: "/v1/simple-work-orders",
  },
] as const;

/** A row as compared before and after. */
interface Kept {
  /**
   * The row without `updatedAt` (a PATCH to the same values moves it), related records by id.
   */
  fingerprint: string;
  /** Its machine, SKU and start: all that is compared of a log that was live (below). */
  fixed: string;
  /**
   * A live production log: its figures and end move with the samples and it closes at the
   * shift's end, so only `fixed` is compared; and one that began after the snapshot is a
   * segment the replay started meanwhile.
   */
  live: boolean;
  /** `start` in ms, when the row has one. */
  start: number;
}

function keep(row: Row): Kept {
  const { updatedAt: _updated, ...rest } = row;
  // A related record by its id: renaming a SKU is one change, not one per log that shows it.
  const own = Object.entries(rest).map(([name, value]) =>
    value !== null && typeof value === "object" && "id" in value ? [name, value.id] : [name, value],
  );
  return {
    fingerprint: JSON.stringify(own),
    fixed: JSON.stringify(
      own.filter(([name]) => ["machine", "sku", "start"].includes(String(name))),
    ),
    live: row.live === true,
    start: typeof row.start === "string" ? Date.parse(row.start) : Number.NaN,
  };
}

/** A live log that began after the snapshot: a segment the replay started meanwhile. */
const replayed = (row: Kept, before: { takenAt: number }) => row.live && row.start > before.takenAt;

/** Whether a row is as it was. */
const unchanged = (was: Kept, is: Kept) =>
  was.live ? was.fixed === is.fixed : was.fingerprint === is.fingerprint;

/** The state the run is compared against. */
export interface Snapshot {
  machineId: number;
  /** When it was taken (ms): a segment the replay starts later is not the run's doing. */
  takenAt: number;
  /** null when the machine runs no shift (409). */
  realtime: RealtimeState | null;
  /** Each kind's rows by id, as compared. */
  records: Map<string, Map<string, Kept>>;
}

/**
 * The global fetch with the demo load's retries (./demo-fetch.ts): a read that `wrangler dev`'s
 * proxy lost on a keep-alive connection is sent again rather than taken for a failed check.
 */
const retrying = demoFetch();
const retryingFetch = (url: string, init: RequestInit) => retrying(new Request(url, init));

async function call<T>(target: Target, path: string, init: RequestInit = {}): Promise<T | null> {
  const send = target.fetch ?? retryingFetch;
  const res = await send(`${target.baseUrl}${path}`, {
    ...init,
    headers: { "x-api-key": target.key, "content-type": "application/json" },
  });
  const text = await res.text();
  if (res.status === 409) return null;
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text}`);
  return text === "" ? null : (JSON.parse(text) as T);
}

async function allRows(target: Target, kind: (typeof KINDS)[number]): Promise<Map<string, Kept>> {
  const rows = new Map<string, Kept>();
  for (let page = 1; page <= 1000; page++) {
    const body = await call<Record<string, unknown> & { totalPages: number }>(target, kind.search, {
      method: "POST",
      body: JSON.stringify({ limit: 100, page }),
    });
    for (const row of (body?.[kind.list] ?? []) as Row[]) {
      rows.set(String(row.id), keep(row));
    }
    if (!body || page >= body.totalPages) break;
  }
  return rows;
}

/**
 * Reads what a run may change.
 *
 * @param machineId the machine the collection's realtime writes address (Asset 0).
 * @throws Error on an answer other than 2XX (409 for the realtime state excepted).
 */
export async function takeSnapshot(target: Target, machineId: number): Promise<Snapshot> {
  const takenAt = Date.now();
  const realtime = await call<RealtimeState>(target, `/v1/realtime/${machineId}`);
  const records = new Map<string, Map<string, Kept>>();
  for (const kind of KINDS) records.set(kind.label, await allRows(target, kind));
  return { machineId, takenAt, realtime, records };
}

const sameSegment = (a: Segment, b: Segment) =>
  a.start === b.start &&
  a.sku.id === b.sku.id &&
  (a.simpleWorkOrder?.id ?? null) === (b.simpleWorkOrder?.id ?? null) &&
  a.quantity === b.quantity &&
  JSON.stringify(a.custom) === JSON.stringify(b.custom);

/**
 * Undoes what the run left, and says what it did in one phrase.
 *
 * @returns for the summary line, for example `machine 1 back on P04; deleted 1 work order it left`.
 * @throws Error on an answer other than 2XX.
 */
export async function restore(target: Target, before: Snapshot): Promise<string> {
  const done: string[] = [];
  const was = before.realtime?.current ?? null;
  const now = (await call<RealtimeState>(target, `/v1/realtime/${before.machineId}`))?.current;
  // The collection writes with the start of the segment running before it (requests/realtime.http):
  // the same start replaces that segment whether or not a later one has begun since.
  if (was && !(now && sameSegment(now, was))) {
    await call(target, `/v1/realtime/${before.machineId}/sku`, {
      method: "POST",
      body: JSON.stringify({
        skuId: was.sku.id,
        simpleWorkOrderId: was.simpleWorkOrder?.id ?? null,
        quantity: was.quantity,
        custom: was.custom,
        start: was.start,
      }),
    });
    done.push(
      `machine ${before.machineId} back on ${was.sku.sku}` +
        (was.simpleWorkOrder ? ` for ${was.simpleWorkOrder.name}` : " without a work order"),
    );
  }
  // Work orders last: the realtime write above no longer names the run's work order.
  for (const kind of KINDS) {
    const seen = before.records.get(kind.label) ?? new Map();
    const left = [...(await allRows(target, kind))]
      .filter(([id, row]) => !seen.has(id) && !replayed(row, before))
      .map(([id]) => id);
    for (const id of left) await call(target, `${kind.path}/${id}`, { method: "DELETE" });
    if (left.length > 0)
      done.push(`deleted ${left.length} ${kind.label}${left.length > 1 ? "s" : ""} it left`);
  }
  return done.length > 0 ? done.join("; ") : "nothing to undo";
}

/**
 * Compares the demo with a snapshot taken before the run.
 *
 * @param options `replayRuns` (default true): the demo replay may have begun segments during
 *   the run, so a segment and a live log that began after the snapshot are not the run's; with
 *   false (no replay), they are differences too.
 * @returns what differs, one phrase each (empty when every record and the machine's
 *   realtime state are as they were), and what was checked, for the summary line.
 */
export async function compareWith(
  target: Target,
  before: Snapshot,
  options: { replayRuns?: boolean } = {},
): Promise<{ differences: string[]; checked: string }> {
  const replayRuns = options.replayRuns ?? true;
  const after = await takeSnapshot(target, before.machineId);
  const differences: string[] = [];
  const counts: string[] = [];
  for (const kind of KINDS) {
    const was = before.records.get(kind.label) ?? new Map();
    const is = after.records.get(kind.label) ?? new Map();
    counts.push(`${is.size} ${kind.label}s`);
    const added = [...is]
      .filter(([id, row]) => !was.has(id) && !(replayRuns && replayed(row, before)))
      .map(([id]) => id);
    const removed = [...was.keys()].filter((id) => !is.has(id));
    const changed = [...is]
      .filter(([id, row]) => {
        const old = was.get(id);
        return old !== undefined && !unchanged(old, row);
      })
      .map(([id]) => id);
    if (added.length > 0) differences.push(`${kind.label}s added: ${added.join(", ")}`);
    if (removed.length > 0) differences.push(`${kind.label}s gone: ${removed.join(", ")}`);
    if (changed.length > 0) differences.push(`${kind.label}s changed: ${changed.join(", ")}`);
  }
  const machine = `machine ${before.machineId}`;
  const was = before.realtime;
  const is = after.realtime;
  if ((was === null) !== (is === null)) {
    differences.push(`${machine} ${was ? "no longer runs" : "now runs"} a shift`);
  } else if (was && is) {
    const a = was.current;
    const b = is.current;
    // A segment that began after the snapshot is the replay playing the recorded plant on.
    const replayMovedOn = replayRuns && b !== null && Date.parse(b.start) > before.takenAt;
    if (!replayMovedOn && !(a === null ? b === null : b !== null && sameSegment(a, b))) {
      differences.push(
        `${machine} makes ${b ? `${b.sku.sku} since ${b.start}` : "nothing"}, ` +
          `not ${a ? `${a.sku.sku} since ${a.start}` : "nothing"}`,
      );
    }
    const operators = (s: RealtimeState) => JSON.stringify(s.operators.map((o) => [o.id, o.start]));
    if (operators(was) !== operators(is)) differences.push(`${machine}'s operators changed`);
  }
  return { differences, checked: `${counts.join(", ")} and ${machine}'s running shift` };
}

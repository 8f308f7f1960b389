/**
 * What `npm run requests` does around the collection so that it leaves the live demo as
 * it found it: a snapshot before (Asset 0's realtime state, and the ids of the company's
 * operators, simple work orders and SKUs), then the undoing of what the run left: Asset 0
 * put back on the SKU and work order it was making (a realtime SKU write with the `start`
 * of the run's segment replaces that segment), and the records the run created and did
 * not delete itself (the work order a realtime write names, for one) deleted.
 */

/** How to call the public API of the demo. */
export interface Target {
  baseUrl: string;
  key: string;
  /** The fetch to send with (default: the global one). */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

interface Current {
  start: string;
  sku: { id: string; sku: string };
  simpleWorkOrder: { id: string; name: string } | null;
}

interface RealtimeState {
  current: Current | null;
}

/** The record kinds a run may create, with their search path and the answer's list field. */
const KINDS = [
  { label: "operator", search: "/v1/operators/filters", list: "operators", path: "/v1/operators" },
  {
    label: "work order",
    search: "/v1/simple-work-orders/filters",
    list: "simpleWorkOrders",
    path: "/v1/simple-work-orders",
  },
  { label: "SKU", search: "/v1/skus/filters", list: "skus", path: "/v1/skus" },
] as const;

/** The state before a run. */
export interface Snapshot {
  machineId: number;
  /** null when the machine runs no shift (409). */
  realtime: RealtimeState | null;
  ids: Map<string, Set<string>>;
}

async function call<T>(target: Target, path: string, init: RequestInit = {}): Promise<T | null> {
  const send = target.fetch ?? fetch;
  const res = await send(`${target.baseUrl}${path}`, {
    ...init,
    headers: { "x-api-key": target.key, "content-type": "application/json" },
  });
  const text = await res.text();
  if (res.status === 409) return null;
  if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text}`);
  return text === "" ? null : (JSON.parse(text) as T);
}

async function allIds(target: Target, kind: (typeof KINDS)[number]): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; page <= 100; page++) {
    const body = await call<Record<string, unknown> & { totalPages: number }>(target, kind.search, {
      method: "POST",
      body: JSON.stringify({ limit: 100, page }),
    });
    const rows = (body?.[kind.list] ?? []) as { id: string | number }[];
    for (const row of rows) ids.add(String(row.id));
    if (!body || page >= body.totalPages) break;
  }
  return ids;
}

/**
 * Reads what a run may change.
 *
 * @param machineId the machine the collection's realtime writes address (Asset 0).
 * @throws Error on an answer other than 2XX (409 for the realtime state excepted).
 */
export async function takeSnapshot(target: Target, machineId: number): Promise<Snapshot> {
  const realtime = await call<RealtimeState>(target, `/v1/realtime/${machineId}`);
  const ids = new Map<string, Set<string>>();
  for (const kind of KINDS) ids.set(kind.label, await allIds(target, kind));
  return { machineId, realtime, ids };
}

/**
 * Undoes what the run left, and says what it did in one phrase.
 *
 * @returns for the summary line, for example `Asset's SKU put back (P04); deleted 1 work order`.
 * @throws Error on an answer other than 2XX.
 */
export async function restore(target: Target, before: Snapshot): Promise<string> {
  const done: string[] = [];
  const was = before.realtime?.current ?? null;
  const now = (await call<RealtimeState>(target, `/v1/realtime/${before.machineId}`))?.current;
  if (was && now && now.start !== was.start) {
    await call(target, `/v1/realtime/${before.machineId}/sku`, {
      method: "POST",
      body: JSON.stringify({
        sku: was.sku.sku,
        ...(was.simpleWorkOrder ? { simpleWorkOrderName: was.simpleWorkOrder.name } : {}),
        start: now.start,
      }),
    });
    done.push(
      `machine ${before.machineId} back on ${was.sku.sku}` +
        (was.simpleWorkOrder ? ` for ${was.simpleWorkOrder.name}` : " without a work order"),
    );
  } else if (!was && now) {
    done.push(`machine ${before.machineId} ran no SKU before the run: its SKU write stays`);
  }
  // Work orders last: the realtime write above no longer names the run's work order.
  for (const kind of [...KINDS].reverse()) {
    const left = [...(await allIds(target, kind))].filter(
      (id) => !before.ids.get(kind.label)?.has(id),
    );
    for (const id of left) await call(target, `${kind.path}/${id}`, { method: "DELETE" });
    if (left.length > 0)
      done.push(`deleted ${left.length} ${kind.label}${left.length > 1 ? "s" : ""} it left`);
  }
  return done.length > 0 ? done.join("; ") : "nothing to undo";
}

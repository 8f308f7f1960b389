/**
 * What the grouped reports (downtime, KPIs) share: a group's key values, their
 * order, and paging a ranked list held in memory.
 */
import type { Page, PageRequest } from "../http/pagination";

/** One key value of a group: a reference `{id, name}`, a label (shift, day...), a bare id, or null. */
export type GroupKey = { id: number | string; name: string } | string | number | null;

function compareKey(a: GroupKey, b: GroupKey): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  // References with numeric ids (machines, operators) by id, as the other reports; those
  // with uuids (causes, SKUs, work orders) by name, then id; labels as text.
  if (typeof a === "object" && typeof b === "object" && typeof a.id === "string") {
    if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  }
  const x = typeof a === "object" ? a.id : a;
  const y = typeof b === "object" ? b.id : b;
  if (typeof x === "number" && typeof y === "number") return x - y;
  return String(x) < String(y) ? -1 : String(x) > String(y) ? 1 : 0;
}

/** Orders two key tuples key by key (see compareKey), nulls last. */
export function compareKeys(a: readonly GroupKey[], b: readonly GroupKey[]): number {
  for (let i = 0; i < a.length; i += 1) {
    const c = compareKey(a[i] ?? null, b[i] ?? null);
    if (c !== 0) return c;
  }
  return 0;
}

/** A map key for a tuple of group keys (references by id). */
export function groupId(keys: readonly GroupKey[]): string {
  return JSON.stringify(keys.map((k) => (k !== null && typeof k === "object" ? k.id : k)));
}

/** The requested page of rows already ranked, with the paging envelope's totals. */
export function pageOf<Row>(rows: readonly Row[], page: PageRequest): Page<Row> {
  const offset = Math.min((page.page - 1) * page.limit, Number.MAX_SAFE_INTEGER);
  return {
    totalCount: rows.length,
    totalPages: Math.ceil(rows.length / page.limit),
    currentPage: page.page,
    rows: rows.slice(offset, offset + page.limit),
  };
}

/**
 * The company's catalog of stop causes, the reasons a stop can be given: three lists
 * (general causes, specific causes, components), each a set of names with uuid ids
 * (`stop_causes`). The operator fills it ahead (`POST /operator/v1/companies/{id}/stop-causes`)
 * or lets classifications add to it; a scanner picks from it
 * (`POST /v1/realtime/{machine_id}/stop-reason`), and never adds to it. The three lists are
 * independent: any general cause goes with any specific cause and component.
 */

import { z } from "@hono/zod-openapi";
import { and, asc, eq, or, type SQL, sql } from "drizzle-orm";
import { type CompanyScope, owned } from "../db/company-scope";
import { jsonRowSelects } from "../db/json-rows";
import { stopCauses } from "../db/schema";

/** A cause field of a classification, and the kind it is stored as. */
const CAUSE_KINDS = {
  generalCause: "general_cause",
  specificCause: "specific_cause",
  component: "component",
} as const;

/** `generalCause`, `specificCause` or `component`. */
export type CauseField = keyof typeof CAUSE_KINDS;

/** The fields in the order a 422 lists them (the tree's order, general first). */
export const CAUSE_FIELDS: readonly CauseField[] = ["generalCause", "specificCause", "component"];

/** Most causes of each kind a catalog read answers (by name). */
export const MAX_CATALOG_CAUSES = 1000;

/** One cause of the catalog. */
export interface Cause {
  id: string;
  name: string;
}

const CauseSchema = z.object({ id: z.string().openapi({ format: "uuid" }), name: z.string() });

export const CauseCatalogSchema = z
  .object({
    generalCauses: z.array(CauseSchema),
    specificCauses: z.array(CauseSchema),
    components: z.array(CauseSchema),
  })
  .openapi("StopCauseCatalog", {
    description:
      `The company's catalog of causes, each list by name (at most ${MAX_CATALOG_CAUSES} ` +
      "each). The lists are independent: any general cause goes with any specific cause and " +
      "component.",
  });

/** The catalog as the API shows it: each list by name. */
type CauseCatalog = z.infer<typeof CauseCatalogSchema>;

const causeColumns = { id: stopCauses.id, name: stopCauses.name };

function kindList(scope: CompanyScope, field: CauseField) {
  return scope.db
    .select(causeColumns)
    .from(stopCauses)
    .where(owned(scope, stopCauses, eq(stopCauses.kind, CAUSE_KINDS[field])))
    .orderBy(asc(stopCauses.name), asc(stopCauses.id))
    .limit(MAX_CATALOG_CAUSES);
}

/**
 * The company's catalog, each list by name, at most {@link MAX_CATALOG_CAUSES} per list
 * (one D1 batch of three reads over the unique index on company, kind and name).
 */
export async function causeCatalog(scope: CompanyScope): Promise<CauseCatalog> {
  const [generalCauses, specificCauses, components] = await scope.db.batch([
    kindList(scope, "generalCause"),
    kindList(scope, "specificCause"),
    kindList(scope, "component"),
  ]);
  return { generalCauses, specificCauses, components };
}

/**
 * Adds causes to the company's catalog; a name it has already (same kind, exact after
 * trimming by the caller) is kept as it is, with its id. One statement per chunk of rows
 * (`jsonRowSelects`), whatever the number of causes.
 *
 * @param items the causes, by field and name.
 * @returns each item's cause (id and name), in order.
 */
export async function addCauses(
  scope: CompanyScope,
  items: readonly { kind: CauseField; name: string }[],
): Promise<(Cause & { kind: CauseField })[]> {
  const { db } = scope;
  const key = (kind: string, name: string) => JSON.stringify([kind, name]);
  const distinct = new Map(items.map((i) => [key(CAUSE_KINDS[i.kind], i.name), i]));
  // Every column in table order (id, company, kind, name, created_at); `WHERE true` lets
  // SQLite parse the ON CONFLICT clause after a SELECT. The no-op update makes RETURNING
  // give the existing row too.
  const [first, ...rest] = jsonRowSelects(
    scope,
    ["json", "company", "json", "json", "now"],
    [...distinct.values()].map((i) => [crypto.randomUUID(), CAUSE_KINDS[i.kind], i.name]),
    { now: Date.now(), onConflict: true },
  ).map((select) =>
    db
      .insert(stopCauses)
      .select(select)
      .onConflictDoUpdate({
        target: [stopCauses.companyId, stopCauses.kind, stopCauses.name],
        set: { name: sql`${stopCauses.name}` },
      })
      .returning({ ...causeColumns, kind: stopCauses.kind }),
  );
  if (!first) return [];
  const results = await db.batch([first, ...rest]);
  // RETURNING promises no order: give the causes back in the order of the items.
  const byKey = new Map(results.flat().map((r) => [key(r.kind, r.name), r]));
  return items.map((item) => {
    const row = byKey.get(key(CAUSE_KINDS[item.kind], item.name));
    if (!row) throw new Error(`cause ${item.kind} "${item.name}" not stored`);
    return { kind: item.kind, id: row.id, name: row.name };
  });
}

/** A cause as a caller names it: by id, by name, or both (then both must name it). */
interface CauseRef {
  id?: string | null | undefined;
  name?: string | null | undefined;
}

/**
 * The query of the catalog's causes that `refs` name (by id or by name, in their kind):
 * zero or more rows of `{id, name, kind}`; a query, so that a caller can batch it.
 */
export function causesNamedQuery(
  scope: CompanyScope,
  refs: Partial<Record<CauseField, CauseRef | null | undefined>>,
) {
  const matches: SQL[] = [];
  for (const field of CAUSE_FIELDS) {
    const ref = refs[field];
    if (!ref) continue;
    const kind = eq(stopCauses.kind, CAUSE_KINDS[field]);
    if (ref.id != null) matches.push(and(kind, eq(stopCauses.id, ref.id.toLowerCase())) as SQL);
    if (ref.name != null) matches.push(and(kind, eq(stopCauses.name, ref.name)) as SQL);
  }
  return scope.db
    .select({ ...causeColumns, kind: stopCauses.kind })
    .from(stopCauses)
    .where(owned(scope, stopCauses, matches.length > 0 ? or(...matches) : eq(stopCauses.id, "")));
}

/** Why a cause reference resolves to no single cause of the catalog. */
type CauseProblem = "unknown_id" | "unknown_name" | "id_and_name_differ";

/**
 * Matches one reference against the rows {@link causesNamedQuery} found.
 *
 * @returns the cause, or the problem with the reference.
 */
export function resolveCause(
  field: CauseField,
  ref: CauseRef,
  found: readonly { id: string; name: string; kind: string }[],
): Cause | CauseProblem {
  const ofKind = found.filter((r) => r.kind === CAUSE_KINDS[field]);
  const byId = ref.id == null ? undefined : ofKind.find((r) => r.id === ref.id?.toLowerCase());
  const byName = ref.name == null ? undefined : ofKind.find((r) => r.name === ref.name);
  if (ref.id != null && !byId) return "unknown_id";
  if (ref.name != null && !byName) return "unknown_name";
  if (byId && byName && byId.id !== byName.id) return "id_and_name_differ";
  const cause = byId ?? byName;
  return cause ? { id: cause.id, name: cause.name } : "unknown_name";
}

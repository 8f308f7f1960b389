/**
 * References to machines and SKUs in request bodies, `{id}` or `{name}`, as nominal speeds
 * and production logs take them: one query per kind for a whole list, scoped to the company,
 * deleted records ignored. A reference that matches nothing, or a name matching several
 * records, is an issue of that reference alone, so a caller reports every bad item at once.
 */

import { z } from "@hono/zod-openapi";
import { or } from "drizzle-orm";
import { type CompanyScope, notDeleted } from "../db/company-scope";
import { inJsonList } from "../db/json-list";
import { machines, skus } from "../db/schema";
import type { ValidationIssue } from "../http/errors";

/**
 * The rule "by `id` or by `name`" as JSON Schema: at least one of the properties given and
 * not null (`{}` and `{"id": null}` are refused with a 422 naming the reference, by the
 * schema's refinement, before any record is looked up). A `null`
 * reference itself still passes (`required` says nothing about a non-object), so the same
 * branches serve the nullable uses.
 *
 * @param properties each property's non-null type.
 */
function oneOfRequired(properties: Record<string, { type: "integer" | "string" }>) {
  return Object.entries(properties).map(([name, schema]) => ({
    required: [name],
    properties: { [name]: schema },
  }));
}

/**
 * The machine reference object before registration: `MachineRefObject.nullish()` documents
 * an inline `type: [object, null]`, where `MachineRefSchema.nullish()` would document an
 * `allOf` that refuses null (zod-openapi's rendering of a nullable registered schema).
 */
export const MachineRefObject = z
  .object({
    id: z.number().int().positive().nullish().openapi({ description: "Machine id." }),
    name: z
      .string()
      .trim()
      .regex(/\S/, "Must not be blank")
      .max(200)
      .nullish()
      .openapi({ description: "Exact machine name; 422 when several machines share it." }),
  })
  .strict()
  .refine((r) => r.id != null || r.name != null, "Give the machine's id or name")
  .openapi({ anyOf: oneOfRequired({ id: { type: "integer" }, name: { type: "string" } }) });

export const MachineRefSchema = MachineRefObject.openapi("MachineRef", {
  description: "A machine of the company, by `id` or by `name` (if both, they must agree).",
});

/** The SKU reference object before registration; see {@link MachineRefObject}. */
export const SkuRefObject = z
  .object({
    id: z.string().max(100).nullish().openapi({ description: "SKU id (uuid)." }),
    name: z.string().trim().regex(/\S/, "Must not be blank").max(200).nullish().openapi({
      description: "Exact SKU `name` or `sku` code; 422 when it designates several SKUs.",
    }),
  })
  .strict()
  .refine((r) => r.id != null || r.name != null, "Give the SKU's id or name")
  .openapi({ anyOf: oneOfRequired({ id: { type: "string" }, name: { type: "string" } }) });

export const SkuRefSchema = SkuRefObject.openapi("SkuRef", {
  description:
    "A SKU of the company (archived ones included), by `id` or by `name` (if both, they must agree).",
});

type MachineRef = z.infer<typeof MachineRefSchema>;

/** The company a record belongs to, as answers show it (`{id, name}`). */
export const CompanyRefSchema = z
  .object({ id: z.number().int(), name: z.string() })
  .openapi("CompanyRef");
export type SkuRef = z.infer<typeof SkuRefSchema>;

export interface ResolvedMachine {
  id: number;
  name: string;
}

export interface ResolvedSku {
  id: string;
  sku: string;
  name: string | null;
  description: string | null;
  unit: string | null;
}

/** The outcome of one reference: the record, or why it does not resolve (a 422 message). */
type Resolution<T> = { ok: true; value: T } | { ok: false; msg: string; type: string };

function pick<T extends { id: string | number }>(
  what: string,
  ref: { id?: string | number | null; name?: string | null },
  byId: Map<string | number, T>,
  byName: (name: string) => T[],
): Resolution<T> {
  const id = ref.id ?? null;
  const name = ref.name ?? null;
  if (id !== null) {
    const found = byId.get(id);
    if (!found) {
      return { ok: false, msg: `No ${what} with id ${id} in this company`, type: "not_found" };
    }
    if (name !== null && !byName(name).some((r) => r.id === found.id)) {
      return {
        ok: false,
        msg: `The ${what} with id ${id} is not named "${name}"`,
        type: "value_error",
      };
    }
    return { ok: true, value: found };
  }
  if (name === null) return { ok: false, msg: `Give the ${what}'s id or name`, type: "missing" };
  const matches = byName(name);
  const [only, ...others] = matches;
  if (!only) {
    return { ok: false, msg: `No ${what} named "${name}" in this company`, type: "not_found" };
  }
  if (others.length > 0) {
    const ids = matches.map((m) => m.id).join(", ");
    return {
      ok: false,
      msg: `${matches.length} ${what}s match "${name}" (ids ${ids}): give the id`,
      type: "ambiguous",
    };
  }
  return { ok: true, value: only };
}

function values<T>(list: (T | null | undefined)[]): T[] {
  return [...new Set(list.filter((v): v is T => v !== undefined && v !== null))];
}

/**
 * Resolves machine references of one company.
 *
 * @returns one resolution per reference, in order.
 */
export async function resolveMachineRefs(
  scope: CompanyScope,
  refs: readonly MachineRef[],
): Promise<Resolution<ResolvedMachine>[]> {
  const ids = values(refs.map((r) => r.id));
  const names = values(refs.map((r) => r.name));
  const rows =
    ids.length + names.length === 0
      ? []
      : await scope.db
          .select({ id: machines.id, name: machines.name })
          .from(machines)
          .where(
            notDeleted(
              scope,
              machines,
              or(inJsonList(machines.id, ids), inJsonList(machines.name, names)),
            ),
          )
          .all();
  const byId = new Map<string | number, ResolvedMachine>(rows.map((r) => [r.id, r]));
  return refs.map((ref) =>
    pick("machine", ref, byId, (name) => rows.filter((r) => r.name === name)),
  );
}

/**
 * Resolves SKU references of one company; a name matches a SKU's `name` or its
 * `sku` code (exactly), and archived SKUs count.
 *
 * @returns one resolution per reference, in order.
 */
export async function resolveSkuRefs(
  scope: CompanyScope,
  refs: readonly SkuRef[],
): Promise<Resolution<ResolvedSku>[]> {
  const ids = values(refs.map((r) => r.id?.toLowerCase()));
  const names = values(refs.map((r) => r.name));
  const namesJson = JSON.stringify(names);
  const rows =
    ids.length + names.length === 0
      ? []
      : await scope.db
          .select({
            id: skus.id,
            sku: skus.sku,
            name: skus.name,
            description: skus.description,
            unit: skus.unit,
          })
          .from(skus)
          .where(
            notDeleted(
              scope,
              skus,
              or(
                inJsonList(skus.id, ids),
                inJsonList(skus.name, namesJson),
                inJsonList(skus.sku, namesJson),
              ),
            ),
          )
          .all();
  const byId = new Map<string | number, ResolvedSku>(rows.map((r) => [r.id, r]));
  return refs.map((ref) =>
    pick("SKU", { id: ref.id?.toLowerCase(), name: ref.name }, byId, (name) =>
      rows.filter((r) => r.name === name || r.sku === name),
    ),
  );
}

/**
 * The value of a resolution, or undefined after pushing its 422 issue at `loc`.
 *
 * @param resolution a resolution; undefined counts as not resolved.
 * @param loc FastAPI-style location of the reference, for example `["body", 3, "machine"]`.
 * @param issues collected issues, appended to.
 */
export function resolvedOrIssue<T>(
  resolution: Resolution<T> | undefined,
  loc: (string | number)[],
  issues: ValidationIssue[],
): T | undefined {
  if (resolution?.ok) return resolution.value;
  issues.push({
    loc,
    msg: resolution?.msg ?? "Not resolved",
    type: resolution?.type ?? "value_error",
  });
  return undefined;
}

/** Resolves a single reference with a list resolver (`resolveMachineRefs`, `resolveSkuRefs`). */
export async function resolveOne<Ref, T>(
  resolver: (scope: CompanyScope, refs: readonly Ref[]) => Promise<Resolution<T>[]>,
  scope: CompanyScope,
  ref: Ref,
): Promise<Resolution<T>> {
  const [resolution] = await resolver(scope, [ref]);
  return resolution ?? { ok: false, msg: "Not resolved", type: "value_error" };
}

/**
 * Resolves the `machine` and `sku` references of every item of a create call, in two
 * queries (one per kind), item order kept.
 */
export function resolveItemReferences(
  scope: CompanyScope,
  items: readonly { machine: MachineRef; sku: SkuRef }[],
): Promise<[Resolution<ResolvedMachine>[], Resolution<ResolvedSku>[]]> {
  return Promise.all([
    resolveMachineRefs(
      scope,
      items.map((i) => i.machine),
    ),
    resolveSkuRefs(
      scope,
      items.map((i) => i.sku),
    ),
  ]);
}

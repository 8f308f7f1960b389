/**
 * What the Worker resolves before a realtime write reaches the machine's
 * Durable Object: the machine (404 unless the company's), the SKU, the work
 * order, the nominal speed of the machine/SKU pair, the operator. Reads of one
 * request are one D1 batch, in parallel across requests (the object then only
 * orders and applies).
 */

import { asc, eq, isNull, or, sql } from "drizzle-orm";
import { type CompanyScope, notDeleted, owned } from "../db/company-scope";
import { findMachineById, type MachineRow, machineByIdQuery } from "../db/machines";
import { nominalSpeeds, operators, simpleWorkOrders, skus } from "../db/schema";
import { ApiError, notFound, type ValidationIssue } from "../http/errors";
import { upsertSimpleWorkOrders } from "../resources/simple-work-orders/queries";
import { SECOND_MS } from "../time/units";
import type { SkuWrite } from "./machine-types";
import type { RealtimeSkuBody } from "./schemas";
import type { SegmentSku } from "./timeline";

/** 404 for a machine that is not the company's (or does not exist, or is deleted). */
export function machineNotFound(machineId: number): ApiError {
  return notFound(`Machine ${machineId} not found`);
}

/**
 * The company's machine with this id.
 *
 * @throws ApiError 404 `Machine <id> not found`.
 */
export async function findMachine(scope: CompanyScope, machineId: number): Promise<MachineRow> {
  const machine = await findMachineById(scope, machineId);
  if (!machine) throw machineNotFound(machineId);
  return machine;
}

/** The parts of a SKU write the object needs, without the machine key. */
type ResolvedSkuWrite = Omit<SkuWrite, "companyId" | "machineId">;

/** What a SKU write resolves to besides the values it carries as given. */
type CatalogPart = Pick<
  ResolvedSkuWrite,
  "sku" | "nominalSpeed" | "countingFactor" | "simpleWorkOrder"
> & { machine: MachineRow };

/** Most resolutions one isolate keeps. */
const MAX_CACHED_RESOLUTIONS = 10_000;

/**
 * SKU-write resolutions this isolate made lately, by (company, machine, SKU and
 * work-order references), kept `CREDENTIAL_CACHE_SECONDS` (default 5 s), as
 * API keys are: a scanner repeating the same SKU on the same machine costs no
 * D1 round trip. Only successful resolutions are kept, so a fix (a new nominal
 * speed, a new SKU) takes effect at once; a change to a resolved one (a new
 * nominal speed for the pair, a deleted machine) reaches this isolate within
 * the cache time. An entry holds the resolution while it runs, so concurrent
 * writes with the same references (a burst, or every request when an entry has
 * just expired) share one D1 round trip; a failed one is dropped at once.
 */
const resolutionCache = new Map<string, { value: Promise<CatalogPart>; expiresAt: number }>();

/**
 * Resolves the body of `POST /v1/realtime/{machine_id}/sku`.
 *
 * Rules: the SKU by `skuId` or `sku` (its exact `name` or `sku` code), both
 * naming the same SKU when both are given, one of them required; the work order
 * by `simpleWorkOrderId` (must exist) or `simpleWorkOrderName` (found, restored
 * or created as `POST /v1/simple-work-orders` does, and only once every other
 * check passed), the same one when both are given; the machine/SKU pair must
 * have a nominal speed (it gives the log's `nominalSpeed` and `countingFactor`).
 *
 * @throws ApiError 404 when the machine is not the company's; 422 listing every
 *   problem of the body.
 */
export async function resolveSkuWrite(
  scope: CompanyScope,
  machineId: number,
  body: RealtimeSkuBody,
  cacheSeconds = 0,
): Promise<{ machine: MachineRow; write: ResolvedSkuWrite }> {
  const { companyId } = scope;
  const cacheKey = JSON.stringify([
    companyId,
    machineId,
    body.skuId?.toLowerCase() ?? null,
    body.sku ?? null,
    body.simpleWorkOrderId?.toLowerCase() ?? null,
    body.simpleWorkOrderName ?? null,
  ]);
  const now = Date.now();
  const cached = resolutionCache.get(cacheKey);
  let pending = cached && cached.expiresAt > now ? cached.value : undefined;
  if (!pending) {
    pending = resolveCatalog(scope, machineId, body);
    if (cacheSeconds > 0) {
      if (resolutionCache.size >= MAX_CACHED_RESOLUTIONS) resolutionCache.clear();
      const entry = { value: pending, expiresAt: now + cacheSeconds * SECOND_MS };
      resolutionCache.set(cacheKey, entry);
      pending.catch(() => {
        if (resolutionCache.get(cacheKey) === entry) resolutionCache.delete(cacheKey);
      });
    }
  }
  const { machine, ...catalog } = await pending;
  return {
    machine,
    write: {
      ...catalog,
      quantity: body.quantity ?? null,
      customJson: body.custom == null ? null : JSON.stringify(body.custom),
      start: body.start ?? null,
      end: body.end ?? null,
    },
  };
}

/** A SKU row of {@link readCatalogRows}. */
type SkuRow = SegmentSku;

/**
 * Reads in one D1 batch what a SKU write names: the machine, the company's live SKUs matching
 * `skuId` or `skuName` (by name or SKU code, at most 50, by id), the work order `workOrderId`
 * names, and the machine's nominal speeds (units per minute, with the counting factor) for
 * those SKUs.
 */
async function readCatalogRows(
  scope: CompanyScope,
  machineId: number,
  skuId: string | null,
  skuName: string | null,
  workOrderId: string | null,
) {
  const { db, companyId } = scope;
  const skuMatch = notDeleted(
    { companyId },
    skus,
    or(
      skuId === null ? undefined : eq(skus.id, skuId),
      skuName === null ? undefined : or(eq(skus.name, skuName), eq(skus.sku, skuName)),
      sql`false`,
    ),
  );
  return db.batch([
    machineByIdQuery(scope, machineId),
    db
      .select({ id: skus.id, sku: skus.sku, name: skus.name, unit: skus.unit })
      .from(skus)
      .where(skuMatch)
      .orderBy(asc(skus.id))
      .limit(50),
    workOrderByIdQuery(scope, workOrderId),
    db
      .select({
        skuId: nominalSpeeds.skuId,
        nominalSpeed: nominalSpeeds.nominalSpeed,
        countingFactor: nominalSpeeds.countingFactor,
      })
      .from(nominalSpeeds)
      .where(
        owned(
          { companyId },
          nominalSpeeds,
          eq(nominalSpeeds.machineId, machineId),
          isNull(nominalSpeeds.deletedAt),
          sql`${nominalSpeeds.skuId} IN (SELECT ${skus.id} FROM ${skus} WHERE ${skuMatch})`,
        ),
      ),
  ] as const);
}

/**
 * The SKU a write names, by `skuId` and/or `sku` (its name or SKU code), among the rows
 * {@link readCatalogRows} found: the SKU, or the one validation issue that keeps it from being
 * chosen (none given, not found, two names for different SKUs, an ambiguous name).
 */
function pickSku(
  body: RealtimeSkuBody,
  skuId: string | null,
  skuName: string | null,
  skuRows: readonly SkuRow[],
): { sku?: SkuRow; issue?: ValidationIssue } {
  const byId = skuId === null ? undefined : skuRows.find((s) => s.id === skuId);
  const byName =
    skuName === null ? [] : skuRows.filter((s) => s.name === skuName || s.sku === skuName);
  if (skuId === null && skuName === null) {
    return {
      issue: { loc: ["body"], msg: "Give the SKU: skuId or sku (its name)", type: "missing" },
    };
  } else if (skuId !== null && !byId) {
    return {
      issue: {
        loc: ["body", "skuId"],
        msg: `No SKU with id ${body.skuId} in this company`,
        type: "not_found",
      },
    };
  } else if (skuName !== null && byName.length === 0) {
    return {
      issue: {
        loc: ["body", "sku"],
        msg: `No SKU named "${skuName}" in this company`,
        type: "not_found",
      },
    };
  } else if (byId && skuName !== null && !byName.some((s) => s.id === byId.id)) {
    return {
      issue: {
        loc: ["body"],
        msg: `skuId ${byId.id} and sku "${skuName}" name different SKUs`,
        type: "value_error",
      },
    };
  } else if (!byId && byName.length > 1) {
    return {
      issue: {
        loc: ["body", "sku"],
        msg: `${byName.length} SKUs match "${skuName}" (ids ${byName.map((s) => s.id).join(", ")}): give skuId`,
        type: "ambiguous",
      },
    };
  } else {
    return { sku: byId ?? byName[0] };
  }
}

/**
 * The D1 half of `resolveSkuWrite` (same rules and errors): reads the rows the write names
 * ({@link readCatalogRows}), picks its SKU ({@link pickSku}), checks its work order and the
 * machine's nominal speed for the SKU, then finds or creates the work order named by name.
 */
async function resolveCatalog(
  scope: CompanyScope,
  machineId: number,
  body: RealtimeSkuBody,
): Promise<CatalogPart> {
  const skuId = body.skuId?.toLowerCase() ?? null;
  const skuName = body.sku ?? null;
  const workOrderId = body.simpleWorkOrderId?.toLowerCase() ?? null;
  const workOrderName = body.simpleWorkOrderName ?? null;
  const [machineRows, skuRows, workOrderRows, speedRows] = await readCatalogRows(
    scope,
    machineId,
    skuId,
    skuName,
    workOrderId,
  );
  const machine = machineRows[0];
  if (!machine) throw machineNotFound(machineId);

  const issues: ValidationIssue[] = [];
  const { sku, issue } = pickSku(body, skuId, skuName, skuRows);
  if (issue) issues.push(issue);

  const workOrderById = workOrderRows[0];
  issues.push(...workOrderIssues(body, workOrderById));

  const speed = sku === undefined ? undefined : speedRows.find((r) => r.skuId === sku?.id);
  if (sku && !speed) {
    issues.push({
      loc: ["body", skuId !== null ? "skuId" : "sku"],
      msg:
        `No nominal speed for machine "${machine.name}" (id ${machine.id}) and SKU "${sku.sku}" ` +
        `(id ${sku.id}): create one with POST /v1/nominal-speeds before producing it`,
      type: "missing_nominal_speed",
    });
  }
  if (issues.length > 0 || !sku || !speed) throw new ApiError(422, issues);

  let workOrder: { id: string; name: string } | null = workOrderById ?? null;
  if (!workOrder && workOrderName !== null) {
    const [created] = await upsertSimpleWorkOrders(scope, [workOrderName]);
    workOrder = created ? { id: created.id, name: created.name } : null;
  }
  return {
    machine,
    sku,
    nominalSpeed: speed.nominalSpeed,
    countingFactor: speed.countingFactor,
    simpleWorkOrder: workOrder,
  };
}

/**
 * Resolves the work order of a SKU write without a SKU (an update of the running
 * segment): by `simpleWorkOrderId` (must exist) or `simpleWorkOrderName` (found,
 * restored or created as `POST /v1/simple-work-orders` does, once the rest passed),
 * the same one when both are given.
 *
 * @returns the machine, and the work order (undefined when the body names none).
 * @throws ApiError 404 when the machine is not the company's; 422 listing every
 *   problem of the work-order fields.
 */
export async function resolveSegmentUpdate(
  scope: CompanyScope,
  machineId: number,
  body: RealtimeSkuBody,
): Promise<{ machine: MachineRow; simpleWorkOrder: { id: string; name: string } | undefined }> {
  const { db } = scope;
  const workOrderId = body.simpleWorkOrderId?.toLowerCase() ?? null;
  const workOrderName = body.simpleWorkOrderName ?? null;
  const [machineRows, workOrderRows] = await db.batch([
    machineByIdQuery(scope, machineId),
    workOrderByIdQuery(scope, workOrderId),
  ] as const);
  const machine = machineRows[0];
  if (!machine) throw machineNotFound(machineId);
  const byId = workOrderRows[0];
  const issues = workOrderIssues(body, byId);
  if (issues.length > 0) throw new ApiError(422, issues);
  let simpleWorkOrder = byId;
  if (!simpleWorkOrder && workOrderName !== null) {
    const [created] = await upsertSimpleWorkOrders(scope, [workOrderName]);
    simpleWorkOrder = created ? { id: created.id, name: created.name } : undefined;
  }
  return { machine, simpleWorkOrder };
}

/** The company's non-deleted simple work order with this id (none for a null id). */
function workOrderByIdQuery(scope: CompanyScope, workOrderId: string | null) {
  const { db, companyId } = scope;
  return db
    .select({ id: simpleWorkOrders.id, name: simpleWorkOrders.name })
    .from(simpleWorkOrders)
    .where(
      owned(
        { companyId },
        simpleWorkOrders,
        eq(simpleWorkOrders.id, workOrderId ?? ""),
        isNull(simpleWorkOrders.deletedAt),
      ),
    );
}

/**
 * The problems of a body's work-order fields: an unknown `simpleWorkOrderId`, or one
 * not named `simpleWorkOrderName` when both are given.
 */
function workOrderIssues(
  body: RealtimeSkuBody,
  byId: { id: string; name: string } | undefined,
): ValidationIssue[] {
  if (body.simpleWorkOrderId != null && !byId) {
    return [
      {
        loc: ["body", "simpleWorkOrderId"],
        msg: `No simple work order with id ${body.simpleWorkOrderId} in this company`,
        type: "not_found",
      },
    ];
  }
  if (byId && body.simpleWorkOrderName != null && byId.name !== body.simpleWorkOrderName) {
    return [
      {
        loc: ["body"],
        msg: `simpleWorkOrderId ${byId.id} is not named "${body.simpleWorkOrderName}"`,
        type: "value_error",
      },
    ];
  }
  return [];
}

/**
 * The machine and the operator of `POST /v1/realtime/{machine_id}/operator`, in one batch.
 *
 * @throws ApiError 404 when the machine is not the company's; 422 at
 *   `["body", "operatorId"]` when the operator is not (or is deleted).
 */
export async function resolveOperatorWrite(
  scope: CompanyScope,
  machineId: number,
  operatorId: number,
): Promise<{
  machine: MachineRow;
  operator: { id: number; firstName: string | null; lastName: string | null };
}> {
  const { db, companyId } = scope;
  const [machineRows, operatorRows] = await db.batch([
    machineByIdQuery(scope, machineId),
    db
      .select({ id: operators.id, firstName: operators.firstName, lastName: operators.lastName })
      .from(operators)
      .where(
        owned({ companyId }, operators, eq(operators.id, operatorId), isNull(operators.deletedAt)),
      ),
  ] as const);
  const machine = machineRows[0];
  if (!machine) throw machineNotFound(machineId);
  const operator = operatorRows[0];
  if (!operator) {
    throw new ApiError(422, [
      {
        loc: ["body", "operatorId"],
        msg: `No operator with id ${operatorId} in this company`,
        type: "not_found",
      },
    ]);
  }
  return { machine, operator };
}

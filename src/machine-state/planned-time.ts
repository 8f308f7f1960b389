/**
 * The machine's planned time, as the detector needs it: the company's zone and the shift
 * definitions that apply to the machine, read from D1 in one batch and kept in the store
 * (refreshed hourly and whenever the operator creates shifts), and the instances they imply
 * over any window, joined where they follow each other (`joinSpans`).
 */
import { eq, isNull, sql } from "drizzle-orm";
import { type CompanyScope, owned } from "../db/company-scope";
import { shiftDefinitionMachines, stops } from "../db/schema";
import { companyDb } from "../db/shards";
import type { Env } from "../env";
import { type ClosedSpan, closedSpansQuery, isClosedAt } from "../shifts/closures";
import { companyQuery, definitionsQuery, MAX_INSTANCE_MS, windowsBetween } from "../shifts/plan";
import { joinSpans, type Span } from "./parts";

/** What the store keeps of the machine's shifts. */
export interface PlanCache {
  /** When it was read, ms. */
  at: number;
  timezone: string;
  /** The definitions (not deleted) that apply to the machine. */
  definitions: { id: number; startTime: string; endTime: string; weekdays: number[] }[];
  /**
   * The closures of the plant calendar that apply to the machine, `[start, end)` ms: an
   * instance starting inside one is not planned (src/shifts/closures.ts). Absent in a plan
   * kept before the calendar existed (read as none until the plan is read again).
   */
  closures?: ClosedSpan[];
}

/** How long a cached plan is used before it is read again, ms (pushes refresh it sooner). */
export const PLAN_REFRESH_MS = 3_600_000;

/**
 * Reads the machine's plan: the company's zone, the definitions and the closures that apply
 * to it, in one batch of four statements.
 *
 * @returns the plan, or null when the company has no row in its shard.
 */
async function loadPlan(
  scope: CompanyScope,
  machineId: number,
  now: number,
): Promise<PlanCache | null> {
  const { db, companyId } = scope;
  const [company, defs, links, closures] = await db.batch([
    companyQuery(scope),
    definitionsQuery(scope),
    db
      .select({ definitionId: shiftDefinitionMachines.shiftDefinitionId })
      .from(shiftDefinitionMachines)
      .where(
        owned(
          { companyId },
          shiftDefinitionMachines,
          eq(shiftDefinitionMachines.machineId, machineId),
        ),
      ),
    closedSpansQuery(scope, machineId),
  ] as const);
  const timezone = company[0]?.timezone;
  if (timezone === undefined) return null;
  const linked = new Set(links.map((l) => l.definitionId));
  return {
    at: now,
    timezone,
    definitions: defs
      .filter((d) => d.allMachines || linked.has(d.id))
      .map((d) => ({ id: d.id, startTime: d.startTime, endTime: d.endTime, weekdays: d.weekdays })),
    closures,
  };
}

/**
 * The machine's planned time overlapping `[from, to)`: its instances that no closure holds
 * the start of, joined where one ends as the next begins.
 */
export function plannedBlocks(plan: PlanCache, from: number, to: number): Span[] {
  const spans: Span[] = [];
  const closures = plan.closures ?? [];
  for (const def of plan.definitions) {
    const full = { ...def, name: "", isConsidered: true, allMachines: true, machineIds: [] };
    for (const w of windowsBetween(full, plan.timezone, from - MAX_INSTANCE_MS, to)) {
      if (w.end > from && !isClosedAt(closures, w.start)) {
        spans.push({ start: w.start, end: w.end });
      }
    }
  }
  return joinSpans(spans);
}

/**
 * What the detector reads from D1 before it evaluates: the machine's plan (`loadPlan`; no
 * zone and no definitions when the company is gone) and its recorded stops (every stop of
 * the machine not deleted and not detected), in the company's shard.
 *
 * @param machine the company and machine (internal ids).
 * @param now ms; the plan's `at`.
 * @returns the plan, and the recorded stops as `[start, end)` in ms (`end` null while open):
 *   their own times, and the detected downtime D1 shows each took in (`taken`, or null).
 */
export async function loadPrerequisites(
  env: Env,
  machine: { companyId: number; machineId: number },
  now: number,
): Promise<{
  plan: PlanCache;
  recorded: {
    id: number;
    start: number;
    end: number | null;
    taken: { start: number; end: number | null } | null;
  }[];
}> {
  const db = await companyDb(env, machine.companyId);
  const scope = { db, companyId: machine.companyId };
  const plan = await loadPlan(scope, machine.machineId, now);
  // A stop that took in detected downtime keeps its own times in `recorded_*`.
  const merged = sql`${stops.detectedStartTime} IS NOT NULL`;
  const rows = await db
    .select({
      id: stops.id,
      start: sql<number>`CASE WHEN ${merged} THEN ${stops.recordedStartTime} ELSE ${stops.startTime} END`,
      end: sql<
        number | null
      >`CASE WHEN ${merged} THEN ${stops.recordedEndTime} ELSE ${stops.endTime} END`,
      takenStart: stops.detectedStartTime,
      takenEnd: stops.detectedEndTime,
    })
    .from(stops)
    .where(
      owned(
        scope,
        stops,
        eq(stops.machineId, machine.machineId),
        isNull(stops.detectionKey),
        isNull(stops.deletedAt),
      ),
    );
  const recorded = rows.map((r) => ({
    id: r.id,
    start: r.start,
    end: r.end,
    taken: r.takenStart === null ? null : { start: r.takenStart, end: r.takenEnd },
  }));
  return { plan: plan ?? { at: now, timezone: "UTC", definitions: [], closures: [] }, recorded };
}

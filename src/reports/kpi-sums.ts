/**
 * The KPI report's groups being summed: each shift instance's parts (its figures by SKU,
 * operator and work order, ./figure-cache.ts) projected on the requested keys and added to
 * their groups, with the calendar days each group touches. An instance counts once per group
 * it adds to. Instances no log covers (most of a long window's) have a path of their own
 * without a lookup per instance where the keys do not name the date.
 * docs/metrics.md ("KPIs by any dimension").
 */
import { isoWeekOf, monthOf } from "./calendar";
import type { Part } from "./figure-cache";
import { type GroupKey, groupId } from "./grouping";
import { addFigures, type Figures, zeroFigures } from "./kpi-figures";
import type { KpiKey, KpiReportRow } from "./kpi-schemas";
import { fraction, minutesOf, oeeFigures, plannedTimeOf, runTimeOf } from "./oee";

/** One group: its keys, summed figures, instances, and calendar days. */
interface KpiGroup {
  keys: GroupKey[];
  figures: Figures;
  instances: number;
  /** Per machine, the local dates (day numbers) its instances of the group start on. */
  days: Map<number, Set<number>>;
}

/** The keys of a log's part the report can group by. */
export type Attributed = "sku" | "operator" | "simpleWorkOrder";
/** Where each attributed key sits in a part's (SKU, operator, work order) key. */
const ATTRIBUTION_INDEX = { sku: 0, operator: 1, simpleWorkOrder: 2 } as const;

/** Whether a key splits an instance by the logs covering it. */
export const isAttributed = (k: KpiKey): k is Attributed =>
  k === "sku" || k === "operator" || k === "simpleWorkOrder";

/** Whether a key names the instance's local date (or its week, or month). */
const isDated = (k: KpiKey) => k === "day" || k === "week" || k === "month";

/** An added instance: its machine, definition name and local date (day number). */
interface SummedInstance {
  machineId: number;
  name: string;
  day: number;
}

/**
 * The keys an instance gives its parts: the attributed ones null (each part fills its own),
 * so that these are also the keys of its part of no log.
 */
interface InstanceKeys {
  keys: GroupKey[];
  id: string;
}

/** The groups of a KPI report being summed (see the module docstring). */
export class KpiSums {
  readonly groups = new Map<string, KpiGroup>();
  /** The keys an instance gives every part, per machine and shift name, then per day. */
  private readonly instanceKeys = new Map<number, Map<string, Map<number, InstanceKeys>>>();
  private readonly attributedAt: (readonly [number, 0 | 1 | 2])[];
  private readonly dated: boolean;

  /**
   * @param groupBy the requested keys, in order.
   * @param machines the machines as rows name them, by id.
   * @param dateOf the date `YYYY-MM-DD` of a local day number.
   */
  constructor(
    private readonly groupBy: readonly KpiKey[],
    private readonly machines: ReadonlyMap<number, { id: number; name: string }>,
    private readonly dateOf: (day: number) => string,
  ) {
    this.attributedAt = groupBy
      .filter(isAttributed)
      .map((k) => [groupBy.indexOf(k), ATTRIBUTION_INDEX[k]] as const);
    this.dated = groupBy.some(isDated);
  }

  /** The keys every part of an instance gets (machine, shift, day, week, month). */
  private keysOf(inst: SummedInstance): InstanceKeys {
    let byName = this.instanceKeys.get(inst.machineId);
    if (!byName) {
      byName = new Map();
      this.instanceKeys.set(inst.machineId, byName);
    }
    let byDay = byName.get(inst.name);
    if (!byDay) {
      byDay = new Map();
      byName.set(inst.name, byDay);
    }
    // Keys that do not name the date are the same every day: one entry.
    const day = this.dated ? inst.day : 0;
    let found = byDay.get(day);
    if (!found) {
      const date = this.dateOf(inst.day);
      const keys = this.groupBy.map((k): GroupKey => {
        switch (k) {
          case "machine":
            return this.machines.get(inst.machineId) ?? { id: inst.machineId, name: "" };
          case "shift":
            return inst.name;
          case "day":
            return date;
          case "week":
            return isoWeekOf(date);
          case "month":
            return monthOf(date);
          default:
            return null; // filled per part
        }
      });
      found = { keys, id: groupId(keys) };
      byDay.set(day, found);
    }
    return found;
  }

  /** The group of these keys, created empty when new. */
  private groupOf(id: string, keys: GroupKey[]): KpiGroup {
    let group = this.groups.get(id);
    if (!group) {
      group = { keys, figures: zeroFigures(), instances: 0, days: new Map() };
      this.groups.set(id, group);
    }
    return group;
  }

  /** The set of a group's calendar days on a machine. */
  private daysOf(group: KpiGroup, machineId: number): Set<number> {
    let days = group.days.get(machineId);
    if (!days) {
      days = new Set();
      group.days.set(machineId, days);
    }
    return days;
  }

  /**
   * Adds an instance's parts (their figures are not changed), projected on the requested
   * attribution keys and merged first, so that the instance counts once per group; an
   * instance without parts (no elapsed time) still counts in the group of its own keys.
   */
  add(inst: SummedInstance, parts: readonly Part[]): void {
    const base = this.keysOf(inst);
    const projected = new Map<string, { keys: GroupKey[]; figures: Figures }>();
    for (const part of parts) {
      let id = base.id;
      let keys = base.keys;
      if (this.attributedAt.length > 0) {
        keys = [...base.keys];
        for (const [at, from] of this.attributedAt) keys[at] = part.key[from];
        id = groupId(keys);
      }
      const entry = projected.get(id);
      if (entry) addFigures(entry.figures, part.figures);
      else projected.set(id, { keys, figures: { ...part.figures } });
    }
    if (projected.size === 0) projected.set(base.id, { keys: base.keys, figures: zeroFigures() });
    for (const [id, { keys, figures }] of projected) {
      const group = this.groupOf(id, keys);
      addFigures(group.figures, figures);
      group.instances += 1;
      this.daysOf(group, inst.machineId).add(inst.day);
    }
  }

  /**
   * The adder of one machine and definition's instances that no log covers: each one's
   * single part has every attribution null, so it goes to the group of its own keys (as
   * `add` with that part, without its projection), found once per date, or once for all
   * when the keys do not name the date.
   */
  unattributedAdder(
    machineId: number,
    name: string,
  ): (day: number, figures: Figures, scheduled?: boolean) => void {
    const targets = new Map<number, { group: KpiGroup; days: Set<number> }>();
    return (day, figures, scheduled = true) => {
      const at = this.dated ? day : 0;
      let target = targets.get(at);
      if (!target) {
        const base = this.keysOf({ machineId, name, day });
        const group = this.groupOf(base.id, base.keys);
        target = { group, days: this.daysOf(group, machineId) };
        targets.set(at, target);
      }
      // A closed instance (the plant calendar) adds its day to the calendar time only.
      if (scheduled) {
        addFigures(target.group.figures, figures);
        target.group.instances += 1;
      }
      target.days.add(day);
    };
  }
}

/**
 * The figures of a group as a row: its keys, minutes, counts and ratios of sums.
 *
 * @param lengthOf the length (ms) of a local day number: a group's calendar time sums its days.
 */
export function toRow(
  groupBy: readonly KpiKey[],
  group: KpiGroup,
  lengthOf: (day: number) => number,
): KpiReportRow {
  const sums = group.figures;
  const runTime = runTimeOf(sums);
  const plannedTime = plannedTimeOf(sums);
  let calendarTime = 0;
  for (const days of group.days.values()) for (const day of days) calendarTime += lengthOf(day);
  // The report row's own figures, on the group's sums (./oee.ts).
  const figures = oeeFigures(sums);
  const perStop = (ms: number) => {
    const mean = fraction(ms, sums.unplannedStops);
    return mean === null ? null : minutesOf(mean);
  };
  const keys: Record<string, unknown> = {};
  groupBy.forEach((k, i) => {
    keys[k] = group.keys[i] ?? null;
  });
  return {
    ...keys,
    instances: group.instances,
    minutes: {
      calendarTime: minutesOf(calendarTime),
      availableTime: minutesOf(sums.availableTime),
      plannedTime: minutesOf(plannedTime),
      runTime: minutesOf(runTime),
      idealTime: minutesOf(sums.idealTime),
      programmedDowntime: minutesOf(sums.programmedDowntime),
      nonProgrammedDowntime: minutesOf(sums.nonProgrammedDowntime),
      otherStopsTime: minutesOf(sums.otherStopsTime),
      lateStartTime: minutesOf(sums.lateStartTime),
      earlyStopTime: minutesOf(sums.earlyStopTime),
      noDataTime: minutesOf(sums.noDataTime),
      unavailableTime: minutesOf(sums.unavailableTime),
      annotatedDowntime: minutesOf(sums.annotatedDowntime),
    },
    counts: {
      total: sums.total,
      good: sums.good,
      defects: sums.defects,
      unplannedStops: sums.unplannedStops,
    },
    ...figures,
    teep: figures.oee === null ? null : fraction(figures.oee * sums.availableTime, calendarTime),
    mtbf: perStop(runTime),
    mttr: perStop(sums.nonProgrammedDowntime),
    scrapRatio: fraction(sums.defects, sums.total),
  } as KpiReportRow;
}

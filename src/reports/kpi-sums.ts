/**
 * The KPI report's groups being summed: each shift instance's parts (its figures by SKU,
 * operator and work order, ./figure-cache.ts) projected on the requested keys and added to
 * their groups, with the calendar days each group touches. An instance counts once per group
 * it adds to. docs/metrics.md ("KPIs by any dimension").
 */
import { isoWeekOf, monthOf } from "./calendar";
import type { Part } from "./figure-cache";
import { type GroupKey, groupId } from "./grouping";
import { addFigures, type Figures, zeroFigures } from "./kpi-figures";
import type { KpiKey } from "./kpi-schemas";

/** One group: its keys, summed figures, instances, and calendar ms per `machine:date`. */
export interface KpiGroup {
  keys: GroupKey[];
  figures: Figures;
  instances: number;
  days: Map<string, number>;
}

/** The keys of a log's part the report can group by. */
export type Attributed = "sku" | "operator" | "simpleWorkOrder";
/** Where each attributed key sits in a part's (SKU, operator, work order) key. */
const ATTRIBUTION_INDEX = { sku: 0, operator: 1, simpleWorkOrder: 2 } as const;

/** Whether a key splits an instance by the logs covering it. */
export const isAttributed = (k: KpiKey): k is Attributed =>
  k === "sku" || k === "operator" || k === "simpleWorkOrder";

/** What an added instance needs: its machine and definition name. */
interface SummedInstance {
  machineId: number;
  name: string;
}

/** The local day of an instance's start: its date `YYYY-MM-DD` and length, ms. */
export interface InstanceDay {
  date: string;
  length: number;
}

/**
 * The keys an instance gives its parts: the attributed ones null (each part fills its own),
 * so that these are also the keys of its part of no log.
 */
interface InstanceKeys {
  keys: GroupKey[];
  id: string;
  /** `machine:date`, the calendar day the instance's groups touch. */
  day: string;
}

/** The groups of a KPI report being summed (see the module docstring). */
export class KpiSums {
  readonly groups = new Map<string, KpiGroup>();
  /** The keys an instance gives every part, per machine, shift name and day. */
  private readonly instanceKeys = new Map<string, InstanceKeys>();
  private readonly attributedAt: (readonly [number, 0 | 1 | 2])[];

  /**
   * @param groupBy the requested keys, in order.
   * @param machines the machines as rows name them, by id.
   */
  constructor(
    private readonly groupBy: readonly KpiKey[],
    private readonly machines: ReadonlyMap<number, { id: number; name: string }>,
  ) {
    this.attributedAt = groupBy
      .filter(isAttributed)
      .map((k) => [groupBy.indexOf(k), ATTRIBUTION_INDEX[k]] as const);
  }

  /** The keys every part of an instance gets (machine, shift, day, week, month). */
  private keysOf(inst: SummedInstance, date: string): InstanceKeys {
    const cacheKey = `${inst.machineId}\u0000${inst.name}\u0000${date}`;
    let found = this.instanceKeys.get(cacheKey);
    if (!found) {
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
      found = { keys, id: groupId(keys), day: `${inst.machineId}:${date}` };
      this.instanceKeys.set(cacheKey, found);
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

  /**
   * Adds an instance's parts (their figures are not changed), projected on the requested
   * attribution keys and merged first, so that the instance counts once per group; an
   * instance without parts (no elapsed time) still counts in the group of its own keys.
   *
   * @param day the local day of the instance's start.
   */
  add(inst: SummedInstance, parts: readonly Part[], day: InstanceDay): void {
    const base = this.keysOf(inst, day.date);
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
      group.days.set(base.day, day.length);
    }
  }

  /**
   * Adds an instance that no log covers: its one part has every attribution null (as
   * `add` with that part, without its projection; an empty instance is most of a long
   * window's).
   */
  addUnattributed(inst: SummedInstance, figures: Figures, day: InstanceDay): void {
    const base = this.keysOf(inst, day.date);
    const group = this.groupOf(base.id, base.keys);
    addFigures(group.figures, figures);
    group.instances += 1;
    group.days.set(base.day, day.length);
  }
}

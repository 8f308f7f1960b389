/**
 * The plant board's stops, by machine: kept from the stops report, and changed at once by
 * the stream events (stop.started, stop.ended, stop.updated, stop.deleted, stop.classified,
 * stop.unclassified) and by the answer of a reason given from the board, before the report
 * is read again. No DOM here: the cards (./board-card.ts) and the machine's stop list
 * (./board-reasons.ts) draw from it, and test/board/ checks it alone.
 */
import { DAY_MS } from "../../time/units";
import type {
  LiveEvent,
  Stop,
  StopClassification,
  StopClassifiedEventData,
  StopEventData,
  StopsRow,
  StopUnclassifiedEventData,
} from "./board-types";

/**
 * A stop without a reason that ended less than this long ago waits for one, ms: the stops a
 * scanner can still label (docs/realtime.md, "Stop reasons"), and the reasons the cards show.
 */
const RECENT_MS = DAY_MS;

/**
 * A stop changed by a stream event keeps that version over a report whose read began less
 * than this long before the event: the report reads a replica, which may lag a few seconds.
 */
const EVENT_WINS_MS = 10_000;

/** What the board knows of a stop: a stream event carries only these fields of it. */
export type StopFacts = Pick<Stop, "id" | "startTime" | "endTime" | "isProgrammed"> & Partial<Stop>;

/** One stop of a machine as the board holds it. */
export interface StopEntry {
  stop: StopFacts;
  /** Null while the stop waits for its reason. */
  classification: StopClassification | null;
  /** When an event or a write changed it (ms); 0 when it came from a report. */
  patchedAt: number;
  /** Deleted (kept a while, so that a lagging report does not bring it back). */
  deleted: boolean;
}

/** A machine's stops at an instant: see {@link BoardStops.summary}. */
interface StopSummary {
  open: StopEntry | undefined;
  waiting: StopEntry[];
  given: StopEntry[];
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);

function causeOf(value: unknown): { id: string | null; name: string | null } {
  return isRecord(value)
    ? { id: text(value.id), name: text(value.name) }
    : { id: null, name: null };
}

/**
 * The classification of a `stop.classified` event, as the stops report writes it (the
 * document types the event's payload loosely: its fields are read one by one).
 */
function classificationOf(value: Record<string, unknown>): StopClassification {
  return {
    id: typeof value.id === "number" ? value.id : null,
    createdAt: text(value.createdAt),
    updatedAt: text(value.updatedAt),
    description: text(value.description),
    generalCause: causeOf(value.generalCause),
    specificCause: causeOf(value.specificCause),
    component: causeOf(value.component),
  };
}

/** The classification of a report row, or null when the stop has none. */
const rowClassification = (row: StopsRow): StopClassification | null =>
  row.classification.id === null ? null : row.classification;

/** The reason of a classification in a few words: its causes, else its description. */
export function reasonText(classification: StopClassification): string {
  const causes = [
    classification.generalCause.name,
    classification.specificCause.name,
    classification.component.name,
  ].filter((name): name is string => Boolean(name));
  if (causes.length > 0) return causes.join(" · ");
  return classification.description || "reason given";
}

const startOf = (entry: StopEntry) => Date.parse(entry.stop.startTime);
const endOf = (entry: StopEntry, now: number) =>
  entry.stop.endTime === null ? now : Date.parse(entry.stop.endTime);

/** The stops of every machine of the company. */
export class BoardStops {
  /** machine id -> stop id -> entry. */
  #byMachine = new Map<number, Map<number, StopEntry>>();

  #stopsOf(machineId: number): Map<number, StopEntry> {
    let stops = this.#byMachine.get(machineId);
    if (!stops) {
      stops = new Map();
      this.#byMachine.set(machineId, stops);
    }
    return stops;
  }

  /**
   * Takes the stops report's rows (read from `requestedAt`, ms) as the board's stops; a stop
   * an event or a write changed after that keeps its newer version.
   */
  fromReport(rows: StopsRow[], requestedAt: number): void {
    const previous = this.#byMachine;
    this.#byMachine = new Map();
    for (const row of rows) {
      this.#stopsOf(row.machine.id).set(row.stop.id, {
        stop: row.stop,
        classification: rowClassification(row),
        patchedAt: 0,
        deleted: false,
      });
    }
    for (const [machineId, stops] of previous) {
      for (const [id, entry] of stops) {
        if (entry.patchedAt < requestedAt - EVENT_WINS_MS) continue;
        this.#stopsOf(machineId).set(id, entry);
      }
    }
  }

  /**
   * Takes rows read after a change (the answer of a reason given from the board, a
   * machine's recent stops) as the newest version of those stops.
   *
   * @param at when they were read, ms.
   */
  merge(rows: StopsRow[], at: number): void {
    for (const row of rows) {
      this.#stopsOf(row.machine.id).set(row.stop.id, {
        stop: row.stop,
        classification: rowClassification(row),
        patchedAt: at,
        deleted: false,
      });
    }
  }

  /**
   * Applies one stream event of the company's stream to the stops. The event's `data` is
   * read as its `type` says (the document ties the two in prose, not in the schema).
   *
   * @returns true when it changed a stop (the card is drawn again at once).
   */
  applyEvent(event: LiveEvent, now: number): boolean {
    if (event.machineId === null) return false;
    const stops = this.#stopsOf(event.machineId);
    switch (event.type) {
      case "stop.started":
      case "stop.ended":
      case "stop.updated": {
        const { stop } = event.data as StopEventData;
        const known = stops.get(stop.id);
        stops.set(stop.id, {
          stop: { ...known?.stop, ...stop },
          classification: known?.classification ?? null,
          patchedAt: now,
          deleted: false,
        });
        return true;
      }
      case "stop.deleted": {
        const { stop } = event.data as StopEventData;
        stops.set(stop.id, { stop, classification: null, patchedAt: now, deleted: true });
        return true;
      }
      case "stop.classified":
      case "stop.unclassified": {
        const { stopId } = event.data as StopClassifiedEventData | StopUnclassifiedEventData;
        const known = stops.get(stopId);
        if (!known || known.deleted) return false;
        const classification =
          event.type === "stop.classified"
            ? classificationOf((event.data as StopClassifiedEventData).classification)
            : null;
        stops.set(stopId, { ...known, classification, patchedAt: now });
        return true;
      }
      default:
        return false;
    }
  }

  /** A machine's stops that are not deleted, in no particular order. */
  entries(machineId: number): StopEntry[] {
    return [...(this.#byMachine.get(machineId)?.values() ?? [])].filter((e) => !e.deleted);
  }

  /**
   * A machine's recent stops at `now`: begun by then, and open or ended less than
   * {@link RECENT_MS} ago; newest start first (the stops a reason can be given to).
   */
  recent(machineId: number, now: number): StopEntry[] {
    return this.entries(machineId)
      .filter((e) => startOf(e) <= now && endOf(e, now) >= now - RECENT_MS)
      .sort((a, b) => startOf(b) - startOf(a));
  }

  /**
   * A machine's stops at `now`, as its card shows them: `open`, its open stop (the one that
   * started last); `waiting`, every stop that ended without a reason less than
   * {@link RECENT_MS} ago (not programmed); `given`, those that ended with one in that time.
   * Both lists newest end first.
   */
  summary(machineId: number, now: number): StopSummary {
    const recent = this.recent(machineId, now);
    const ended = recent
      .filter((e) => e.stop.endTime !== null)
      .sort((a, b) => endOf(b, now) - endOf(a, now));
    return {
      open: recent.find((e) => e.stop.endTime === null),
      waiting: ended.filter((e) => !e.stop.isProgrammed && e.classification === null),
      given: ended.filter((e) => e.classification !== null),
    };
  }
}

/** The board's stops (one store per page). */
export const boardStops = new BoardStops();

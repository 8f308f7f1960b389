/**
 * The events of the stops, built from what the writers already hold, so that each call
 * site stays a one-line `publish(...)` (the realtime writes' own are in
 * src/realtime/event-payloads.ts). Shapes: `./schemas.ts`.
 */
import type { StopOrigin } from "../db/stop-origins";
import type { Publishable } from "./publish";

const isoOrNull = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();

/** A stop as its events carry it; instants in ms. */
interface StopFacts {
  id: number;
  startTime: number;
  endTime: number | null;
  isProgrammed: boolean;
  origin: StopOrigin;
}

/**
 * The event of a stop created or changed: `stop.started` (created open), `stop.ended`
 * (created closed, or closed by an edit), `stop.updated` (another edit), `stop.deleted`.
 *
 * @param change what happened; `wasOpen` = the stop had no end before an edit.
 */
export function stopEvent(
  stop: StopFacts,
  change: "created" | "updated" | "deleted",
  wasOpen = false,
): Publishable {
  const type =
    change === "deleted"
      ? "stop.deleted"
      : change === "created"
        ? stop.endTime === null
          ? "stop.started"
          : "stop.ended"
        : wasOpen && stop.endTime !== null
          ? "stop.ended"
          : "stop.updated";
  return {
    type,
    at: type === "stop.started" ? stop.startTime : undefined,
    data: {
      stop: {
        id: stop.id,
        startTime: new Date(stop.startTime).toISOString(),
        endTime: isoOrNull(stop.endTime),
        isProgrammed: stop.isProgrammed,
        origin: stop.origin,
      },
    },
  };
}

/** `stop.classified`: the classification as the operator route answers it. */
export function stopClassified(stopId: number, classification: unknown): Publishable {
  return { type: "stop.classified", data: { stopId, classification } };
}

/** `stop.unclassified`: the stop's classification was deleted. */
export function stopUnclassified(stopId: number): Publishable {
  return { type: "stop.unclassified", data: { stopId } };
}

/**
 * The events of the realtime writes and of the stops, built from what the writers already
 * hold, so that each call site stays a one-line `publish(...)`. Shapes: `./schemas.ts`.
 */
import type { OperatorWrite, SegmentUpdate, SkuWrite } from "../realtime/machine-types";
import type { EventInput } from "./names";

type Publishable = Omit<EventInput, "machineId" | "machineEventId">;

const isoOrNull = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();

/** `segment.changed`: a SKU write the machine's object applied at `revision`. */
export function segmentChanged(
  revision: number,
  write: Omit<SkuWrite, "companyId" | "machineId">,
): Publishable {
  return {
    type: "segment.changed",
    ...(write.start === null ? {} : { at: write.start }),
    data: {
      revision,
      sku: write.sku,
      simpleWorkOrder: write.simpleWorkOrder,
      quantity: write.quantity,
      custom: write.customJson === null ? null : (JSON.parse(write.customJson) as unknown),
      start: isoOrNull(write.start),
      end: isoOrNull(write.end),
    },
  };
}

/** `segment.updated`: a write without a SKU, with only the fields it changed. */
export function segmentUpdated(
  revision: number,
  update: Omit<SegmentUpdate, "companyId" | "machineId">,
): Publishable {
  return {
    type: "segment.updated",
    data: {
      revision,
      ...(update.simpleWorkOrder ? { simpleWorkOrder: update.simpleWorkOrder } : {}),
      ...(update.quantity !== undefined ? { quantity: update.quantity } : {}),
      ...(update.customJson !== undefined
        ? { custom: JSON.parse(update.customJson) as unknown }
        : {}),
    },
  };
}

/** `operator.assigned`. */
export function operatorAssigned(
  revision: number,
  write: Omit<OperatorWrite, "companyId" | "machineId">,
): Publishable {
  return {
    type: "operator.assigned",
    data: {
      revision,
      operator: { id: write.operatorId, firstName: write.firstName, lastName: write.lastName },
      start: new Date(write.start).toISOString(),
    },
  };
}

/** A stop as its events carry it; instants in ms. */
export interface StopFacts {
  id: number;
  startTime: number;
  endTime: number | null;
  isProgrammed: boolean;
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
      },
    },
  };
}

/** `stop.classified`: the classification as the operator route answers it. */
export function stopClassified(stopId: number, classification: unknown): Publishable {
  return { type: "stop.classified", data: { stopId, classification } };
}

/**
 * The events of the realtime writes, built from what the machine's object already holds,
 * so that each call site stays a one-line `publish(...)`. Shapes: src/streams/schemas.ts.
 */
import type { Publishable } from "../streams/publish";
import type { OperatorWrite, SegmentUpdate, SkuWrite } from "./machine-types";

const isoOrNull = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString();

/** `segment.changed`: a SKU write the machine's object applied at `revision`. */
export function segmentChanged(revision: number, write: SkuWrite): Publishable {
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
export function segmentUpdated(revision: number, update: SegmentUpdate): Publishable {
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
export function operatorAssigned(revision: number, write: OperatorWrite): Publishable {
  return {
    type: "operator.assigned",
    data: {
      revision,
      operator: { id: write.operatorId, firstName: write.firstName, lastName: write.lastName },
      start: new Date(write.start).toISOString(),
    },
  };
}

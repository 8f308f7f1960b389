/**
 * Publishing to the live streams: the one call the places that change things make.
 *
 * A publish never fails the change it reports: the change is already stored, and a
 * subscriber that missed an event because its stream could not be reached still has the
 * pull sync (`updatedAt`) to catch up. Failures are logged.
 */

import { namedStub } from "../durable/named-stub";
import type { Env } from "../env";
import { logError } from "../observability/log";
import type { LiveLogChange } from "./live-inputs";
import {
  companyStream,
  machineStream,
  parseStreamName,
  type StreamEventInput,
  ticketStore,
} from "./names";
import { StreamOutbox } from "./stream-outbox";
import type {
  CompanyStreamRpc,
  MachineStreamRpc,
  RealtimeTicketsRpc,
  StreamRpc,
} from "./stream-rpc";

/** An event as a publisher gives it: the machine comes from the stream. */
export type Publishable = Omit<StreamEventInput, "machineId" | "machineEventId">;

/** The stub of a machine's stream (`MachineStream`, `m:<companyId>:<machineId>`). */
function machineStreamObject(
  env: Pick<Env, "MACHINE_STREAM">,
  companyId: number,
  machineId: number,
): DurableObjectStub<MachineStreamRpc> {
  return namedStub(env.MACHINE_STREAM, machineStream(companyId, machineId));
}

/** The stub of a company's stream (`CompanyStream`, `c:<companyId>`). */
export function companyStreamObject(
  env: Pick<Env, "COMPANY_STREAM">,
  companyId: number,
): DurableObjectStub<CompanyStreamRpc> {
  return namedStub(env.COMPANY_STREAM, companyStream(companyId));
}

/**
 * The stub of a stream of either kind by its name (`m:...` or `c:...`: a lease names its
 * stream so).
 *
 * @throws Error for a name of no stream.
 */
export function streamObject(
  env: Pick<Env, "MACHINE_STREAM" | "COMPANY_STREAM">,
  name: string,
): DurableObjectStub<StreamRpc> {
  const stream = parseStreamName(name);
  if (stream === null) throw new Error(`Not a stream: ${name}`);
  return stream.kind === "machine"
    ? machineStreamObject(env, stream.companyId, stream.machineId)
    : companyStreamObject(env, stream.companyId);
}

/** The stub of a company's browser tickets (`RealtimeTickets`, `t:<companyId>`). */
export function ticketObject(
  env: Pick<Env, "REALTIME_TICKETS">,
  companyId: number,
): DurableObjectStub<RealtimeTicketsRpc> {
  return namedStub(env.REALTIME_TICKETS, ticketStore(companyId));
}

/**
 * Publishes one event to a machine's stream (and through it to the company's stream), and
 * marks the machine's live figures for recomputation.
 *
 * @param env the bindings holding `MACHINE_STREAM`.
 * @param companyId the machine's company (checked by the caller).
 * @param event the kind, its JSON payload and optionally when it happened (ms).
 * @returns once the stream stored it (so a client that saw the write's answer and then
 *   subscribes with its last id gets it); never throws.
 */
export async function publish(
  env: Pick<Env, "MACHINE_STREAM">,
  companyId: number,
  machineId: number,
  event: Publishable,
): Promise<void> {
  const name = machineStream(companyId, machineId);
  try {
    await machineStreamObject(env, companyId, machineId).append(name, { ...event, machineId });
  } catch (error) {
    logError("events_publish", error, { companyId, machineId });
  }
}

/**
 * Tells a machine's stream that its production may have changed (a `count` sample arrived,
 * or a realtime flush wrote logs, given as `change`): the stream recomputes production and
 * OEE at most once a second and emits what changed.
 *
 * @returns once the stream took note; never throws.
 */
export async function nudgeLive(
  env: Pick<Env, "MACHINE_STREAM">,
  companyId: number,
  machineId: number,
  change?: LiveLogChange,
): Promise<void> {
  const name = machineStream(companyId, machineId);
  try {
    await machineStreamObject(env, companyId, machineId).nudge(name, change);
  } catch (error) {
    logError("events_nudge", error, { companyId, machineId });
  }
}

/**
 * The events of one machine's realtime object, published durably: each is staged in the
 * object's SQLite (an `StreamOutbox`) before the write is answered, then sent in order, in
 * batches, one call to the machine's stream in flight at a time, without making the write
 * wait for the stream. A call that fails is retried (nothing is dropped); the stream
 * appends each event once, however often it is resent (`StreamDelivery`).
 *
 * Why from the object, inside its queue of operations: the events reach the stream in the
 * order of the writes' revisions while the write's answer does not wait for the stream (it
 * cost the write more than the write itself). A client that saw a write's answer and then
 * subscribes with its last event id still gets the write's event: the stream either has it
 * already (the replay) or appends it after the subscription (a stream event).
 */
export class MachinePublisher {
  private readonly outbox: StreamOutbox<Publishable>;

  /**
   * @param env the bindings holding `MACHINE_STREAM`.
   * @param sql the realtime object's SQLite (the outbox's table).
   * @param companyId the machine's company; `machineId` the machine (internal ids).
   */
  constructor(
    env: Pick<Env, "MACHINE_STREAM">,
    sql: SqlStorage,
    private readonly companyId: number,
    private readonly machineId: number,
  ) {
    const name = machineStream(companyId, machineId);
    this.outbox = new StreamOutbox<Publishable>(
      sql,
      "event_outbox",
      (batch, delivery) =>
        machineStreamObject(env, companyId, machineId).appendMany(
          name,
          batch.map((event) => ({ ...event, machineId })),
          delivery,
        ),
      (error) => logError("events_publish (retried)", error, { companyId, machineId }),
    );
  }

  /** True when this publisher is the one of `companyId`/`machineId`. */
  isFor(companyId: number, machineId: number): boolean {
    return this.companyId === companyId && this.machineId === machineId;
  }

  /** Stores one event to publish (synchronous, with the write's other storage). */
  stage(event: Publishable): void {
    this.outbox.stage(event);
  }

  /** Events stored and not yet acknowledged by the stream. */
  pending(): number {
    return this.outbox.pending();
  }

  /**
   * Sends what is stored.
   *
   * @returns settled once the stream stored it, or the failure was logged and a retry
   *   planned (for `ctx.waitUntil`); never rejects.
   */
  drain(): Promise<void> {
    return this.outbox.drain();
  }
}

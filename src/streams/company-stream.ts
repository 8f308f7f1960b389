/**
 * A company's event stream (`CompanyStream`, one object per company, named `c:<companyId>`,
 * `./names.ts`): every machine's events, forwarded by the machine streams
 * (`./machine-stream.ts`) in each machine's order, with ids of its own, for plant boards.
 * Its log and subscribers are the shared `StreamCore` (`./stream-core.ts`); it computes no
 * figures and forwards nothing.
 */

import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import type { StreamEventInput } from "./names";
import { StreamCore } from "./stream-core";
import type { StreamDelivery } from "./stream-outbox";
import type { CompanyStreamRpc } from "./stream-rpc";

export class CompanyStream extends DurableObject<Env> implements CompanyStreamRpc {
  /** The log and the subscribers. */
  private readonly core: StreamCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.core = new StreamCore(ctx, env);
  }

  /**
   * Appends a machine stream's forwarded events in order, each once (`StreamCore.fresh`).
   *
   * @param stream this object's name (`c:...`), kept on first use.
   * @returns the id of the last one appended (0 for none).
   */
  async appendMany(
    stream: string,
    inputs: StreamEventInput[],
    delivery?: StreamDelivery,
  ): Promise<number> {
    this.core.log.remember(stream);
    let last = 0;
    for (const input of this.core.fresh(inputs, delivery)) last = this.core.record(input).id;
    return last;
  }

  /** Subscribes a client (`StreamCore.subscribe`). */
  override async fetch(request: Request): Promise<Response> {
    return this.core.subscribe(request);
  }

  /**
   * Closes every connection of a revoked credential on this stream; says how many, and
   * whether `restart` must follow (`StreamCore.closeCredential`).
   */
  async closeCredential(
    stream: string,
    credentialId: string,
  ): Promise<{ closed: number; restart: boolean }> {
    return this.core.closeCredential(stream, credentialId);
  }

  /** Ends this instance after `closeCredential` asked for it (`StreamCore.restart`). */
  async restart(): Promise<void> {
    this.core.restart();
  }

  override async webSocketMessage(): Promise<void> {
    // Subscribers only listen; "ping" is answered without waking the object.
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    await this.core.subscribers.closed(ws, code);
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.core.subscribers.failed(ws);
  }

  /** Ends connections whose access token expired, then waits for the next one. */
  override async alarm(): Promise<void> {
    this.core.subscribers.closeExpired(Date.now());
    await this.core.scheduleClosing();
  }
}

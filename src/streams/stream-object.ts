/**
 * What both stream objects answer alike (`MachineStream`, `CompanyStream`): subscribing a
 * client, closing a revoked credential's connections and restarting, and the WebSocket
 * Hibernation handlers, each handed to the object's `StreamCore`. The two classes add their
 * own RPC methods and alarm. docs/stream-events.md ("Design").
 */

import { DurableObject } from "cloudflare:workers";
import { migrateObject, type ObjectMigration } from "../db/object-migrations";
import type { Env } from "../env";
import { StreamCore } from "./stream-core";

export abstract class StreamObject extends DurableObject<Env> {
  /** The log and the subscribers. */
  protected readonly core: StreamCore;

  /** @param migrations the class's schema steps (./stream-migrations.ts). */
  constructor(ctx: DurableObjectState, env: Env, migrations: readonly ObjectMigration[]) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, migrations);
    this.core = new StreamCore(ctx, env);
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

  /**
   * The alarm's first step in both streams: ends the connections whose access token expired
   * (`StreamCore.closeExpired`). When WebSockets were among them the instance ends here,
   * with the alarm set to wake the next instance at once for the rest of this alarm's work
   * (a machine stream's tick and forwards; the next expiry).
   *
   * @throws Error with `EXPIRY_RESTART_REASON` when the instance ends.
   */
  protected async closeExpired(): Promise<void> {
    if (!(await this.core.closeExpired(Date.now()))) return;
    await this.ctx.storage.setAlarm(Date.now());
    await this.ctx.storage.sync();
    this.core.endInstance();
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
}

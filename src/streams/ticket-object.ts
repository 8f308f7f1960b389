/**
 * A company's browser tickets (`RealtimeTickets`, one object per company, named
 * `t:<companyId>`): one use, valid `TICKET_TTL_MS`, kept by a `TicketTable`
 * (`./tickets.ts`).
 */

import { DurableObject } from "cloudflare:workers";
import { migrateObject } from "../db/object-migrations";
import type { Env } from "../env";
import type { RealtimeTicketsRpc } from "./stream-rpc";
import { TICKET_MIGRATIONS } from "./ticket-migrations";
import { type TicketPrincipal, TicketTable } from "./tickets";

export class RealtimeTickets extends DurableObject<Env> implements RealtimeTicketsRpc {
  private readonly tickets: TicketTable;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // Before any read of the tables; the constructor runs before any event reaches the object.
    migrateObject(ctx.storage, TICKET_MIGRATIONS);
    this.tickets = new TicketTable(ctx.storage.sql);
  }

  /** Stores a ticket (by its hash) for `TICKET_TTL_MS`. */
  async issueTicket(ticket: string, principal: TicketPrincipal): Promise<void> {
    return this.tickets.issueTicket(ticket, principal);
  }

  /** Takes a ticket: its principal once, while valid; null when unknown, used or expired. */
  async redeemTicket(ticket: string): Promise<TicketPrincipal | null> {
    return this.tickets.redeemTicket(ticket);
  }
}

/**
 * Browser tickets (the `t:<companyId>` objects, class `RealtimeTickets`: ./ticket-object.ts): one use, valid
 * `TICKET_TTL_MS`, kept as SHA-256 hashes (a ticket never sits in storage).
 */
import { MINUTE_MS } from "../time/units";

/** How long a ticket is valid (ms). */
export const TICKET_TTL_MS = MINUTE_MS;

/** A principal as a ticket keeps it (scopes as an array). */
export interface TicketPrincipal {
  companyId: number;
  companyName: string;
  timezone: string;
  credentialId: string;
  kind: "api_key" | "access_token";
  scopes: string[];
  rateLimit: { requests: number; periodSeconds: number } | null;
  /** When the credential expires (ms; an access token's `exp` plus leeway), null for a key. */
  expiresAt?: number | null;
}

const encoder = new TextEncoder();

/** SHA-256 of a ticket, hex: the object keeps hashes, not tickets. */
async function hashTicket(ticket: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(ticket));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The `tickets` table of a `t:` object. */
export class TicketTable {
  /** @param sql the object's SQLite, migrated (./ticket-migrations.ts). */
  constructor(private readonly sql: SqlStorage) {}

  /** Stores a ticket (by its hash) for `TICKET_TTL_MS`. */
  async issueTicket(ticket: string, principal: TicketPrincipal): Promise<void> {
    const now = Date.now();
    this.sql.exec("DELETE FROM tickets WHERE expires <= ?", now);
    this.sql.exec(
      "INSERT INTO tickets (hash, principal, expires) VALUES (?, ?, ?)",
      await hashTicket(ticket),
      JSON.stringify(principal),
      now + TICKET_TTL_MS,
    );
  }

  /**
   * Takes a ticket: its principal once, while valid; null when unknown, used or expired, or
   * when the credential it stands for has expired.
   */
  async redeemTicket(ticket: string): Promise<TicketPrincipal | null> {
    const hash = await hashTicket(ticket);
    const row = this.sql
      .exec<{ principal: string; expires: number }>(
        "DELETE FROM tickets WHERE hash = ? RETURNING principal, expires",
        hash,
      )
      .toArray()[0];
    if (!row || row.expires <= Date.now()) return null;
    const principal = JSON.parse(row.principal) as TicketPrincipal;
    // A ticket stands for its credential: it opens nothing once the credential has expired
    // (a revoked key is refused when the stream takes its connection lease).
    if (typeof principal.expiresAt === "number" && principal.expiresAt <= Date.now()) return null;
    return principal;
  }
}

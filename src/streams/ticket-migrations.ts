/**
 * The schema of a company's browser tickets object (`RealtimeTickets`, ./ticket-object.ts),
 * step by step (src/db/object-migrations.ts): each ticket by its hash, until it expires.
 */
import type { ObjectMigration } from "../db/object-migrations";

/** The steps of `RealtimeTickets`, oldest first; a change is a new step at the end. */
export const TICKET_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  `
  CREATE TABLE IF NOT EXISTS tickets (
    hash TEXT PRIMARY KEY, principal TEXT NOT NULL, expires INTEGER NOT NULL);
  `,
];

/**
 * The schema of a rate limiter object (`RateLimiter`, ./rate-limiter.ts), step by step
 * (src/db/object-migrations.ts): `hits` counts the requests admitted by instant, `meta` keeps the
 * period of the last policy for the alarm.
 */
import type { ObjectMigration } from "../db/object-migrations";

/** The steps of `RateLimiter`, oldest first; a change is a new step at the end. */
export const RATE_LIMITER_MIGRATIONS: readonly ObjectMigration[] = [
  // Step 1: the tables as the code before the runner made them (`IF NOT EXISTS`: an object
  // stored then has them).
  `
  CREATE TABLE IF NOT EXISTS hits (ts INTEGER PRIMARY KEY, n INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY CHECK (id = 1), period_ms INTEGER NOT NULL);
  `,
];

/**
 * Directory reads off the primary with a bounded lag: credentials, companies' shards and keys
 * by global id are read in D1 sessions that start at the isolate's anchor (a primary bookmark
 * at most `DIRECTORY_ANCHOR_MS` old), so answers are as of a known instant (`asOf`) and caches
 * count from it; a read that finds the anchor too old goes to the primary and renews it, and a
 * miss is asked again at the primary (a new key works at once).
 * docs/scaling.md ("The directory off the primary").
 */
import { SECOND_MS } from "../time/units";

/** Most age of the primary bookmark that directory reads start at, ms. */
export const DIRECTORY_ANCHOR_MS = SECOND_MS;

/** The isolate's anchor per directory binding: a primary bookmark and when it was taken. */
const anchors = new WeakMap<object, { bookmark: string; at: number }>();

/** What a directory read runs its statements on: a D1 session. */
export type DirectorySession = Pick<D1DatabaseSession, "prepare" | "batch">;

/** A directory read's answer and the instant it reflects the primary as of, ms. */
interface DirectoryAnswer<T> {
  value: T;
  /** Every write committed on the primary before this instant is in `value`. */
  asOf: number;
  /** True when it was read at the primary (the anchor was refreshed, or a miss confirmed). */
  primary: boolean;
}

/**
 * Runs a directory read at the isolate's anchor (a replica at most `DIRECTORY_ANCHOR_MS`
 * behind the primary), or at the primary when the anchor is older (then refreshed).
 *
 * @param db the directory's binding (`DB`).
 * @param read the statements, run on the session given (one session per call).
 * @param found false for an answer that must be confirmed at the primary (nothing found:
 *   what is missing may have been written after the anchor); default: always trusted.
 * @returns the answer and the instant it is as of.
 */
export async function readDirectory<T>(
  db: D1Database,
  read: (session: DirectorySession) => Promise<T>,
  found: (value: T) => boolean = () => true,
): Promise<DirectoryAnswer<T>> {
  const anchor = anchors.get(db);
  if (anchor && Date.now() - anchor.at < DIRECTORY_ANCHOR_MS) {
    const value = await read(db.withSession(anchor.bookmark));
    if (found(value)) return { value, asOf: anchor.at, primary: false };
  }
  return readAtPrimary(db, read);
}

/**
 * Runs a directory read at the primary and makes its bookmark the isolate's anchor: for the
 * reads that must not lag at all (a moving company's polls) and for `readDirectory`'s
 * refreshes.
 */
export async function readAtPrimary<T>(
  db: D1Database,
  read: (session: DirectorySession) => Promise<T>,
): Promise<DirectoryAnswer<T>> {
  // Taken before the read: the primary's state then is in the answer (and maybe more).
  const at = Date.now();
  const session = db.withSession("first-primary");
  const value = await read(session);
  const bookmark = session.getBookmark();
  const current = anchors.get(db);
  if (bookmark !== null && (current === undefined || current.at < at)) {
    anchors.set(db, { bookmark, at });
  }
  return { value, asOf: at, primary: true };
}

/** Forgets the isolate's anchor, so that the next directory read goes to the primary. */
export function forgetDirectoryAnchor(db: D1Database): void {
  anchors.delete(db);
}

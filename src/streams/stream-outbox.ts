/**
 * A durable outbox in a Durable Object's SQLite: what an object must publish is staged in the
 * same synchronous step as the change it reports (durable before the change is answered) and
 * sent from there: one call in flight, in order, up to `MAX_BATCH` items, calls at least
 * `CALL_SPACING_MS` apart (a group commit). A failed call is retried (`FORWARD_RETRY_MS`, the
 * alarm, the next start): nothing is dropped; each item carries a sequence number so the
 * receiver appends it once. Acknowledged items are deleted with the next item staged (at most
 * every `PRUNE_MS`), in the step that stages it, or on their own once nothing was staged for
 * `PRUNE_IDLE_MS`.
 * docs/stream-events.md (Design), docs/benchmarks.md ("Group commit of the events").
 */
import { SECOND_MS } from "../time/units";

/** Most items in one call (bounds the size of one RPC message). */
const MAX_BATCH = 500;
/** Wait before a failed send is tried again while the object lives (ms). */
const FORWARD_RETRY_MS = SECOND_MS;
/**
 * Shortest time between the starts of two calls of one outbox (ms): a busy sender's items
 * wait up to this long to share a call (docs/benchmarks.md, "Group commit of the events").
 */
export const CALL_SPACING_MS = 100;
/**
 * Shortest time between two deletes of acknowledged items (ms): what storage keeps beyond
 * the pending items is at most this long's worth (a busy machine's few hundred small rows).
 */
const PRUNE_MS = 5_000;
/**
 * How long acknowledged items wait for a next item to be deleted with, ms: once nothing was
 * staged for this long, they are deleted on their own. A delete in a step of its own is a
 * write transaction of its own, which in a store holding much else (a machine's samples)
 * cost as much CPU as the stop detector's whole work (docs/benchmarks.md, "Stop detection").
 */
export const PRUNE_IDLE_MS = 10_000;
/**
 * Most items kept in memory: a longer backlog (a receiver down for a while) is read from
 * storage, `MAX_BATCH` at a time, so that an outage does not grow the object's memory.
 */
const MAX_IN_MEMORY = 4 * MAX_BATCH;

/** A batch as its receiver gets it: where it comes from and each item's sequence number. */
export interface StreamDelivery {
  /** The sender (the outbox's table and a random id of its storage, kept with it). */
  source: string;
  /** The sequence number of each item, in order. */
  seqs: number[];
}

/** A staged item and its sequence number. */
interface Staged<T> {
  seq: number;
  item: T;
}

export class StreamOutbox<T> {
  private running: Promise<void> | null = null;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private sourceId: string | null = null;
  /** When the last call started (ms). */
  private lastCall = 0;
  /**
   * The unacknowledged items, in order, when they are all known in memory; null while
   * storage may hold more than this lifetime staged (after a start, or a long backlog).
   */
  private queue: Staged<T>[] | null = null;
  /** The last sequence number the receiver acknowledged in this lifetime (0: none yet). */
  private acknowledged = 0;
  /** The last sequence number staged (null: not read from storage yet). */
  private lastSeq: number | null = null;
  private readonly insertSql: string;
  /** When acknowledged items were last deleted from storage (ms), and the delete planned. */
  private lastPrune = 0;
  /** The last sequence number deleted from storage in this lifetime (0: none yet). */
  private pruned = 0;
  /** When an item was last staged (ms). */
  private lastStaged = 0;
  private pruneTimer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param sql the object's SQLite, with the outbox's tables (`outboxTables`, ./outbox-migrations.ts).
   * @param table the outbox's table name (one per kind of receiver).
   * @param send delivers one batch (1 to `MAX_BATCH` items, in order); resolves once the
   *   receiver stored them.
   * @param onFailure told of a failed batch (to log it, and to set the object's alarm for a
   *   retry at `retryAt`); must not throw.
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly table: string,
    private readonly send: (batch: T[], delivery: StreamDelivery) => Promise<unknown>,
    private readonly onFailure: (error: unknown, retryAt: number) => void,
  ) {
    this.insertSql = `INSERT INTO ${table} (seq, item) VALUES (?, ?)`;
  }

  /** This outbox's source name (random once per storage: a wiped object starts a new one). */
  private source(): string {
    if (this.sourceId !== null) return this.sourceId;
    const row = this.sql
      .exec<{ id: string }>("SELECT id FROM outbox_source WHERE tbl = ?", this.table)
      .toArray()[0];
    let id = row?.id;
    if (id === undefined) {
      id = crypto.randomUUID();
      this.sql.exec("INSERT INTO outbox_source (tbl, id) VALUES (?, ?)", this.table, id);
    }
    this.sourceId = `${this.table}:${id}`;
    return this.sourceId;
  }

  /**
   * Stores one item (synchronous: it commits with the caller's other writes of this step).
   * The caller must not change `item` afterwards (it may be sent as it is from memory).
   */
  stage(item: T): void {
    // The sequence number is chosen here, not read back (`RETURNING` costs a cursor per item):
    // AUTOINCREMENT's counter (`sqlite_sequence`) never goes back, even when every row was
    // deleted, so the next number is above any this storage ever sent.
    this.lastSeq ??=
      this.sql
        .exec<{ seq: number }>("SELECT seq FROM sqlite_sequence WHERE name = ?", this.table)
        .toArray()[0]?.seq ?? 0;
    this.lastSeq += 1;
    const seq = this.lastSeq;
    // The acknowledged items go in the same step: no write transaction of their own.
    this.lastStaged = Date.now();
    if (this.acknowledged > this.pruned && this.lastStaged - this.lastPrune >= PRUNE_MS) {
      this.prune();
    }
    this.sql.exec(this.insertSql, seq, JSON.stringify(item));
    if (this.queue === null) return;
    if (this.queue.length >= MAX_IN_MEMORY) this.queue = null;
    else this.queue.push({ seq, item });
  }

  /** Items staged and not yet acknowledged. */
  pending(): number {
    if (this.queue !== null) return this.queue.length;
    return this.sql
      .exec<{ n: number }>(
        `SELECT count(*) AS n FROM ${this.table} WHERE seq > ?`,
        this.acknowledged,
      )
      .one().n;
  }

  /**
   * Sends what is staged, in batches, until nothing is left or a call fails.
   *
   * @returns settled once this drain ended (for `ctx.waitUntil`); never rejects.
   */
  drain(): Promise<void> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * The next batch, oldest first: from memory when it holds every pending item, else read
   * from storage (and from then on kept in memory when what storage held fits in one batch).
   */
  private nextBatch(): Staged<T>[] {
    if (this.queue !== null) return this.queue.slice(0, MAX_BATCH);
    const rows = this.sql
      .exec<{ seq: number; item: string }>(
        `SELECT seq, item FROM ${this.table} WHERE seq > ? ORDER BY seq LIMIT ?`,
        this.acknowledged,
        MAX_BATCH,
      )
      .toArray();
    const batch = rows.map((r) => ({ seq: r.seq, item: JSON.parse(r.item) as T }));
    // Read in the same synchronous step as the check: nothing was staged in between, so a
    // short backlog is all of it, and what is staged from now on joins it in memory.
    if (batch.length < MAX_BATCH) this.queue = [...batch];
    return batch;
  }

  /**
   * Marks items up to `seq` acknowledged. They are deleted from storage with the next item
   * staged (`stage`), or once nothing was staged for `PRUNE_IDLE_MS` (one timer at a time).
   */
  private acknowledge(seq: number): void {
    this.acknowledged = seq;
    if (this.queue !== null) {
      const kept = this.queue.findIndex((s) => s.seq > seq);
      this.queue = kept < 0 ? [] : this.queue.slice(kept);
    }
    this.pruneWhenIdle();
  }

  /** Deletes the acknowledged items once nothing was staged for `PRUNE_IDLE_MS`. */
  private pruneWhenIdle(): void {
    if (this.pruneTimer !== undefined || this.acknowledged <= this.pruned) return;
    const due = Math.max(0, this.lastStaged + PRUNE_IDLE_MS - Date.now());
    this.pruneTimer = setTimeout(() => {
      this.pruneTimer = undefined;
      if (Date.now() - this.lastStaged >= PRUNE_IDLE_MS) {
        if (this.acknowledged > this.pruned) this.prune();
      } else this.pruneWhenIdle();
    }, due);
  }

  /** Deletes the acknowledged items from storage. */
  private prune(): void {
    this.lastPrune = Date.now();
    this.pruned = this.acknowledged;
    this.sql.exec(`DELETE FROM ${this.table} WHERE seq <= ?`, this.acknowledged);
  }

  private async run(): Promise<void> {
    for (;;) {
      // A sender that called less than CALL_SPACING_MS ago waits out the rest, so that
      // what is staged meanwhile shares the next call.
      const wait = this.lastCall + CALL_SPACING_MS - Date.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      const batch = this.nextBatch();
      const last = batch.at(-1);
      if (!last) return;
      this.lastCall = Date.now();
      try {
        await this.send(
          batch.map((s) => s.item),
          { source: this.source(), seqs: batch.map((s) => s.seq) },
        );
      } catch (error) {
        const retryAt = Date.now() + FORWARD_RETRY_MS;
        this.onFailure(error, retryAt);
        if (this.retry !== undefined) clearTimeout(this.retry);
        this.retry = setTimeout(() => void this.drain(), FORWARD_RETRY_MS);
        return;
      }
      this.acknowledge(last.seq);
    }
  }
}

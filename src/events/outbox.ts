/**
 * A durable outbox in a Durable Object's SQLite: what an object must publish is staged in
 * its storage in the same synchronous step as the change it reports (so in the same storage
 * transaction, and durable before the change is answered: the object's output gate holds
 * the answer until its writes are stored), and sent from there.
 *
 * Sending: one call in flight at a time, in staging order, up to `MAX_BATCH` items a call,
 * and calls at least `CALL_SPACING_MS` apart (group commit: what is staged meanwhile goes in
 * the next call). A call per event, plus its forward, cost a busy machine more CPU than the
 * write itself, and with one call in flight alone a stream that answers quickly still got
 * about one call per event (50 busy machines: 1.3 events per call); the spacing only delays
 * a sender that called less than `CALL_SPACING_MS` ago, so the event of a machine that writes
 * less often than that goes out at once. An item is deleted once its receiver acknowledged
 * it. A failed call keeps its items and is retried, after `RETRY_MS` while the object
 * lives and by the object's alarm (`retryAt`) or its next start otherwise: nothing is
 * dropped. A retry may resend items the receiver already stored (its answer was lost), so
 * every item carries a sequence number and the receiver keeps the last one it stored per
 * `source` (`StreamCore.fresh`): it appends each item once.
 */
/** Most items in one call (bounds the size of one RPC message). */
export const MAX_BATCH = 500;
/** Wait before a failed send is tried again while the object lives (ms). */
export const RETRY_MS = 1_000;
/**
 * Shortest time between the starts of two calls of one outbox (ms): a busy sender's items
 * wait up to this long to share a call (docs/benchmarks.md, "Group commit of the events").
 */
export const CALL_SPACING_MS = 100;

/** A batch as its receiver gets it: where it comes from and each item's sequence number. */
export interface Delivery {
  /** The sender (the outbox's table and a random id of its storage, kept with it). */
  source: string;
  /** The sequence number of each item, in order. */
  seqs: number[];
}

export class Outbox<T> {
  private running: Promise<void> | null = null;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private sourceId: string | null = null;
  /** When the last call started (ms). */
  private lastCall = 0;

  /**
   * @param sql the object's SQLite.
   * @param table the outbox's table name (one per kind of receiver).
   * @param send delivers one batch (1 to `MAX_BATCH` items, in order); resolves once the
   *   receiver stored them.
   * @param onFailure told of a failed batch (to log it, and to set the object's alarm for a
   *   retry at `retryAt`); must not throw.
   */
  constructor(
    private readonly sql: SqlStorage,
    private readonly table: string,
    private readonly send: (batch: T[], delivery: Delivery) => Promise<unknown>,
    private readonly onFailure: (error: unknown, retryAt: number) => void,
  ) {
    sql.exec(
      `CREATE TABLE IF NOT EXISTS ${table} (seq INTEGER PRIMARY KEY AUTOINCREMENT, item TEXT NOT NULL)`,
    );
    sql.exec(`CREATE TABLE IF NOT EXISTS outbox_source (tbl TEXT PRIMARY KEY, id TEXT NOT NULL)`);
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

  /** Stores one item (synchronous: it commits with the caller's other writes of this step). */
  stage(item: T): void {
    this.sql.exec(`INSERT INTO ${this.table} (item) VALUES (?)`, JSON.stringify(item));
  }

  /** Items staged and not yet acknowledged. */
  pending(): number {
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${this.table}`).one().n;
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

  private async run(): Promise<void> {
    for (;;) {
      // A sender that called less than CALL_SPACING_MS ago waits out the rest, so that
      // what is staged meanwhile shares the next call.
      const wait = this.lastCall + CALL_SPACING_MS - Date.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      const rows = this.sql
        .exec<{ seq: number; item: string }>(
          `SELECT seq, item FROM ${this.table} ORDER BY seq LIMIT ?`,
          MAX_BATCH,
        )
        .toArray();
      const last = rows.at(-1);
      if (!last) return;
      this.lastCall = Date.now();
      try {
        await this.send(
          rows.map((r) => JSON.parse(r.item) as T),
          { source: this.source(), seqs: rows.map((r) => r.seq) },
        );
      } catch (error) {
        const retryAt = Date.now() + RETRY_MS;
        this.onFailure(error, retryAt);
        if (this.retry !== undefined) clearTimeout(this.retry);
        this.retry = setTimeout(() => void this.drain(), RETRY_MS);
        return;
      }
      this.sql.exec(`DELETE FROM ${this.table} WHERE seq <= ?`, last.seq);
    }
  }
}

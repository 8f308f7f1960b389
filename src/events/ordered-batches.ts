/**
 * Ordered batches: items pushed are handed to one `send` call at a time, in the order they
 * were pushed; the items pushed while a call is in flight go together in the next call.
 *
 * Why: a busy machine's realtime writes each make an event, and a Durable Object call per
 * event (plus its forward to the company stream) cost more CPU than the write itself. With
 * one call in flight, a stream gets as many calls as it can answer, never more, and the
 * order of the events is the order of the pushes.
 */

/** Most items in one call (bounds the size of one RPC message). */
export const MAX_BATCH = 500;

export class OrderedBatches<T> {
  private queued: T[] = [];
  private running: Promise<void> | null = null;

  /**
   * @param send delivers one batch (1 to `MAX_BATCH` items, in push order); a rejection is
   *   given to `onError` and the next batch is sent anyway.
   * @param onError told of a batch that could not be sent (to log it); must not throw.
   */
  constructor(
    private readonly send: (batch: T[]) => Promise<unknown>,
    private readonly onError: (error: unknown, batch: T[]) => void,
  ) {}

  /**
   * Queues one item.
   *
   * @returns a promise settled once every item queued so far was sent or reported to
   *   `onError` (for `ctx.waitUntil`); it never rejects.
   */
  push(item: T): Promise<void> {
    this.queued.push(item);
    this.running ??= this.drain();
    return this.running;
  }

  /** Items not yet handed to `send` (tests and diagnostics). */
  get pending(): number {
    return this.queued.length;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0, MAX_BATCH);
        try {
          await this.send(batch);
        } catch (error) {
          this.onError(error, batch);
        }
      }
    } finally {
      this.running = null;
    }
  }
}

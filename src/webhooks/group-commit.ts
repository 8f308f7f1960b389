/**
 * Group commit: items submitted while a call is in flight go out together in
 * the next call, as soon as the one in flight has ended. A submitter waits
 * only for the call holding its own items, never for another delivery's
 * attempt. The deliverer uses it for the D1 writes of attempts and outcomes
 * (one `db.batch`, one transaction, per group).
 */
export class GroupCommit<T> {
  #queued: { items: T[]; done: (error?: unknown) => void }[] = [];
  #draining = false;

  /**
   * @param run sends one group (never empty).
   * @param maxItems most items in one call; a submission is never split.
   */
  constructor(
    private readonly run: (items: [T, ...T[]]) => Promise<unknown>,
    private readonly maxItems = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * Sends `items`, in order, in one call shared with other submissions.
   *
   * @throws what `run` throws for the call that held them (a failed call fails
   *   every submission it held).
   */
  submit(items: T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#queued.push({
        items,
        done: (error) => (error === undefined ? resolve() : reject(error)),
      });
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    // One macrotask turn: the attempts answered at the same moment join the first call.
    await new Promise((resolve) => setTimeout(resolve, 0));
    while (this.#queued.length > 0) {
      let count = 0;
      let take = 0;
      for (const q of this.#queued) {
        if (take > 0 && count + q.items.length > this.maxItems) break;
        count += q.items.length;
        take += 1;
      }
      const group = this.#queued.splice(0, take);
      const [first, ...rest] = group.flatMap((g) => g.items);
      try {
        if (first !== undefined) await this.run([first, ...rest]);
        for (const g of group) g.done();
      } catch (error) {
        for (const g of group) g.done(error ?? new Error("group call failed"));
      }
    }
    this.#draining = false;
  }
}

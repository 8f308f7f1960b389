/**
 * Bounded concurrency for batches of HTTP calls.
 */

/**
 * Runs `task` over every item with at most `limit` calls in flight; results keep input order.
 *
 * @param items the inputs.
 * @param limit maximum number of concurrent calls (>= 1).
 * @param task the async work for one item (receives the item and its index).
 * @returns the results, in the order of `items`.
 * @throws the first error a task throws; tasks not yet started are then skipped,
 *   tasks already in flight run to their end.
 */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`limit must be >= 1, got ${limit}`);
  const results: R[] = new Array(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index] as T, index);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Bounded concurrency for a collection run. */

export { Limiter } from '../limiter.js';

/**
 * Runs fn over items with at most `workers` in flight; resolves when all are done. The first
 * failure stops handing out new items and is rethrown once the started ones have settled.
 */
export async function forEachLimited<T>(items: Iterable<T>, workers: number, fn: (item: T) => Promise<void>): Promise<void> {
  const iterator = items[Symbol.iterator]();
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (failure === null) {
      const next = iterator.next();
      if (next.done) return;
      try {
        await fn(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, workers) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/** Serialises async calls: each starts when the previous one has settled. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  push<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn, fn);
    this.tail = result.catch(() => undefined);
    return result;
  }
}

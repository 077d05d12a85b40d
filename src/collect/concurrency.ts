/** Bounded concurrency for a collection run. */

/** At most `size` tasks run at once; the others wait in FIFO order. */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1) throw new Error(`limiter size must be a positive integer, got ${size}`);
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays counted.
      if (next) next();
      else this.active--;
    }
  }
}

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

/**
 * Bounded concurrency, one implementation for the whole service: the cloud client's request
 * limit, a collection run's request and page limits, and the password checks of sign-in.
 */

/** A task refused because `maxWaiting` tasks are already waiting. */
export class LimiterFullError extends Error {
  constructor() {
    super('too many tasks waiting');
    this.name = 'LimiterFullError';
  }
}

/**
 * At most `size` tasks run at once; the others wait, at most `maxWaiting` of them, and a freed
 * slot goes to the waiting task of lowest `priority` (FIFO among equals, and by default).
 */
export class Limiter {
  private active = 0;
  /** Sorted by priority, then arrival. */
  private readonly waiting: Array<{ priority: number; resolve: () => void }> = [];

  constructor(
    readonly size: number,
    readonly maxWaiting = Number.POSITIVE_INFINITY,
  ) {
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`limiter size must be a positive integer, got ${size}`);
    if (!(maxWaiting >= 0)) throw new RangeError(`limiter maxWaiting must be zero or more, got ${maxWaiting}`);
  }

  /** Runs `task` when a slot is free (the task's failure frees it too); throws LimiterFullError when the queue is full. */
  async run<T>(task: () => Promise<T>, priority = 0): Promise<T> {
    if (this.active < this.size) this.active++;
    else if (this.waiting.length >= this.maxWaiting) throw new LimiterFullError();
    // The slot passes straight from the task that ends to the next waiter, so `active` stays counted.
    else await new Promise<void>((resolve) => this.enqueue({ priority, resolve }));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next.resolve();
      else this.active--;
    }
  }

  private enqueue(waiter: { priority: number; resolve: () => void }): void {
    let at = this.waiting.length;
    while (at > 0 && this.waiting[at - 1]!.priority > waiter.priority) at--;
    this.waiting.splice(at, 0, waiter);
  }
}

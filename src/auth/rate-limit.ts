/**
 * Counts events (failed logins) per key in a sliding window, in this process's memory.
 *
 * Why in memory: it needs no table and no write per attempt, and a restart only forgets recent
 * failures. The cost: with several replicas each counts its own attempts, so an attacker spread
 * over N replicas gets N times the budget (still tiny against scrypt hashes). Memory is bounded:
 * old entries are pruned as keys are touched, and at most `maxKeys` keys are kept (the oldest
 * dropped first).
 */
export class SlidingWindowLimiter {
  private readonly events = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly maxKeys = 50_000,
  ) {}

  private recent(key: string, now: number): number[] {
    const list = this.events.get(key);
    if (!list) return [];
    const fresh = list.filter((t) => now - t < this.windowMs);
    if (fresh.length === 0) this.events.delete(key);
    else if (fresh.length !== list.length) this.events.set(key, fresh);
    return fresh;
  }

  /** Milliseconds until the key may try again; 0 when it is under its limit. */
  retryAfterMs(key: string, now = Date.now()): number {
    const fresh = this.recent(key, now);
    if (fresh.length < this.limit) return 0;
    // The window frees a slot when the oldest counted event leaves it.
    return Math.max(1, this.windowMs - (now - fresh[fresh.length - this.limit]!));
  }

  record(key: string, now = Date.now()): void {
    const fresh = this.recent(key, now);
    fresh.push(now);
    this.events.delete(key); // re-insert: Map order is then least recently touched first
    this.events.set(key, fresh);
    while (this.events.size > this.maxKeys) {
      const oldest = this.events.keys().next().value as string;
      this.events.delete(oldest);
    }
  }

  reset(key: string): void {
    this.events.delete(key);
  }
}

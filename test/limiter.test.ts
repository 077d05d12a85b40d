import { describe, expect, it } from 'vitest';
import { Limiter, LimiterFullError } from '../src/limiter.js';

describe('Limiter', () => {
  it('runs at most `size` tasks at once, queues up to maxWaiting in order, refuses beyond', async () => {
    const limiter = new Limiter(2, 1);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const check = (n: number) =>
      limiter.run(async () => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => releases.push(resolve));
        order.push(n);
        running--;
        return n;
      });
    const first = [check(1), check(2), check(3)];
    await expect(check(4)).rejects.toBeInstanceOf(LimiterFullError);
    await new Promise((r) => setImmediate(r));
    expect(releases).toHaveLength(2); // 3 waits for a slot
    releases.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(releases).toHaveLength(2); // 3 got the freed slot
    releases.splice(0).forEach((release) => release());
    expect(await Promise.all(first)).toEqual([1, 2, 3]);
    expect(most).toBe(2);
    expect(order).toEqual([1, 2, 3]);
    // A failing task frees its slot too.
    await expect(limiter.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await Promise.all([limiter.run(async () => 'a'), limiter.run(async () => 'b'), limiter.run(async () => 'c')])).toEqual(['a', 'b', 'c']);
  });

  it('gives a freed slot to the waiting task of lowest priority, in arrival order among equals', async () => {
    const limiter = new Limiter(1);
    const started: string[] = [];
    let release!: () => void;
    const blocker = limiter.run(() => new Promise<void>((resolve) => (release = resolve)));
    const task = (name: string, priority?: number) =>
      limiter.run(async () => {
        started.push(name);
      }, priority);
    const all = [task('default-1'), task('late', 5), task('first', -1), task('default-2'), task('late-2', 5), task('early', 0)];
    release();
    await blocker;
    await Promise.all(all);
    expect(started).toEqual(['first', 'default-1', 'default-2', 'early', 'late', 'late-2']);
  });
});

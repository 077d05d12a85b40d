/**
 * The report cache: results are reused while the data is unchanged, and a collection that
 * finishes (a new complete snapshot) shows in the very next report.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database, Queryable } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { instances, snapshots, instancesKept } from '../../src/db/schema.js';
import { costReport } from '../../src/reports/cost.js';
import { inventoryReport } from '../../src/reports/inventory.js';
import { overviewReport } from '../../src/reports/overview.js';
import { cacheKey, dataVersionOf, oneDataVersion, ReportCache, withNow } from '../../src/reports/shared/cache.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, SCOPE_A } from './fixture.js';
import { openKnownDataset, dec, run, summaryValue, type Ctx } from './helpers.js';

/** A database stand-in whose data version the test sets. */
function fakeDb(version: { v: string }): Queryable {
  return { query: async () => [{ v: version.v }] } as unknown as Queryable;
}

describe('ReportCache', () => {
  it('reuses a result while the data version and the clock allow, and recomputes after', async () => {
    const cache = new ReportCache({ ttlMs: 60_000, staleMs: 60_000, maxEntries: 10 });
    const version = { v: '1' };
    const scope = { db: fakeDb(version), config: {}, now: NOW };
    let computed = 0;
    const compute = async () => ++computed;

    expect(await cache.get(scope, 'k', compute)).toBe(1);
    expect(await cache.get(scope, 'k', compute)).toBe(1);
    expect(await cache.get({ ...scope, now: new Date(NOW.getTime() + 59_000) }, 'k', compute)).toBe(1);
    // Another key, a new data version, or a clock past the lifetime: computed again.
    expect(await cache.get(scope, 'other', compute)).toBe(2);
    version.v = '2';
    expect(await cache.get(scope, 'k', compute)).toBe(3);
    expect(await cache.get({ ...scope, now: new Date(NOW.getTime() + 60_000) }, 'k', compute)).toBe(4);
    // A clock going back (another context's "now") is not served a result computed for later.
    expect(await cache.get({ ...scope, now: new Date(NOW.getTime() - 1) }, 'k', compute)).toBe(5);
  });

  it('shares one computation between concurrent callers and forgets failures', async () => {
    const cache = new ReportCache({ ttlMs: 60_000, staleMs: 60_000, maxEntries: 10 });
    const scope = { db: fakeDb({ v: '1' }), config: {}, now: NOW };
    let computed = 0;
    const slow = async () => {
      computed++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return computed;
    };
    expect(await Promise.all([cache.get(scope, 'k', slow), cache.get(scope, 'k', slow)])).toEqual([1, 1]);

    let fail = true;
    const flaky = async () => {
      if (fail) throw new Error('boom');
      return 'ok';
    };
    await expect(cache.get(scope, 'f', flaky)).rejects.toThrow('boom');
    fail = false;
    expect(await cache.get(scope, 'f', flaky)).toBe('ok');
  });

  it('shares one computation between requests whose data version reads would end out of order', async () => {
    const cache = new ReportCache({ ttlMs: 60_000, staleMs: 60_000, maxEntries: 10 });
    // Each version read ends when the test says so: here the later request's first.
    const reads: Array<() => void> = [];
    const db = { query: () => new Promise((resolve) => reads.push(() => resolve([{ v: '1' }]))) } as unknown as Queryable;
    const config = {};
    let computed = 0;
    const compute = async () => ++computed;
    // As defineReport looks a request up: the instant of its version, then the cache.
    const request = async (now: Date) => {
      const ctx = oneDataVersion({ db, config, now });
      const at = withNow(ctx, cache.instant(ctx, await dataVersionOf(ctx)));
      return cache.get(at, 'k', compute);
    };
    const first = request(NOW);
    const second = request(new Date(NOW.getTime() + 5));
    for (const end of [...reads].reverse()) end();
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(computed).toBe(1);
  });

  it('serves a result past its lifetime while a new one is computed, within the stale limit', async () => {
    const cache = new ReportCache({ ttlMs: 60_000, staleMs: 300_000, maxEntries: 10 });
    const version = { v: '1' };
    const db = fakeDb(version);
    const config = {};
    const scope = (ms: number) => ({ db, config, now: new Date(NOW.getTime() + ms) });
    let computed = 0;
    let release: () => void = () => undefined;
    const compute = async () => {
      const n = ++computed;
      if (n === 2) await new Promise<void>((resolve) => (release = resolve));
      return n;
    };

    expect(await cache.get(scope(0), 'k', compute)).toBe(1);
    // Past the lifetime, same data: the old result at once, one background recomputation started.
    expect(await cache.get(scope(61_000), 'k', compute)).toBe(1);
    expect(await cache.get(scope(62_000), 'k', compute)).toBe(1);
    expect(computed).toBe(2);
    release();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await cache.get(scope(63_000), 'k', compute)).toBe(2);
    // Beyond the stale limit the request waits for a fresh result.
    expect(await cache.get(scope(63_000 + 300_000), 'k', compute)).toBe(3);
    // New data is never served stale.
    version.v = '2';
    expect(await cache.get(scope(63_000 + 300_000 + 61_000), 'k', compute)).toBe(4);
    // ttlMs 0 turns reuse off altogether (the benchmark's "cache off").
    cache.configure({ ttlMs: 0 });
    expect(await cache.get(scope(63_000 + 300_000 + 61_000), 'k', compute)).toBe(5);
  });

  it('drops an entry whose background recomputation failed, so the next request reports the error', async () => {
    const cache = new ReportCache({ ttlMs: 60_000, staleMs: 300_000, maxEntries: 10 });
    const db = fakeDb({ v: '1' });
    const config = {};
    const scope = (ms: number) => ({ db, config, now: new Date(NOW.getTime() + ms) });
    let fail = false;
    const compute = async () => {
      if (fail) throw new Error('database gone');
      return 'ok';
    };
    expect(await cache.get(scope(0), 'k', compute)).toBe('ok');
    fail = true;
    expect(await cache.get(scope(61_000), 'k', compute)).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 0));
    await expect(cache.get(scope(61_000), 'k', compute)).rejects.toThrow('database gone');
  });

  it('keeps databases and configurations apart, and evicts the oldest entries', async () => {
    const cache = new ReportCache({ ttlMs: 60_000, staleMs: 60_000, maxEntries: 2 });
    const version = { v: '1' };
    const db = fakeDb(version);
    const config = {};
    let computed = 0;
    const compute = async () => ++computed;
    expect(await cache.get({ db, config, now: NOW }, 'k', compute)).toBe(1);
    expect(await cache.get({ db: fakeDb(version), config, now: NOW }, 'k', compute)).toBe(2);
    expect(await cache.get({ db, config: {}, now: NOW }, 'k', compute)).toBe(3);
    await cache.get({ db, config, now: NOW }, 'a', compute);
    await cache.get({ db, config, now: NOW }, 'b', compute);
    expect(await cache.get({ db, config, now: NOW }, 'k', compute)).toBe(6);
  });

  it('keys parameters by value whatever the order of their fields', () => {
    expect(cacheKey(['cost', { by: 'tag:team', kind: 'instance' }])).toBe(cacheKey(['cost', { kind: 'instance', by: 'tag:team' }]));
    expect(cacheKey(['cost', { by: 'tag:team' }])).not.toBe(cacheKey(['cost', { by: 'tag:env' }]));
    expect(cacheKey(['x', { since: new Date('2025-01-01T00:00:00Z') }])).toBe(cacheKey(['x', { since: '2025-01-01T00:00:00.000Z' }]));
  });
});

describe.each(testDatabases())('cached reports on $name', ({ open }) => {
  let db: Database;
  let ctx: Ctx;

  beforeAll(async () => ({ db, ctx } = await openKnownDataset(open)));
  afterAll(async () => {
    await db?.close();
  });

  /** A collection of scope p1-r1 at 17:10 with one more instance (g-a100, 2.50 EUR/h, team "new"). */
  async function collectOneMore(complete: boolean): Promise<number> {
    const [row] = await db.db
      .insert(snapshots)
      .values({ kind: 'instance', scopeKey: SCOPE_A.scopeKey, projectId: SCOPE_A.projectId, regionId: SCOPE_A.regionId, takenAt: new Date('2025-03-10T17:10:00Z'), complete: false })
      .returning({ id: snapshots.id });
    const id = row!.id;
    await bulkInsert(db, instancesKept, [
      { snapshotId: id, instanceId: 'i9', name: 'late-1', status: 'ACTIVE', flavorId: 'f-a100', flavorName: 'g-a100', projectId: 1, regionId: 1, tags: { team: 'new' }, raw: {} },
    ]);
    if (complete) await finalise(id);
    return id;
  }

  async function finalise(id: number): Promise<void> {
    await db.transaction(async (tx) => {
      await computeCostRollups(tx, id);
      await tx.execute('update snapshots set complete = true, row_count = 1 where id = $1', [id]);
    });
  }

  it('serves the same result again while nothing changed, and a new collection at once', async () => {
    const first = await run(costReport, ctx, { by: 'tag:team' });
    expect(await run(costReport, ctx, { by: 'tag:team' })).toBe(first);
    expect(first.rows.map((r) => r.group)).not.toContain('new');

    // Staged but not finished: not part of any report yet, so the cached result still holds.
    const staged = await collectOneMore(false);
    expect(await run(costReport, ctx, { by: 'tag:team' })).toBe(first);

    await finalise(staged);
    const after = await run(costReport, ctx, { by: 'tag:team' });
    expect(after).not.toBe(first);
    // Only i9 is in p1-r1's newest instance snapshot now: EUR instances 2.50 + cluster 5.00 + Kubernetes 1.20.
    expect(after.rows.map((r) => r.group)).toContain('new');
    expect(dec(summaryValue(after, 'Run-rate per hour (EUR)'))).toBe(8.7);
    const overview = await run(overviewReport, ctx);
    expect(dec(summaryValue(overview, 'Run-rate per hour (EUR)'))).toBe(8.7);
  });

  it('caches the inventory until a stop or a scheduled stop changes what it shows', async () => {
    type Inventory = { resource_id: string; project_id: number; region_id: number; running: boolean; status: string; scheduled_stop_at: Date | null };
    const rowOf = async (id: string) => {
      const out = await run(inventoryReport, ctx, { kind: 'instances' });
      return { out, row: (out.rows as Inventory[]).find((r) => r.resource_id === id)! };
    };
    const first = await run(inventoryReport, ctx, { kind: 'instances' });
    expect(await run(inventoryReport, ctx, { kind: 'instances' })).toBe(first);
    const target = (first.rows as Inventory[]).find((r) => r.running)!;
    expect(target.scheduled_stop_at).toBeNull();
    const ref = [target.resource_id, target.project_id, target.region_id];

    // Marked to stop later: the due time shows at once.
    await db.execute(
      `insert into scheduled_stops (instance_id, project_id, region_id, reason, created_by, created_by_role, due_at)
       values ($1, $2, $3, 'expired sandbox', 'olivia', 'operator', '2025-03-11T12:00:00Z')`,
      ref,
    );
    const marked = await rowOf(target.resource_id);
    expect(marked.out).not.toBe(first);
    expect(new Date(marked.row.scheduled_stop_at!).toISOString()).toBe('2025-03-11T12:00:00.000Z');
    expect(await run(inventoryReport, ctx, { kind: 'instances' })).toBe(marked.out);

    // Cancelled: gone again.
    await db.execute(`update scheduled_stops set status = 'cancelled', cancelled_by = 'olivia', cancelled_at = now() where instance_id = $1`, [target.resource_id]);
    expect((await rowOf(target.resource_id)).row.scheduled_stop_at).toBeNull();

    // Stopped through cloudtally after the snapshot: shown stopped at once.
    await db.execute(
      `insert into audit_log (actor, role, action, instance_id, project_id, region_id, reason, result) values ('olivia', 'operator', 'stop', $1, $2, $3, 'idle', 'stopped')`,
      ref,
    );
    const stopped = await rowOf(target.resource_id);
    expect([stopped.row.running, stopped.row.status]).toEqual([false, 'SHUTOFF']);
  });
});

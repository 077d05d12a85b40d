/**
 * Single flight, seen through /metrics of a started service (the demo company and a collection):
 * concurrent requests of one report after new data cost one computation
 * (cloudtally_report_computations_total), other parameters their own; a computation that fails
 * fails every request that shared it and is not kept, so the next request computes again.
 * On Postgres a lock held by the test keeps the computation under way until every request has
 * looked it up (cloudtally_report_cache_lookups_total), so that "at once" is certain, also with
 * the report cache off.
 */
import pg from 'pg';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { RunningService } from '../../src/main.js';
import { DEFAULT_CACHE_OPTIONS } from '../../src/reports/shared/cache.js';
import { reportCache } from '../../src/reports/shared/define.js';
import { metricSamples, SERVICE_DATABASES, startedDemoService } from './helpers.js';

const USERS = 20;

/** The sum of one metric's samples whose labels include `labels`. */
function metricSum(text: string, metric: string, labels: Record<string, string>): number {
  const matching = metricSamples(text, metric).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return matching.reduce((sum, s) => sum + s.value, 0);
}

describe.each(SERVICE_DATABASES)('report computations on $name', ({ name }) => {
  const started = startedDemoService(name);
  let service: RunningService;
  let databaseUrl: string | undefined;
  beforeAll(() => void ({ service, databaseUrl } = started()));

  const scrape = async () => (await fetch(`${service.url}/metrics`)).text();
  const computations = async () => metricSum(await scrape(), 'cloudtally_report_computations_total', { report: 'overview' });
  const lookups = async () => metricSum(await scrape(), 'cloudtally_report_cache_lookups_total', { report: 'overview' });
  const overview = (query: string) => fetch(`${service.url}/api/reports/overview?${query}`);
  const concurrently = (query: string) => Array.from({ length: USERS }, () => overview(query));

  /** A new data version (a collection), after which the landing views the service warms are computed. */
  async function newData(): Promise<void> {
    const run = await service.collection.collectNow('manual');
    expect(run.alreadyRunning).toBe(false);
    await service.collection.idle();
    await service.warmReports();
  }

  /** Until `count` lookups more than `before` were made (every request has joined or started its computation). */
  async function lookedUp(before: number, count: number): Promise<void> {
    while ((await lookups()) < before + count) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  it('computes one report once for concurrent requests after a collection, and other parameters separately', async () => {
    await newData();
    const before = await computations();
    const answers = await Promise.all([...concurrently('days=9'), ...concurrently('days=10')]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
    const bodies = (await Promise.all(answers.map((a) => a.json()))) as Array<{ params: { days: number }; generated_at: string }>;
    // One result per parameters: every answer of it says the same "as of".
    for (const days of [9, 10]) expect(new Set(bodies.filter((b) => b.params.days === days).map((b) => b.generated_at)).size).toBe(1);
    expect((await computations()) - before).toBe(2);
  });

  it('fails every request sharing a failed computation, and computes again for the next request', async () => {
    await newData();
    const before = await computations();
    // The overview reads cost_rollups; the data version does not.
    await service.database.query('ALTER TABLE cost_rollups RENAME TO cost_rollups_away');
    let renamed = true;
    const restore = async () => {
      if (renamed) await service.database.query('ALTER TABLE cost_rollups_away RENAME TO cost_rollups');
      renamed = false;
    };
    onTestFinished(restore);
    const failed = await Promise.all(concurrently('days=11'));
    expect(failed.every((a) => a.status >= 500)).toBe(true);
    const duringFailure = (await computations()) - before;
    expect(duringFailure).toBeGreaterThanOrEqual(1);
    expect(duringFailure).toBeLessThanOrEqual(USERS);
    await restore();
    const next = await overview('days=11');
    expect(next.status).toBe(200);
    expect((await computations()) - before).toBe(duringFailure + 1);
  });

  describe.runIf(name === 'Postgres')('with the computation held by a lock', () => {
    /** A session of the test holding cost_rollups (which the overview reads and the data version does not). */
    async function lockRollups(): Promise<pg.Client> {
      const client = new pg.Client({ connectionString: databaseUrl! });
      await client.connect();
      onTestFinished(() => client.end());
      await client.query('BEGIN');
      await client.query('LOCK TABLE cost_rollups IN ACCESS EXCLUSIVE MODE');
      return client;
    }
    /** The service's queries waiting for the lock (at least one: the computation reached it). */
    async function waiting(client: pg.Client): Promise<number[]> {
      for (;;) {
        const { rows } = await client.query<{ pid: number }>(
          "select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()",
        );
        if (rows.length > 0) return rows.map((r) => r.pid);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }

    it('shares one computation between requests arriving while it is under way, also with the report cache off', async () => {
      reportCache.configure({ ttlMs: 0 });
      onTestFinished(() => reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs }));
      await newData();
      const [before, lookupsBefore] = [await computations(), await lookups()];
      const lock = await lockRollups();
      const answers = Promise.all(concurrently('days=12'));
      await lookedUp(lookupsBefore, USERS);
      await waiting(lock);
      await lock.query('ROLLBACK');
      expect((await answers).map((a) => a.status)).toEqual(Array.from({ length: USERS }, () => 200));
      expect((await computations()) - before).toBe(1);
    });

    it('gives the error of the one failed computation to every request that shared it', async () => {
      await newData();
      const [before, lookupsBefore] = [await computations(), await lookups()];
      const lock = await lockRollups();
      const answers = Promise.all(concurrently('days=13'));
      await lookedUp(lookupsBefore, USERS);
      for (const pid of await waiting(lock)) await lock.query('select pg_cancel_backend($1)', [pid]);
      const failed = await answers;
      await lock.query('ROLLBACK');
      expect(failed.every((a) => a.status >= 500)).toBe(true);
      expect((await computations()) - before).toBe(1);
      expect((await overview('days=13')).status).toBe(200);
      expect((await computations()) - before).toBe(2);
    });
  });
});

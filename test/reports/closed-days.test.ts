/**
 * Closed days: every complete UTC day gets its cost_daily rows (closeCompleteDays) and reports
 * over periods read them instead of integrating the hourly rollups. The figures must not change by
 * a cent, and a snapshot written later that affects a closed day re-opens it until it is closed
 * again with the new figure. Through the real web app over HTTP, on both databases.
 */
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { recomputeRollups } from '../../src/collect/recompute.js';
import { closeCompleteDays } from '../../src/costing/derive/closed-days.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gapCapsFor } from '../../src/costing/gap-caps.js';
import { instances, instancesKept } from '../../src/db/schema.js';
import { DEFAULT_CACHE_OPTIONS } from '../../src/reports/shared/cache.js';
import { reportCache } from '../../src/reports/shared/define.js';
import { addDays } from '../../src/reports/shared/format.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { seedKnownDataset } from './fixture.js';
import { dec, startReportsApp, testConfig, type ReportsApp } from './helpers.js';
import { A, FIRST_DAY, instance, PERIODS_NOW, periodsConfig, run, seedPeriods, snapshot } from './periods-fixture.js';

const daysFrom = (from: string, to: string) => {
  const days: string[] = [];
  for (let d = from; d <= to; d = addDays(d, 1)) days.push(d);
  return days;
};

async function getJson(app: ReportsApp, path: string): Promise<unknown> {
  const res = await request(`${app.base}${path}`);
  const body = await res.body.json();
  expect(res.statusCode, `${path}: ${JSON.stringify(body).slice(0, 300)}`).toBe(200);
  return body;
}

async function getAll(app: ReportsApp, paths: readonly string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const path of paths) out[path] = await getJson(app, path);
  return out;
}

const closedDays = async (db: Database) =>
  (await db.query<{ day: string }>(`select to_char(day, 'YYYY-MM-DD') as day from cost_daily_closed_days order by day`)).map((r) => r.day);

describe.each(testDatabases())('closed days on $name', (database) => {
  describe('periods fixture (daily snapshots, January sealed, 24 h cap)', () => {
    let db: Database;
    let app: ReportsApp;
    const config = periodsConfig();
    const PATHS = [
      '/api/reports/cost?by=tag:team&period=2025-02',
      '/api/reports/cost?by=tag:team&period=2025-Q1',
      '/api/reports/cost?by=project&from=2025-02-05&to=2025-03-09',
      '/api/reports/monthly?by=tag:team&from=2025-01&to=2025-03',
      '/api/reports/monthly?by=kind&period=2025-02',
      '/api/reports/overview?period=2025-02',
      '/api/reports/overview?period=ytd',
      '/api/reports/trend?by=kind&days=30',
      '/api/reports/focus?period=2025-02&limit=10000',
      // The sparkline's and the forecast's days not fully collected (02-10, 02-11 are missing).
      '/api/reports/overview',
      '/api/reports/anomalies',
    ];

    appTest.beforeAll(async ({ reportsApps }) => {
      ({ db, app } = await reportsApps.open(database, { seed: seedPeriods, config, now: PERIODS_NOW }));
    }, 120_000);

    const close = () => closeCompleteDays(db, { now: PERIODS_NOW, maxGapHours: gapCapsFor(config) });
    const mlFebruary = async () => {
      const body = (await getJson(app, '/api/reports/cost?by=tag:team&period=2025-02')) as { rows: Array<Record<string, unknown>> };
      return dec(body.rows.find((r) => r.group === 'ml' && r.currency === 'EUR')?.cost);
    };

    it('closes every complete day that is not sealed, and the reports answer exactly the same JSON', async () => {
      const live = await getAll(app, PATHS);
      // NOW = 03-10 12:00: 03-09 is the last day that has ended (the 24 h cap of its last rate
      // reaches into today, but today's part is not its); January is sealed.
      expect(await close()).toEqual(daysFrom('2025-02-01', '2025-03-09'));
      expect(await closedDays(db)).toEqual(daysFrom('2025-02-01', '2025-03-09'));
      expect(await getAll(app, PATHS)).toEqual(live);
      expect(await close()).toEqual([]);
    });

    it('reads the closed days from cost_daily', async () => {
      expect(await mlFebruary()).toBe(1560);
      await db.execute(`update cost_daily set price_seconds = price_seconds + 1000 * 3600 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      // As a new closing would: the report cache follows closed_at.
      await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second' where day = '2025-02-03'`);
      try {
        expect(await mlFebruary()).toBe(2560);
      } finally {
        await db.execute(`update cost_daily set price_seconds = price_seconds - 1000 * 3600 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      }
    });

    it('stores each closed day\'s coverage, and reads it from there', async () => {
      const stored = await db.query<{ day: string; covered_secs: number | null }>(
        `select to_char(day, 'YYYY-MM-DD') as day, covered_secs::float8 as covered_secs from cost_daily_closed_days order by day`,
      );
      // One daily snapshot per day and a 24 h cap: every closed day is covered whole but the two
      // missing ones (02-09's rate ends at 02-10 00:00, and the next snapshot is 02-12's).
      expect(stored.filter((r) => r.covered_secs !== 86_400).map((r) => [r.day, r.covered_secs])).toEqual([
        ['2025-02-10', 0],
        ['2025-02-11', 0],
      ]);
      const coverage = async () => {
        const body = (await getJson(app, '/api/reports/overview?period=2025-02')) as { coverage: { covered_hours: number } };
        return body.coverage.covered_hours;
      };
      const gapNote = async () => {
        const body = (await getJson(app, '/api/reports/overview')) as { notes: string[] };
        return body.notes.find((n) => n.includes('complete days:')) ?? null;
      };
      const before = await coverage();
      expect(await gapNote()).toBeNull();
      // What closing stored, made smaller: the reports follow it (closed_at bumped, as a new closing would).
      await db.execute(`update cost_daily_closed_days set covered_secs = covered_secs - 3600, closed_at = closed_at + interval '1 second' where day = '2025-02-03'`);
      await db.execute(`update cost_daily_coverage set covered_secs = covered_secs - 7200 where day = '2025-03-05' and scope_key = '${A.scopeKey}'`);
      await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second' where day = '2025-03-05'`);
      try {
        expect(await coverage()).toBe(before - 1);
        expect(await gapNote()).toContain('2025-03-05 was not fully collected');
      } finally {
        await db.execute(`update cost_daily_closed_days set covered_secs = covered_secs + 3600 where day = '2025-02-03'`);
        await db.execute(`update cost_daily_coverage set covered_secs = covered_secs + 7200 where day = '2025-03-05' and scope_key = '${A.scopeKey}'`);
        await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second' where day in ('2025-02-03', '2025-03-05')`);
      }
      expect(await coverage()).toBe(before);
    });

    it('stores the coverage of days closed before it was stored, and the reports answer the same', async () => {
      // Figures of the data as it is (a test above changed cost_daily and put it back without a new closing).
      await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second'`);
      const before = await getAll(app, PATHS);
      await db.execute('delete from cost_daily_coverage');
      await db.execute(`update cost_daily_closed_days set covered_secs = null, closed_at = closed_at + interval '1 second'`);
      // Read live meanwhile.
      expect(await getAll(app, PATHS)).toEqual(before);
      expect(await close()).toEqual([]);
      const missing = await db.query(`select day from cost_daily_closed_days where covered_secs is null`);
      expect(missing).toEqual([]);
      expect((await db.query<{ n: number }>(`select count(distinct day)::int as n from cost_daily_coverage`))[0]!.n).toBe((await closedDays(db)).length - 2);
      await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second'`);
      expect(await getAll(app, PATHS)).toEqual(before);
    });

    it('re-opens the days a backdated snapshot affects, and closes them again with the new figure', async () => {
      // i1 (ml, 2.50/h) stopped at 02-15 12:00 until the next daily snapshot (02-16 00:00): 12 h x 2.50 = 30 less.
      const at = new Date('2025-02-15T12:00:00Z');
      const id = await snapshot(db, await run(db, at), 'instance', A, at);
      await bulkInsert(db, instancesKept, [{ snapshotId: id, ...instance(A, 'i1', 'g-a100', 'ml', false) }, { snapshotId: id, ...instance(A, 'i2', 'g-h100', 'web', true) }]);
      await computeCostRollups(db, id);
      // Its rate holds from 02-15 12:00 for at most 24 h: 02-15 and 02-16 are re-opened.
      expect(await closedDays(db)).toEqual(daysFrom('2025-02-01', '2025-03-09').filter((d) => d !== '2025-02-15' && d !== '2025-02-16'));
      expect(await mlFebruary()).toBe(1530);
      const reopened = await getAll(app, PATHS);
      expect(await close()).toEqual(['2025-02-15', '2025-02-16']);
      expect(await mlFebruary()).toBe(1530);
      expect(await getAll(app, PATHS)).toEqual(reopened);
    });

    it('does not use days closed under other gap caps', async () => {
      const before = await getAll(app, PATHS);
      await closeCompleteDays(db, { now: PERIODS_NOW, maxGapHours: 1 });
      // Closed under a 1 h cap: the reports (24 h cap) integrate them live until closed under theirs.
      expect(await getAll(app, PATHS)).toEqual(before);
      expect(await close()).toEqual(daysFrom('2025-02-01', '2025-03-09'));
      expect(await getAll(app, PATHS)).toEqual(before);
    });
  });

  describe('daily totals (cost_daily_totals): stored days summed over scopes', () => {
    let db: Database;
    let app: ReportsApp;
    const config = periodsConfig();
    const PATHS = [
      '/api/reports/cost?by=tag:team&period=2025-01',
      '/api/reports/cost?by=tag:team&period=2025-Q1',
      '/api/reports/cost?by=tag:team&period=2025-Q1&project=2',
      '/api/reports/cost?by=tag:team&period=2025-Q1&kind=instance',
      '/api/reports/cost?by=tag:env&period=2025-Q1',
      '/api/reports/cost?by=state&from=2025-01-20&to=2025-03-09',
      '/api/reports/cost?by=region&period=2025-Q1&region=1',
      '/api/reports/monthly?by=tag:team&from=2025-01&to=2025-03',
      '/api/reports/monthly?by=flavor&period=2025-02',
      '/api/reports/overview?period=ytd',
      '/api/reports/trend?by=tag:team&days=60',
    ];

    // Every request computes afresh: these tests change what a report reads without a new snapshot.
    appTest.beforeAll(async ({ reportsApps }) => {
      reportCache.configure({ ttlMs: 0 });
      ({ db, app } = await reportsApps.open(database, { seed: seedPeriods, config, now: PERIODS_NOW }));
    }, 120_000);
    afterAll(() => {
      reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs });
    });

    const close = () => closeCompleteDays(db, { now: PERIODS_NOW, maxGapHours: gapCapsFor(config) });
    const summedDays = async () =>
      (await db.query<{ day: string }>(`select to_char(day, 'YYYY-MM-DD') as day from cost_daily_totals_days order by day`)).map((r) => r.day);
    const totalsOf = async (day: string, dimension: string) =>
      (
        await db.query<{ group_value: string; currency: string | null; cost: string }>(
          `select group_value, currency, trim_scale(price_seconds / 3600)::text as cost from cost_daily_totals where day = $1 and dimension = $2 order by group_value, currency`,
          [day, dimension],
        )
      ).map((r) => [r.group_value, r.currency, Number(r.cost)]);
    const teamCost = async (query: string, team: string, currency: string) => {
      const body = (await getJson(app, `/api/reports/cost?by=tag:team&${query}`)) as { rows: Array<Record<string, unknown>> };
      return dec(body.rows.find((r) => r.group === team && r.currency === currency)?.cost);
    };
    /** The reports as read from cost_daily alone (no day's totals usable), then the totals written again. */
    const fromCostDailyRows = async () => {
      await db.execute('delete from cost_daily_totals_days');
      const json = await getAll(app, PATHS);
      await close();
      return json;
    };

    it('sums every sealed and closed day once, and the reports answer exactly what the cost_daily rows give', async () => {
      const live = await getAll(app, PATHS);
      await close();
      // January 16..31 is sealed, 02-01 .. 03-09 closed; 02-10 and 02-11 have no snapshot but are closed (no rows).
      expect(await summedDays()).toEqual([...daysFrom(FIRST_DAY, '2025-01-31'), ...daysFrom('2025-02-01', '2025-03-09')]);
      // 02-03: i1 ml 24 h x 2.50, i2 web 24 h x 4.00 (EUR), j1 web 24 h x 3.00 (USD), both scopes in one row per group.
      expect(await totalsOf('2025-02-03', 'tag:team')).toEqual([['ml', 'EUR', 60], ['web', 'EUR', 96], ['web', 'USD', 72]]);
      expect(await totalsOf('2025-02-03', 'kind')).toEqual([['instance', 'EUR', 156], ['instance', 'USD', 72]]);
      expect(await totalsOf('2025-02-03', 'project')).toEqual([['1', 'EUR', 156], ['2', 'USD', 72]]);
      expect(await getAll(app, PATHS)).toEqual(live);
      expect(await fromCostDailyRows()).toEqual(live);
      // A tag key nobody carries: everything is (untagged), read from the `kind` totals.
      expect(await teamCost('period=2025-01', 'ml', 'EUR')).toBe(960);
      const env = (await getJson(app, '/api/reports/cost?by=tag:env&period=2025-01')) as { rows: Array<Record<string, unknown>> };
      expect(env.rows.map((r) => [r.group, r.currency, dec(r.cost)])).toEqual([['(untagged)', 'EUR', 960], ['(untagged)', 'USD', 1152]]);
    });

    it('reads the totals, except for a project or region filter (the scopes are in cost_daily only)', async () => {
      await db.execute(`update cost_daily_totals set price_seconds = price_seconds + 1000 * 3600 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      try {
        expect(await teamCost('period=2025-02', 'ml', 'EUR')).toBe(2560);
        expect(await teamCost('period=2025-02&kind=instance', 'ml', 'EUR')).toBe(2560);
        expect(await teamCost('period=2025-02&project=1', 'ml', 'EUR')).toBe(1560);
        expect(await teamCost('period=2025-02&region=1', 'ml', 'EUR')).toBe(1560);
      } finally {
        await db.execute(`update cost_daily_totals set price_seconds = price_seconds - 1000 * 3600 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      }
    });

    it('uses a day\'s totals only while they were summed from its current closing, and sums it again at the next', async () => {
      await db.execute(`update cost_daily_totals set price_seconds = price_seconds + 1000 * 3600 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      // A new closing of the day (its cost_daily rows written again) that the totals have not followed yet.
      await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second' where day = '2025-02-03'`);
      expect(await teamCost('period=2025-02', 'ml', 'EUR')).toBe(1560);
      expect(await close()).toEqual([]);
      expect(await totalsOf('2025-02-03', 'tag:team')).toEqual([['ml', 'EUR', 60], ['web', 'EUR', 96], ['web', 'USD', 72]]);
      expect(await teamCost('period=2025-02', 'ml', 'EUR')).toBe(1560);
    });

    it('ignores the totals of re-opened days, and sums them again when they are closed', async () => {
      const at = new Date('2025-02-15T12:00:00Z');
      const id = await snapshot(db, await run(db, at), 'instance', A, at);
      await bulkInsert(db, instancesKept, [{ snapshotId: id, ...instance(A, 'i1', 'g-a100', 'ml', false) }, { snapshotId: id, ...instance(A, 'i2', 'g-h100', 'web', true) }]);
      await computeCostRollups(db, id);
      // The totals of 02-15 still say ml 60; the day is integrated live: i1 ran 12 h of it (30 less in February).
      expect(await totalsOf('2025-02-15', 'tag:team')).toEqual([['ml', 'EUR', 60], ['web', 'EUR', 96], ['web', 'USD', 72]]);
      expect(await teamCost('period=2025-02', 'ml', 'EUR')).toBe(1530);
      const reopened = await getAll(app, PATHS);
      expect(await close()).toEqual(['2025-02-15', '2025-02-16']);
      expect(await totalsOf('2025-02-15', 'tag:team')).toEqual([['ml', 'EUR', 30], ['web', 'EUR', 96], ['web', 'USD', 72]]);
      expect(await totalsOf('2025-02-16', 'tag:team')).toEqual([['ml', 'EUR', 60], ['web', 'EUR', 96], ['web', 'USD', 72]]);
      expect(await teamCost('period=2025-02', 'ml', 'EUR')).toBe(1530);
      expect(await getAll(app, PATHS)).toEqual(reopened);
      expect(await fromCostDailyRows()).toEqual(reopened);
    });

    it('follows recompute-rollups merging tag values of sealed days', async () => {
      await close();
      // Every team value "web" becomes "ml". The fixture keeps no tags as received, so unsealed
      // days lose their tags: only sealed January, whose daily rows are merged, is compared.
      await recomputeRollups(db, { tagAliases: {}, tagKeyCase: 'lower', tagValueCase: 'lower', tagValueAliases: { team: { web: 'ml' } } });
      // January: ml 16 x 60 EUR, web 16 x 72 USD -> all ml.
      expect(await totalsOf('2025-01-20', 'tag:team')).toEqual([['ml', 'EUR', 60], ['ml', 'USD', 72]]);
      const january = (await getJson(app, '/api/reports/cost?by=tag:team&period=2025-01')) as { rows: Array<Record<string, unknown>> };
      // (The current run-rate's groups are listed too: (untagged), with no spend in January.)
      expect(january.rows.filter((r) => dec(r.cost) !== 0).map((r) => [r.group, r.currency, dec(r.cost)])).toEqual([['ml', 'EUR', 960], ['ml', 'USD', 1152]]);
      const sealedOnly = PATHS.filter((p) => p.includes('period=2025-01'));
      const before = await getAll(app, sealedOnly);
      await db.execute('delete from cost_daily_totals_days');
      expect(await getAll(app, sealedOnly)).toEqual(before);
    });
  });

  describe('reports fixture (hourly snapshots, gaps, clusters, Kubernetes, untagged resources)', () => {
    const config = testConfig();
    const PATHS = ['tag:team', 'tag:env', 'kind', 'flavor', 'state', 'project']
      .flatMap((by) => [`/api/reports/cost?by=${by}&from=2025-03-09&to=2025-03-12`, `/api/reports/monthly?by=${by}&period=2025-03`])
      .concat(['/api/reports/overview?period=mtd', '/api/reports/trend?by=tag:team&days=7', '/api/reports/focus?period=2025-03&limit=10000']);

    it.each([
      // Two days after the fixture's snapshots: every rate has ended.
      { now: '2025-03-12T06:00:00Z', closed: ['2025-03-09', '2025-03-10', '2025-03-11'] },
      // Just after midnight: 03-10 has ended, but its last Kubernetes rate (17:00, 12 h cap) still
      // runs until now; its part after midnight is 03-11's, so 03-10 is complete.
      { now: '2025-03-11T00:30:00Z', closed: ['2025-03-09', '2025-03-10'] },
    ])('gives the same JSON for every report and grouping before and after closing at $now', async ({ now, closed }) => {
      const db = await database.open();
      const at = new Date(now);
      const app = await startReportsApp(() => ({ db, config, now: at }));
      try {
        await seedKnownDataset(db);
        const live = await getAll(app, PATHS);
        expect(await closeCompleteDays(db, { now: at, maxGapHours: gapCapsFor(config) })).toEqual(closed);
        expect(await getAll(app, PATHS)).toEqual(live);
      } finally {
        await app.close();
        await db.close();
      }
    }, 120_000);
  });
});

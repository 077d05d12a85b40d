/**
 * Closed days: every complete UTC day gets its cost_daily rows (closeCompleteDays) and reports
 * over periods read them instead of integrating the hourly rollups. The figures must not change by
 * a cent, and a snapshot written later that affects a closed day re-opens it until it is closed
 * again with the new figure. Through the real web app over HTTP, on both databases.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { closeCompleteDays, computeCostRollups, gapCapsFor } from '../../src/db/cost-model.js';
import { instances } from '../../src/db/schema.js';
import { addDays } from '../../src/reports/shared/format.js';
import { testDatabases } from '../helpers/databases.js';
import { seedKnownDataset } from './fixture.js';
import { dec, startReportsApp, testConfig, type ReportsApp } from './helpers.js';
import { A, instance, PERIODS_NOW, periodsConfig, run, seedPeriods, snapshot } from './periods-fixture.js';

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

describe.each(testDatabases())('closed days on $name', ({ open }) => {
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
    ];

    beforeAll(async () => {
      db = await open();
      await seedPeriods(db);
      app = await startReportsApp(() => ({ db, config, now: PERIODS_NOW }));
    }, 120_000);
    afterAll(async () => {
      await app?.close();
      await db?.close();
    });

    const close = () => closeCompleteDays(db, { now: PERIODS_NOW, maxGapHours: gapCapsFor(config) });
    const mlFebruary = async () => {
      const body = (await getJson(app, '/api/reports/cost?by=tag:team&period=2025-02')) as { rows: Array<Record<string, unknown>> };
      return dec(body.rows.find((r) => r.group === 'ml' && r.currency === 'EUR')?.cost);
    };

    it('closes every complete day that is not sealed, and the reports answer exactly the same JSON', async () => {
      const live = await getAll(app, PATHS);
      // NOW = 03-10 12:00 with a 24 h cap: 03-08 is the last day whose end + cap has passed; January is sealed.
      expect(await close()).toEqual(daysFrom('2025-02-01', '2025-03-08'));
      expect(await closedDays(db)).toEqual(daysFrom('2025-02-01', '2025-03-08'));
      expect(await getAll(app, PATHS)).toEqual(live);
      expect(await close()).toEqual([]);
    });

    it('reads the closed days from cost_daily', async () => {
      expect(await mlFebruary()).toBe(1560);
      await db.execute(`update cost_daily set cost = cost + 1000 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      // As a new closing would: the report cache follows closed_at.
      await db.execute(`update cost_daily_closed_days set closed_at = closed_at + interval '1 second' where day = '2025-02-03'`);
      try {
        expect(await mlFebruary()).toBe(2560);
      } finally {
        await db.execute(`update cost_daily set cost = cost - 1000 where day = '2025-02-03' and dimension = 'tag:team' and group_value = 'ml'`);
      }
    });

    it('re-opens the days a backdated snapshot affects, and closes them again with the new figure', async () => {
      // i1 (ml, 2.50/h) stopped at 02-15 12:00 until the next daily snapshot (02-16 00:00): 12 h x 2.50 = 30 less.
      const at = new Date('2025-02-15T12:00:00Z');
      const id = await snapshot(db, await run(db, at), 'instance', A, at);
      await bulkInsert(db, instances, [{ snapshotId: id, ...instance(A, 'i1', 'g-a100', 'ml', false) }, { snapshotId: id, ...instance(A, 'i2', 'g-h100', 'web', true) }]);
      await computeCostRollups(db, id);
      // Its rate holds from 02-15 12:00 for at most 24 h: 02-15 and 02-16 are re-opened.
      expect(await closedDays(db)).toEqual(daysFrom('2025-02-01', '2025-03-08').filter((d) => d !== '2025-02-15' && d !== '2025-02-16'));
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
      expect(await close()).toEqual(daysFrom('2025-02-01', '2025-03-08'));
      expect(await getAll(app, PATHS)).toEqual(before);
    });
  });

  describe('reports fixture (hourly snapshots, gaps, clusters, Kubernetes, untagged resources)', () => {
    let db: Database;
    let app: ReportsApp;
    const config = testConfig();
    // Two days after the fixture's snapshots: 03-09 and 03-10 are complete (their end + the 12 h cap has passed).
    const now = new Date('2025-03-12T06:00:00Z');
    const PATHS = ['tag:team', 'tag:env', 'kind', 'flavor', 'state', 'project']
      .flatMap((by) => [`/api/reports/cost?by=${by}&from=2025-03-09&to=2025-03-12`, `/api/reports/monthly?by=${by}&period=2025-03`])
      .concat(['/api/reports/overview?period=mtd', '/api/reports/trend?by=tag:team&days=7', '/api/reports/focus?period=2025-03&limit=10000']);

    beforeAll(async () => {
      db = await open();
      await seedKnownDataset(db);
      app = await startReportsApp(() => ({ db, config, now }));
    }, 120_000);
    afterAll(async () => {
      await app?.close();
      await db?.close();
    });

    it('gives the same JSON for every report and grouping before and after closing', async () => {
      const live = await getAll(app, PATHS);
      expect(await closeCompleteDays(db, { now, maxGapHours: gapCapsFor(config) })).toEqual(['2025-03-09', '2025-03-10']);
      expect(await getAll(app, PATHS)).toEqual(live);
    });
  });
});

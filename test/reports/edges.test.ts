/**
 * Figures at the edges of what is known, through the real web app (JSON, HTML, CSV parsed as a
 * spreadsheet reads it): a comparison against a mostly empty previous period, a period before
 * collection began, months partly or not at all covered, and the anomalies' baseline. The history
 * is periods-fixture.ts (collection began 2025-01-16; January sealed; 02-10 and 02-11 not covered):
 *   ml  EUR i1 60/day every covered day; web EUR i2 96/day in February only; web USD j1 72/day
 *   (stopped 02-20 .. 02-28 and 03-05). NOW = 2025-03-10 12:00.
 */
import { describe, expect, it } from 'vitest';
import type { Coverage, Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { parseCsv } from '../web/fixtures.js';
import { dec, okJson, okText, pick, type ReportsApp } from './helpers.js';
import { loadConfig } from '../../src/config/index.js';
import { A, B, instance, PERIODS_NOW, run, seedPeriodFlavors, seedPeriods, snapshot } from './periods-fixture.js';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { instancesKept } from '../../src/db/schema.js';

/** The fixture's 24 h cap, and a budget in EUR. */
const config = loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 24, budgets: [{ name: 'All EUR', currency: 'EUR', amount_per_month: '1000' }] }) });

interface Body {
  rows: Row[];
  totals: Row[];
  columns: Array<{ key: string; label: string }>;
  summary: Array<{ label: string; value: unknown }>;
  notes: string[];
  coverage?: Coverage;
  previous_coverage?: Coverage;
  column_coverage?: Record<string, Coverage>;
}

/** Only the first collection: the flavor lists and one instance snapshot per scope, at 2025-03-01 00:00. */
async function seedFirstCollection(db: Database): Promise<void> {
  const at = new Date('2025-03-01T00:00:00Z');
  await seedPeriodFlavors(db, at);
  const runId = await run(db, at);
  const a = await snapshot(db, runId, 'instance', A, at);
  await bulkInsert(db, instancesKept, [{ snapshotId: a, ...instance(A, 'i1', 'g-a100', 'ml', true) }]);
  const b = await snapshot(db, runId, 'instance', B, at);
  await bulkInsert(db, instancesKept, [{ snapshotId: b, ...instance(B, 'j1', 'g-a100', 'web', true) }]);
  for (const id of [a, b]) await computeCostRollups(db, id);
}

describe.each(testDatabases())('numbers at the edges of what is known on $name', (database) => {
  let app: ReportsApp;
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedPeriods, config, now: PERIODS_NOW }));
  }, 120_000);

  const text = (path: string) => okText(app, path);
  const json = async (path: string) => JSON.parse(await text(path)) as Body;
  const csv = async (path: string) => parseCsv(await text(path));
  /** A spreadsheet's SUM: numbers add, empty cells are skipped. */
  const sum = (cells: string[]) => cells.filter((c) => c !== '').reduce((a, c) => a + Number(c), 0);

  describe('a comparison against a mostly empty previous period', () => {
    // 01-17 .. 01-21 (sealed, 120 of 120 h) against 01-12 .. 01-16: collection began 01-16, so 24 of 120 h.
    const query = 'by=tag%3Ateam&from=2025-01-17&to=2025-01-21';

    it('gives both periods\' spend and coverage in JSON, but no change %', async () => {
      const body = await json(`/api/reports/cost?${query}`);
      expect(body.coverage).toMatchObject({ covered_hours: 120, period_hours: 120 });
      expect(body.previous_coverage).toEqual({
        from: '2025-01-12T00:00:00.000Z', to: '2025-01-17T00:00:00.000Z', covered_hours: 24, period_hours: 120, first_snapshot_at: '2025-01-16T00:00:00.000Z',
      });
      // ml 5 x 60 against 1 x 60 (it used to say +400 %), web USD 5 x 72 against 72.
      expect(pick(body.rows, ['group', 'currency', 'cost', 'previous_cost', 'change_percent'], ['cost', 'previous_cost'])).toEqual([
        ['ml', 'EUR', 300, 60, null],
        ['web', 'USD', 360, 72, null],
      ]);
      expect(body.totals.map((t) => t.change_percent)).toEqual([null, null]);
      expect(body.notes).toContain(
        'No change % is given: the previous period (2025-01-12 to 2025-01-16) covered 24 of 120 h, this one covered 120 of 120 h; a change would measure the missing snapshots, not spend.',
      );
    });

    it('says so in the page and in the CSV, whose change cells stay empty', async () => {
      const html = await text(`/reports/cost?${query}`);
      expect(html).toContain('the previous period (2025-01-12 to 2025-01-16) covered 24 of 120 h, this one covered 120 of 120 h');
      expect(html).toContain('Change % (not given: previous period covered 24 of 120 h)');
      const records = await csv(`/api/reports/cost.csv?${query}`);
      expect(records[0]!.slice(2, 5)).toEqual(['Spend 2025-01-17 to 2025-01-21', 'Spend 2025-01-12 to 2025-01-16 (covered 24 of 120 h)', 'Change % (not given: previous period covered 24 of 120 h)']);
      expect(records.slice(1).map((r) => r.slice(0, 5))).toEqual([
        ['ml', 'EUR', '300.00', '60.00', ''],
        ['web', 'USD', '360.00', '72.00', ''],
        ['Total', 'EUR', '300.00', '60.00', ''],
        ['Total', 'USD', '360.00', '72.00', ''],
      ]);
    });
  });

  describe('a period before collection began', () => {
    it('gives spend null, not 0, in the cost report: JSON, CSV and HTML', async () => {
      const body = await json('/api/reports/cost?by=tag%3Ateam&period=2024-12');
      expect(body.coverage).toMatchObject({ covered_hours: 0, period_hours: 744 });
      // The groups running now are listed with their run-rate; their spend in December is unknown.
      expect(body.rows.map((r) => [r.group, r.currency, r.cost, r.previous_cost, r.change_percent, dec(r.price_per_hour)])).toEqual([
        ['ml', 'EUR', null, null, null, 2.5],
        ['web', 'USD', null, null, null, 3],
      ]);
      expect(body.totals.map((t) => t.cost)).toEqual([null, null]);
      expect(body.summary.filter((s) => s.label.startsWith('Spend')).map((s) => s.value)).toEqual([null, null]);
      const records = await csv('/api/reports/cost.csv?by=tag%3Ateam&period=2024-12');
      expect(records[0]![2]).toBe('Spend 2024-12 (no data)');
      expect(records.slice(1).map((r) => r[2])).toEqual(['', '', '', '']);
      const html = await text('/reports/cost?by=tag%3Ateam&period=2024-12');
      expect(html).not.toMatch(/>0\.00</);
      expect(html.match(/>no data</g)?.length).toBeGreaterThanOrEqual(6); // 2 rows and 2 totals x 2 periods, the 2 cards
    });

    it('gives spend null in the overview', async () => {
      const body = await json('/api/reports/overview?period=2024-12');
      expect(body.summary.find((s) => s.label === 'Spend 2024-12 (EUR)')!.value).toBeNull();
      expect(body.rows.map((r) => [r.group, r.cost])).toEqual([
        ['ml', null],
        ['web', null],
      ]);
      const html = await text('/reports/overview?period=2024-12');
      expect(html).toMatch(/Spend 2024-12 \(EUR\)[\s\S]{0,200}no data/);
      const records = await csv('/api/reports/overview.csv?period=2024-12');
      expect(records[0]).toContain('Spend 2024-12 (no data)');
      const cost = records[0]!.indexOf('Spend 2024-12 (no data)');
      expect(records.slice(1).map((r) => r[cost])).toEqual(['', '', '', '']);
    });
  });

  describe('a month with no covered hour yet (collection stopped, or a backfill still on earlier days)', () => {
    let later: ReportsApp;
    appTest.beforeAll(async ({ reportsApps }) => {
      // The fixture's last snapshots are of 2025-03-10; by May nothing covers an hour of the month.
      ({ app: later } = await reportsApps.open(database, { seed: seedPeriods, config, now: new Date('2025-05-10T12:00:00Z') }));
    }, 120_000);

    it('gives month to date and both projections null ("no data") in the overview, never 0', async () => {
      const body = await okJson<Body>(later, '/api/reports/overview');
      expect(body.coverage?.covered_hours).toBe(0);
      for (const label of ['Month to date 2025-05 (EUR)', 'Projected 2025-05, run-rate method (EUR)', 'Projected 2025-05, daily history (EUR)']) {
        expect(body.summary.find((s) => s.label === label), label).toMatchObject({ value: null });
      }
      const html = await okText(later, '/reports/overview');
      expect(html).toMatch(/Month to date 2025-05 \(EUR\)[\s\S]{0,200}no data/);
    });
  });

  describe('a month seconds after its first snapshot (right after the first collection)', () => {
    let early: ReportsApp;
    appTest.beforeAll(async ({ reportsApps }) => {
      // The first collection, at 2025-03-01 00:00, covers the month's first 10 s: i1 at 2.50 EUR/h, j1 at 3.00 USD/h.
      ({ app: early } = await reportsApps.open(database, { seed: seedFirstCollection, config, now: new Date('2025-03-01T00:00:10Z') }));
    }, 120_000);

    it('gives the spend of those seconds, never "no data", and says they are covered', async () => {
      const body = await okJson<Body>(early, '/api/reports/overview');
      // 10 s rounds to 0.00 h: the coverage says the least covered amount it can show, not none.
      expect(body.coverage).toMatchObject({ covered_hours: 0.01, period_hours: 0.01 });
      expect(dec(body.summary.find((s) => s.label === 'Month to date 2025-03 (EUR)')!.value)).toBe(dec((2.5 * 10) / 3600));
      expect(dec(body.summary.find((s) => s.label === 'Month to date 2025-03 (USD)')!.value)).toBe(dec((3 * 10) / 3600));
      const html = await okText(early, '/reports/overview');
      expect(html).not.toMatch(/Month to date 2025-03 \(EUR\)[\s\S]{0,200}no data/);
    });
  });

  describe('charts', () => {
    it('draw the uncovered days as gaps, never as 0', async () => {
      const body = (await json('/api/reports/overview?period=2025-02')) as Body & { charts: Array<{ id: string; labels: string[]; datasets: Array<{ data: Array<number | null> }> }> };
      const eur = body.charts.find((c) => c.id === 'cost-per-day-EUR')!;
      // The groups are stacked: a day's cost is their sum, unknown when every one is.
      const at = (day: string) => {
        const values = eur.datasets.map((d) => d.data[eur.labels.indexOf(day)]);
        return values.every((v) => v === null) ? null : values.reduce<number>((n, v) => n + (v ?? 0), 0);
      };
      expect([at('2025-02-09'), at('2025-02-10'), at('2025-02-11'), at('2025-02-12')]).toEqual([156, null, null, 156]); // 60 + 96
    });
  });

  describe('a budget month before collection began', () => {
    it('has no spend and no status, rather than 0 and "on track"', async () => {
      const body = await json('/api/reports/budgets?period=2024-12');
      expect(body.rows.map((r) => [r.budget, r.spend, r.percent_used, r.status])).toEqual([['All EUR', null, null, 'no data']]);
      expect(body.summary.find((s) => s.label === 'On track')!.value).toBe(0);
      const records = await csv('/api/reports/budgets.csv?period=2024-12');
      const spend = records[0]!.indexOf('Spend to date');
      expect(records[1]![spend]).toBe('');
      // February (624 of 672 h covered) keeps its figures: ml 1560 + web 2496 = 4056 EUR.
      const feb = await json('/api/reports/budgets?period=2025-02');
      expect(feb.rows.map((r) => [dec(r.spend), r.status])).toEqual([[4056, 'over']]);
    });
  });

  describe('months partly and not at all covered', () => {
    const query = 'by=tag%3Ateam&from=2024-12&to=2025-02';

    it('gives null for a month without data, keeps the figure and coverage of a partly covered one', async () => {
      const body = await json(`/api/reports/monthly?${query}`);
      expect(body.rows.map((r) => [r.group, r.currency, r['2024-12'], dec(r['2025-01']), dec(r['2025-02']), dec(r.total)])).toEqual([
        ['ml', 'EUR', null, 960, 1560, 2520],
        ['web', 'EUR', null, 0, 2496, 2496], // January is covered: web spent 0 there, a real 0
        ['web', 'USD', null, 1152, 1224, 2376],
      ]);
      expect(body.totals.map((t) => [t.currency, t['2024-12'], dec(t['2025-01']), dec(t.total)])).toEqual([
        ['EUR', null, 960, 5016],
        ['USD', null, 1152, 2376],
      ]);
      expect(body.column_coverage!['2024-12']).toMatchObject({ covered_hours: 0, period_hours: 744 });
      expect(body.column_coverage!['2025-01']).toMatchObject({ covered_hours: 384, period_hours: 744 });
      expect(body.column_coverage!['2025-02']).toMatchObject({ covered_hours: 624, period_hours: 672 });
      expect(body.notes).toContain(
        '2024-12 has no data (no snapshot covers it): empty, not 0; 2025-01 covered 384 of 744 h; 2025-02 covered 624 of 672 h. Totals are of the covered hours only: spend in the hours no snapshot covers is unknown.',
      );
    });

    it('writes empty cells and says what each month stands on in the CSV, whose totals foot', async () => {
      const records = await csv(`/api/reports/monthly.csv?${query}`);
      expect(records[0]!.slice(0, 6)).toEqual(['tag team', 'Currency', '2024-12 (no data)', '2025-01 (covered 384 of 744 h)', '2025-02 (covered 624 of 672 h)', 'Total (covered hours only)']);
      const rows = records.slice(1).map((r) => r.slice(0, 6));
      expect(rows).toEqual([
        ['ml', 'EUR', '', '960.00', '1560.00', '2520.00'],
        ['web', 'EUR', '', '0.00', '2496.00', '2496.00'],
        ['web', 'USD', '', '1152.00', '1224.00', '2376.00'],
        ['Total', 'EUR', '', '960.00', '4056.00', '5016.00'],
        ['Total', 'USD', '', '1152.00', '1224.00', '2376.00'],
      ]);
      for (const row of rows) expect(sum(row.slice(2, 5))).toBeCloseTo(Number(row[5]), 6);
    });

    it('shows "no data" in the page, never 0.00 for the unknown month', async () => {
      const html = await text(`/reports/monthly?${query}`);
      const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)![1]!;
      const rows = [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) =>
        [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1]!.replace(/<[^>]+>/g, '').trim()).slice(0, 5),
      );
      expect(rows.slice(0, 2)).toEqual([
        ['ml', 'EUR', 'no data', '960.00', '1,560.00'],
        ['web', 'EUR', 'no data', '0.00', '2,496.00'],
      ]);
      expect(html).toContain('2024-12 has no data (no snapshot covers it)');
    });
  });

  describe('anomalies', () => {
    it('says what the first day\'s baseline stands on', async () => {
      // Baseline of 01-20: the 14 days 01-06 .. 01-19, of which 01-16 .. 01-19 are covered: 96 of 336 h.
      const body = await json('/api/reports/anomalies?by=tag%3Ateam&from=2025-01-20&to=2025-01-31');
      expect(body.previous_coverage).toMatchObject({ from: '2025-01-06T00:00:00.000Z', to: '2025-01-20T00:00:00.000Z', covered_hours: 96, period_hours: 336 });
      expect(body.notes[0]).toBe('The baseline days before the period (2025-01-06 to 2025-01-19) covered 96 of 336 h; only the days snapshots cover in full count in a baseline, never an uncovered day as 0.');
    });

    it('lists the uncovered days as data gaps with 0 covered hours, never as drops', async () => {
      const body = await json('/api/reports/anomalies?by=tag%3Ateam&from=2025-02-01&to=2025-02-28');
      expect(body.rows.filter((r) => r.day === '2025-02-10' || r.day === '2025-02-11').map((r) => [r.day, r.kind, r.spend])).toEqual([
        ['2025-02-11', 'data gap', null],
        ['2025-02-10', 'data gap', null],
      ]);
    });
  });
});

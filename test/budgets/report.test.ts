/**
 * The budgets report over real HTTP (JSON, CSV, HTML) on the periods dataset, every figure worked
 * out by hand from its known prices (test/reports/periods-fixture.ts): NOW = 2025-03-10 12:00 UTC,
 * 21.5 days left in March.
 *
 * - team ml (EUR, i1 g-a100 2.50/h = 60/day): March so far 9 x 60 + 12 h x 2.50 = 570; the last 7
 *   complete days (03-03 .. 03-09) cost 60 each: forecast 570 + 60 x 21.5 = 1860.
 * - team web (USD, j1 g-a100 3.00/h = 72/day, stopped on 03-05): March 8 x 72 + 12 h x 3 = 612;
 *   03-03 .. 03-09 cost 6 x 72 + 0 = 432: forecast 612 + 432 / 7 x 21.5 = 1938.857142857...
 * - project 2 is team web's USD spend (j1 is its only instance); the EUR total is team ml's.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import type { ChartSpec, Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { dec, pick, type ReportsApp } from '../reports/helpers.js';
import { PERIODS_NOW, seedPeriods } from '../reports/periods-fixture.js';
import { parseCsv } from '../web/fixtures.js';

interface Body {
  title: string;
  rows: Row[];
  totals: Row[];
  charts: ChartSpec[];
  summary: Array<{ label: string; value: unknown }>;
  notes: string[];
  errors?: Array<{ field: string; message: string }>;
}

const config = loadConfig(
  { CLOUDTALLY_CONFIG: 'test.json' },
  {
    readFile: () =>
      JSON.stringify({
        cost_max_gap_hours: 24,
        budgets: [
          { name: 'ML team', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '2000', notify: ['finance'] },
          { name: 'ML tight', by: 'tag:team', value: 'ml', currency: 'eur', amount_per_month: '1800.00', thresholds: [100, 90] },
          { name: 'Web in USD', by: 'tag:team', value: 'web', currency: 'USD', amount_per_month: '600' },
          { name: 'Everything in EUR', currency: 'EUR', amount_per_month: '5000' },
        ],
      }),
  },
);

async function seed(db: Database): Promise<void> {
  await seedPeriods(db);
  // A budget made in the web app: project 2 in USD.
  await db.query(`insert into budgets (name, by, value, currency, amount, created_by, updated_by) values ('Project two', 'project', '2', 'USD', 1000, 'ada', 'ada')`);
  // An archived one is not shown.
  await db.query(`insert into budgets (name, currency, amount, created_by, updated_by, archived_at, archived_by) values ('Old', 'EUR', 1, 'ada', 'ada', now(), 'ada')`);
}

describe.each(testDatabases())('budgets report on $name', (database) => {
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed, config, now: PERIODS_NOW }));
  }, 120_000);

  async function get(path: string): Promise<{ status: number; text: string }> {
    const res = await request(`${app.base}${path}`);
    return { status: res.statusCode, text: (await res.body.text()).replace(/^\uFEFF/, '') };
  }
  async function ok(path: string): Promise<Body> {
    const res = await get(path);
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    return JSON.parse(res.text) as Body;
  }

  it('gives amount, spend to date, forecast, percentages and status per budget for the current month', async () => {
    const body = await ok('/api/reports/budgets');
    expect(body.title).toBe('Budgets, 2025-03');
    expect(pick(body.rows, ['budget', 'covers', 'currency', 'amount', 'spend', 'forecast', 'percent_used', 'forecast_percent', 'status'], ['amount', 'spend', 'forecast'])).toEqual([
      ['ML team', 'Tag team = ml', 'EUR', 2000, 570, 1860, '28.50', '93.00', 'on track'], // 570 / 2000; 1860 / 2000
      ['ML tight', 'Tag team = ml', 'EUR', 1800, 570, 1860, '31.67', '103.33', 'at risk'], // forecast >= 1800
      ['Web in USD', 'Tag team = web', 'USD', 600, 612, dec(612 + (432 / 7) * 21.5), '102.00', '323.14', 'over'], // 612 >= 600
      ['Everything in EUR', 'Total (every priced resource)', 'EUR', 5000, 570, 1860, '11.40', '37.20', 'on track'],
      ['Project two', 'Project = 2', 'USD', 1000, 612, dec(612 + (432 / 7) * 21.5), '61.20', '193.89', 'at risk'],
    ]);
    expect(body.rows[0]!.thresholds).toBe('50, 80, 100');
    expect(body.rows[1]!.thresholds).toBe('90, 100');
    expect(body.rows[0]!.source).toBe('configuration file');
    expect(body.rows[4]!.source).toBe('web app');
    // Totals per currency: EUR 2000 + 1800 + 5000 = 8800, spend 3 x 570, forecast 3 x 1860.
    expect(pick(body.totals, ['budget', 'currency', 'amount', 'spend', 'forecast'], ['amount', 'spend', 'forecast'])).toEqual([
      ['Total', 'EUR', 8800, 1710, 5580],
      ['Total', 'USD', 1600, 1224, dec(2 * 1938.8571428571)],
    ]);
    expect(body.summary.map((s) => [s.label, s.value])).toEqual([
      ['Budgets', 5],
      ['On track', 2],
      ['At risk', 2],
      ['Over', 1],
    ]);
  });

  it('draws a burn-up chart per budget: the spend summed day by day against the amount', async () => {
    const body = await ok('/api/reports/budgets');
    const ml = body.charts.find((c) => c.title.startsWith('ML team'))!;
    expect(ml.type).toBe('line');
    expect(ml.currency).toBe('EUR');
    expect(ml.labels).toHaveLength(31);
    const [spend, line] = ml.datasets;
    // 60 a day from 03-01, 570 by 03-10 (half a day), nothing known after today.
    expect(spend!.data.slice(0, 11)).toEqual([60, 120, 180, 240, 300, 360, 420, 480, 540, 570, null]);
    expect(line!.data.every((v) => v === 2000)).toBe(true);
    const web = body.charts.find((c) => c.title.startsWith('Web in USD'))!;
    // 03-05 cost nothing: the line stays flat that day.
    expect(web.datasets[0]!.data.slice(0, 6)).toEqual([72, 144, 216, 288, 288, 360]);
  });

  it('shows an ended month with its spend as the forecast', async () => {
    const body = await ok('/api/reports/budgets?period=2025-02');
    expect(body.title).toBe('Budgets, 2025-02');
    expect(pick(body.rows, ['budget', 'spend', 'forecast', 'percent_used', 'status'], ['spend', 'forecast'])).toEqual([
      ['ML team', 1560, 1560, '78.00', 'on track'], // 26 days x 60 (02-10, 02-11 not collected)
      ['ML tight', 1560, 1560, '86.67', 'on track'],
      ['Web in USD', 1224, 1224, '204.00', 'over'], // 17 days x 72
      ['Everything in EUR', 4056, 4056, '81.12', 'on track'], // ml 1560 + web EUR 26 x 96
      ['Project two', 1224, 1224, '122.40', 'over'],
    ]);
    expect(body.notes.join(' ')).toMatch(/2025-02 has ended/);
  });

  it('answers a bad or future month with 400 naming the parameter', async () => {
    for (const q of ['period=2025-13', 'period=march', 'period=2025-04']) {
      const res = await get(`/api/reports/budgets?${q}`);
      expect(res.status, q).toBe(400);
      expect((JSON.parse(res.text) as Body).errors?.[0]?.field, q).toBe('query.period');
    }
  });

  it('exports the same rows and the totals as CSV, money rounded to the minor unit', async () => {
    const res = await get('/api/reports/budgets.csv');
    expect(res.status).toBe(200);
    const table = parseCsv(res.text);
    const header = table[0]!;
    const col = (name: string) => header.indexOf(name);
    const rows = table.slice(1).map((r) => [r[col('Budget')], r[col('Currency')], r[col('Spend to date')], r[col('Forecast for the period end')], r[col('Status')]]);
    expect(rows).toEqual([
      ['ML team', 'EUR', '570.00', '1860.00', 'on track'],
      ['ML tight', 'EUR', '570.00', '1860.00', 'at risk'],
      ['Web in USD', 'USD', '612.00', '1938.86', 'over'],
      ['Everything in EUR', 'EUR', '570.00', '1860.00', 'on track'],
      ['Project two', 'USD', '612.00', '1938.86', 'at risk'],
      ['Total', 'EUR', '1710.00', '5580.00', ''],
      ['Total', 'USD', '1224.00', '3877.71', ''],
    ]);
  });

  it('renders the HTML page with the chart and the status of each budget', async () => {
    const res = await get('/reports/budgets');
    expect(res.status).toBe(200);
    expect(res.text).toContain('Budgets, 2025-03');
    expect(res.text).toMatch(/burn-up-config-ML-team/);
    expect(res.text).toContain('at risk');
    // No sign-in in this app: nobody is an admin, so no editing controls.
    expect(res.text).not.toContain('New budget');
  });
});

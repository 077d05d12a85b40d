/**
 * Budgets by quarter and by year on the periods dataset (test/reports/periods-fixture.ts, NOW =
 * 2025-03-10 12:00 UTC; team ml costs EUR 60 a day: January 960, February 1560, March so far 570).
 *
 * - "ML quarter", EUR 3000 for 2025-Q1: spend 960 + 1560 + 570 = 3090 (103.00 %, over); the
 *   forecast adds 60 a day for the 21.5 days left in the quarter: 3090 + 1290 = 4380 (146.00 %).
 * - "ML year", EUR 20000 for 2025: spend 3090 (15.45 %); 296.5 days are left in the year
 *   (21.5 in March, then April to December: 275): 3090 + 60 x 296.5 = 20880 (104.40 %), at risk.
 * - "ML month", EUR 2000 a month, as before: 570 and 1860 (28.50 %, 93.00 %).
 * Over HTTP (JSON, CSV), the alerts after a collection, the configuration's and the form's checks.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateBudgetAlerts } from '../../src/budgets/alerts.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import type { StoredMessage } from '../../src/notify/outbox.js';
import type { ChartSpec, Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { pick, type ReportsApp } from '../reports/helpers.js';
import { PERIODS_NOW, seedPeriods } from '../reports/periods-fixture.js';
import { parseCsv } from '../web/fixtures.js';

function configWith(budgets: unknown[]): Config {
  return loadConfig(
    { CLOUDTALLY_CONFIG: 'test.json', CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com' },
    { readFile: () => JSON.stringify({ cost_max_gap_hours: 24, budgets }) },
  );
}

const BUDGETS = [
  { name: 'ML month', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '2000' },
  { name: 'ML quarter', by: 'tag:team', value: 'ml', currency: 'EUR', period: 'quarter', amount: '3000', thresholds: [80, 100], notify: ['finance-mail'] },
  { name: 'ML year', by: 'tag:team', value: 'ml', currency: 'EUR', period: 'year', amount: '20000', thresholds: [50, 100], notify: ['finance-mail'] },
];
const config = configWith(BUDGETS);

interface Body {
  rows: Row[];
  totals: Row[];
  charts: ChartSpec[];
  notes: string[];
}

describe.each(testDatabases())('budgets by quarter and year on $name', (database) => {
  let app: ReportsApp;
  let db: Database;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app, db } = await reportsApps.open(database, { seed: seedPeriods, config, now: PERIODS_NOW }));
  }, 120_000);

  async function ok(path: string): Promise<{ body: string }> {
    const res = await request(`${app.base}${path}`);
    const body = (await res.body.text()).replace(/^\uFEFF/, '');
    expect(res.statusCode, body.slice(0, 300)).toBe(200);
    return { body };
  }

  it('measures each budget over its own period: spend to date, forecast for the period end, status', async () => {
    const body = JSON.parse((await ok('/api/reports/budgets')).body) as Body;
    expect(pick(body.rows, ['budget', 'period', 'period_label', 'period_from', 'period_to', 'amount', 'spend', 'forecast', 'percent_used', 'forecast_percent', 'status'], ['amount', 'spend', 'forecast'])).toEqual([
      ['ML month', 'month', '2025-03', '2025-03-01', '2025-03-31', 2000, 570, 1860, '28.50', '93.00', 'on track'],
      ['ML quarter', 'quarter', '2025-Q1', '2025-01-01', '2025-03-31', 3000, 3090, 4380, '103.00', '146.00', 'over'],
      ['ML year', 'year', '2025', '2025-01-01', '2025-12-31', 20000, 3090, 20880, '15.45', '104.40', 'at risk'],
    ]);
    // Totals per currency and period: a month's, a quarter's and a year's amounts are never added.
    expect(pick(body.totals, ['period_label', 'currency', 'amount', 'spend'], ['amount', 'spend'])).toEqual([
      ['2025', 'EUR', 20000, 3090],
      ['2025-03', 'EUR', 2000, 570],
      ['2025-Q1', 'EUR', 3000, 3090],
    ]);
    // The burn-up runs over the whole period: 90 days of Q1, 365 of 2025; 960 by the end of January.
    const quarter = body.charts.find((c) => c.title.startsWith('ML quarter'))!;
    expect(quarter.title).toContain('2025-Q1');
    expect(quarter.labels).toHaveLength(90);
    expect(quarter.datasets[0]!.data[30]).toBe(960);
    expect(quarter.datasets[1]!.data.every((v) => v === 3000)).toBe(true);
    expect(body.charts.find((c) => c.title.startsWith('ML year'))!.labels).toHaveLength(365);
    expect(body.notes.join(' ')).toMatch(/quarterly or yearly budget shows its quarter or year that holds 2025-03/);
  });

  it('matches the cost report over the same period', async () => {
    for (const period of ['2025-Q1', '2025']) {
      const cost = JSON.parse((await ok(`/api/reports/cost?by=tag:team&period=${period}`)).body) as { rows: Row[] };
      const ml = cost.rows.find((r) => r.group === 'ml' && r.currency === 'EUR')!;
      expect(Number(ml.cost), period).toBe(3090);
    }
  });

  it('names the period in the CSV', async () => {
    const [header, ...rows] = parseCsv((await ok('/api/reports/budgets.csv')).body);
    const col = (label: string) => header!.indexOf(label);
    expect(col('Period')).toBeGreaterThan(-1);
    expect(rows.filter((r) => r[0] !== 'Total').map((r) => [r[col('Budget')], r[col('Period')], r[col('Amount for the period')], r[col('Forecast for the period end')]])).toEqual([
      ['ML month', '2025-03', '2000.00', '1860.00'],
      ['ML quarter', '2025-Q1', '3000.00', '4380.00'],
      ['ML year', '2025', '20000.00', '20880.00'],
    ]);
  });

  it('alerts once per budget, period, measure and percentage, naming the period', async () => {
    const logger = createLogger({ level: 'silent' });
    const queued = await evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW);
    expect(queued.sort()).toEqual([
      'budget:config:ML quarter:2025-Q1:actual:100',
      'budget:config:ML quarter:2025-Q1:forecast:100',
      'budget:config:ML year:2025:forecast:100',
    ]);
    expect(await evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW)).toEqual([]);
    const [quarter] = await db.query<{ payload: StoredMessage }>(`select payload from notify_messages where key = 'budget:config:ML quarter:2025-Q1:actual:100'`);
    expect(quarter!.payload.subject).toBe('Budget "ML quarter" 2025-Q1: spend reached 100% of 3,000.00 EUR');
    expect(quarter!.payload.text).toContain('Budget: 3,000.00 EUR per quarter');
    expect(quarter!.payload.text).toContain('Forecast for the quarter end: 4,380.00 EUR (146.00%)');
    expect(quarter!.payload.data).toMatchObject({ period: '2025-Q1', period_from: '2025-01-01', period_to: '2025-03-31', budget: { period: 'quarter', amount: '3000' } });
    expect(quarter!.payload.data).not.toHaveProperty('month');
    const [year] = await db.query<{ payload: StoredMessage }>(`select payload from notify_messages where key = 'budget:config:ML year:2025:forecast:100'`);
    expect(year!.payload.subject).toBe('Budget "ML year" 2025: forecast for the year end reached 100% of 20,000.00 EUR');
  });
});

describe('quarterly and yearly budgets in the configuration', () => {
  const problems = (budgets: unknown[]) => {
    try {
      configWith(budgets);
      return [];
    } catch (err) {
      return (err as { problems: Array<{ path: string; message: string }> }).problems.map((p) => `${p.path}: ${p.message}`);
    }
  };

  it('takes period with amount, and amount_per_month as the monthly form', () => {
    const budgets = configWith([...BUDGETS, { name: 'Plain', currency: 'USD', period: 'month', amount: '10' }]).budgets!;
    expect(budgets.map((b) => [b.name, b.period, b.amount])).toEqual([
      ['ML month', 'month', '2000'],
      ['ML quarter', 'quarter', '3000'],
      ['ML year', 'year', '20000'],
      ['Plain', 'month', '10'],
    ]);
  });

  it('refuses an unknown period, both amounts, no amount, and amount_per_month on another period', () => {
    expect(
      problems([
        { name: 'A', currency: 'EUR', period: 'week', amount: '1' },
        { name: 'B', currency: 'EUR', amount: '1', amount_per_month: '1' },
        { name: 'C', currency: 'EUR' },
        { name: 'D', currency: 'EUR', period: 'year', amount_per_month: '1' },
      ]),
    ).toEqual([
      'budgets[0].period: must be one of month, quarter, year',
      'budgets[1].amount_per_month: is the monthly form of amount: give one of them, not both',
      'budgets[2].amount: is required: the amount for one period (or amount_per_month for a monthly budget)',
      'budgets[3].amount_per_month: is for monthly budgets: with period "year" give amount',
    ]);
  });
});

/**
 * Budget threshold alerts on the periods dataset (test/reports/periods-fixture.ts, NOW =
 * 2025-03-10 12:00 UTC): team ml EUR spend 570, forecast 1860; team web USD spend 612, forecast
 * 612 + 432 / 7 x 21.5 = 1938.86. Evaluated twice by two "replicas" at once and once more: each
 * crossing is queued once, keyed budget:<id>:<YYYY-MM>:<actual|forecast>:<pct>.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateBudgetAlerts } from '../../src/budgets/alerts.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import type { StoredMessage } from '../../src/notify/outbox.js';
import { testDatabases } from '../helpers/databases.js';
import { PERIODS_NOW, seedPeriods } from '../reports/periods-fixture.js';

const logger = createLogger({ level: 'silent' });

function configWith(budgets: unknown[]): Config {
  return loadConfig(
    { CLOUDTALLY_CONFIG: 'test.json', CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com' },
    { readFile: () => JSON.stringify({ cost_max_gap_hours: 24, budgets }) },
  );
}

const config = configWith([
  // 570 / 2000 = 28.5 % (no actual alert); forecast 1860 = 93 %: 80 is the highest reached.
  { name: 'ML team', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '2000', notify: ['finance-mail', 'finance-hook'] },
  // 612 / 600 = 102 %: 100 on actual and on forecast (323 %).
  { name: 'Web in USD', by: 'tag:team', value: 'web', currency: 'USD', amount_per_month: '600', thresholds: [50, 100], notify: ['finance-mail'] },
  // Over, but without channels: never alerts.
  { name: 'Quiet', currency: 'USD', amount_per_month: '1', notify: [] },
]);

interface Message {
  key: string;
  payload: StoredMessage;
  channels: string[];
}

describe.each(testDatabases())('budget alerts on $name', ({ open }) => {
  let db: Database;

  beforeAll(async () => {
    db = await open();
    await seedPeriods(db);
  }, 120_000);
  afterAll(async () => {
    await db?.close();
  });

  const messages = () =>
    db.query<Message & Record<string, unknown>>(
      `select m.key, m.payload, coalesce(array_agg(d.channel order by d.channel) filter (where d.channel is not null), '{}') as channels
       from notify_messages m left join notify_deliveries d on d.message_id = m.id group by m.id order by m.key`,
    );

  it('queues each crossing once, however many replicas evaluate and however often', async () => {
    // Two replicas at once (on Postgres each statement takes a connection of the pool: they interleave).
    const [a, b] = await Promise.all([evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW), evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW)]);
    expect([...a, ...b].sort()).toEqual([
      'budget:config:ML team:2025-03:forecast:80',
      'budget:config:Web in USD:2025-03:actual:100',
      'budget:config:Web in USD:2025-03:forecast:100',
    ]);
    expect(await evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW)).toEqual([]);
    const found = await messages();
    expect(found.map((m) => [m.key, m.channels])).toEqual([
      ['budget:config:ML team:2025-03:forecast:80', ['finance-hook', 'finance-mail']],
      ['budget:config:Web in USD:2025-03:actual:100', ['finance-mail']],
      ['budget:config:Web in USD:2025-03:forecast:100', ['finance-mail']],
    ]);
  });

  it('names the budget, the spend, the forecast, the top contributors and the report', async () => {
    const web = (await messages()).find((m) => m.key === 'budget:config:Web in USD:2025-03:actual:100')!.payload;
    expect(web.subject).toBe('Budget "Web in USD" 2025-03: spend reached 100% of 600.00 USD');
    expect(web.text).toContain('Spend to date: 612.00 USD (102.00%)');
    expect(web.text).toContain('Forecast for the month end: 1,938.86 USD (323.14%)');
    // j1 (g-a100, USD 3.00/h = 2190/month) is team web's one running resource.
    expect(web.text).toContain('1. j1 (instance, project 2, region 2, g-a100): 3.0000 USD per hour, 2,190.00 USD per month');
    expect(web.link).toBe('https://cloudtally.example.com/reports/budgets?period=2025-03');
    expect(web.text).toContain('Report: https://cloudtally.example.com/reports/budgets?period=2025-03');
    expect(web.data).toMatchObject({ type: 'budget_threshold', month: '2025-03', measure: 'actual', threshold_percent: 100, spend: '612', status: 'over' });
    expect((web.data.top_contributors as Array<{ resource_id: string }>).map((c) => c.resource_id)).toEqual(['j1']);
    const ml = (await messages()).find((m) => m.key.startsWith('budget:config:ML team'))!.payload;
    expect(ml.subject).toBe('Budget "ML team" 2025-03: forecast for the month end reached 80% of 2,000.00 EUR');
    expect(ml.text).toContain('Spend to date: 570.00 EUR (28.50%)');
    expect(ml.text).toContain('Forecast for the month end: 1,860.00 EUR (93.00%)');
  });

  it('sends no lower percentage after a higher one, and a higher one when it is reached', async () => {
    // The same budget with a smaller amount: 570 / 1000 = 57 % -> actual 50; forecast 186 % -> 100.
    const tighter = configWith([{ name: 'ML team', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '1000', notify: ['finance-mail'] }]);
    expect((await evaluateBudgetAlerts({ db, config: tighter, logger }, PERIODS_NOW)).sort()).toEqual(['budget:config:ML team:2025-03:actual:50', 'budget:config:ML team:2025-03:forecast:100']);
    // Back to 2000: forecast 93 % reaches 80 again, but 100 was sent this month already.
    expect(await evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW)).toEqual([]);
  });

  it('alerts for budgets made in the web app too, keyed by their id', async () => {
    const [row] = await db.query<{ id: string }>(
      `insert into budgets (name, by, value, currency, amount, thresholds, notify, created_by, updated_by)
       values ('Project two', 'project', '2', 'USD', 1000, '[60]', '["finance-mail"]', 'adam', 'adam') returning id::text`,
    );
    expect(await evaluateBudgetAlerts({ db, config: configWith([]), logger }, PERIODS_NOW)).toEqual([`budget:${row!.id}:2025-03:actual:60`, `budget:${row!.id}:2025-03:forecast:60`]);
    await db.query(`update budgets set archived_at = now(), archived_by = 'adam' where id = $1`, [row!.id]);
    await db.query(`delete from notify_messages where key like 'budget:${row!.id}:%'`);
    expect(await evaluateBudgetAlerts({ db, config: configWith([]), logger }, PERIODS_NOW)).toEqual([]);
  });
});

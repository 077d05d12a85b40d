/**
 * The alert history over HTTP: a budget crossing its threshold on the periods dataset (NOW =
 * 2025-03-10 12:00 UTC; team ml's forecast for March is 570 + 60 x 21.5 = 1860 EUR, 103.33 % of
 * 1800), sent to a real webhook that fails once and then recovers; the history and the budgets
 * report say when it was decided, what crossed, where it went, how many attempts and the error.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateBudgetAlerts } from '../../src/budgets/alerts.js';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import type { Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from './helpers.js';
import { PERIODS_NOW, seedPeriods } from './periods-fixture.js';
import { parseCsv } from '../web/fixtures.js';

/** A webhook that answers 500 to its first post and 200 after. */
async function flakyHook(): Promise<{ url: string; posts: number; close(): Promise<void> }> {
  const state = { url: '', posts: 0, close: async (): Promise<void> => undefined };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      state.posts++;
      res.writeHead(state.posts === 1 ? 500 : 200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

function configFor(hook: { url: string }) {
  return loadConfig(
  { CLOUDTALLY_CONFIG: 'test.json', CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com' },
  {
    readFile: () =>
      JSON.stringify({
        cost_max_gap_hours: 24,
        channels: [{ name: 'finance-hook', type: 'webhook', url: hook.url, allow_private_network: true }],
        budgets: [
          { name: 'ML tight', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '1800', thresholds: [100], notify: ['finance-hook'] },
          { name: 'Quiet', currency: 'EUR', amount_per_month: '1000000', notify: ['finance-hook'] },
        ],
      }),
  },
  );
}
const logger = createLogger({ level: 'silent' });

describe.each(testDatabases())('the alert history on $name', (database) => {
  let app: ReportsApp;
  let db: Database;
  let hook: Awaited<ReturnType<typeof flakyHook>>;
  let config: ReturnType<typeof configFor>;

  appTest.beforeAll(async ({ reportsApps }) => {
    hook = await flakyHook();
    config = configFor(hook);
    ({ app, db } = await reportsApps.open(database, { seed: seedPeriods, config, now: PERIODS_NOW }));
  }, 120_000);
  afterAll(() => hook?.close());

  async function json(path: string): Promise<{ rows: Row[]; summary: Array<{ label: string; value: unknown }> }> {
    const res = await request(`${app.base}${path}`);
    const text = await res.body.text();
    expect(res.statusCode, text.slice(0, 300)).toBe(200);
    return JSON.parse(text) as { rows: Row[]; summary: Array<{ label: string; value: unknown }> };
  }
  const pick = (r: Row) => [r.type, r.subject, r.state, r.channels, r.attempts, r.last_error, r.link];

  it('lists a crossing with its delivery: retrying after a failure, then sent, the error kept', async () => {
    expect(await evaluateBudgetAlerts({ db, config, logger }, PERIODS_NOW)).toEqual(['budget:config:ML tight:2025-03:forecast:100']);
    const dispatcher = createDispatcher({ db, config, logger });
    expect(await dispatcher.dispatch(PERIODS_NOW)).toEqual({ sent: 0, retrying: 1, failed: 0 });

    const subject = 'Budget "ML tight" 2025-03: forecast for the month end reached 100% of 1,800.00 EUR';
    const error = `webhook at ${new URL(hook.url).host} answered 500, body of 2 bytes not kept`;
    const first = await json('/api/reports/alerts');
    expect(first.rows.map(pick)).toEqual([['budget', subject, 'pending', 'finance-hook: pending after 1 attempt', 1, error, '/reports/budgets?period=2025-03']]);
    expect(first.summary.map((s) => [s.label, s.value])).toEqual([['Alerts', 1], ['Not delivered', 0], ['Still trying', 1]]);

    expect(await dispatcher.dispatch(new Date(PERIODS_NOW.getTime() + 3_600_000))).toEqual({ sent: 1, retrying: 0, failed: 0 });
    dispatcher.close();
    const after = await json('/api/reports/alerts');
    expect(after.rows.map(pick)).toEqual([['budget', subject, 'sent', 'finance-hook: sent after 2 attempts', 2, error, '/reports/budgets?period=2025-03']]);
    expect(after.rows[0]!.delivered_at).toBe(new Date(PERIODS_NOW.getTime() + 3_600_000).toISOString());
    expect(hook.posts).toBe(2);

    const csv = parseCsv((await request(`${app.base}/api/reports/alerts.csv`).then((r) => r.body.text())).replace(/^\uFEFF/, ''));
    expect(csv[0]!.slice(0, 7)).toEqual(['Decided', 'Type', 'What crossed', 'Delivery', 'Channels', 'Attempts', 'Last error']);
    expect(csv.slice(1).map((r) => [r[1], r[2], r[3], r[5]])).toEqual([['Budget threshold', subject, 'sent', '2']]);
  });

  it('shows each budget its last alert on the budgets report, linked to its history', async () => {
    const budgets = await json('/api/reports/budgets');
    const tight = budgets.rows.find((r) => r.budget === 'ML tight')!;
    expect([tight.last_alert, tight.alerts_href]).toEqual(['2025-03 forecast 100%, sent', '/reports/alerts?budget=config%3AML+tight']);
    expect(budgets.rows.find((r) => r.budget === 'Quiet')!.last_alert).toBeNull();
    const own = await json(String(tight.alerts_href).replace('/reports/', '/api/reports/'));
    expect(own.rows.map((r) => r.key)).toEqual(['budget:config:ML tight:2025-03:forecast:100']);
    expect((await json('/api/reports/alerts?budget=config:Quiet')).rows).toEqual([]);
    const page = await request(`${app.base}/reports/budgets`).then((r) => r.body.text());
    expect(page).toContain('<a href="/reports/alerts?type=budget">Alert history</a>');
  });

  it('filters by type, state and day, and refuses what it does not know (400)', async () => {
    expect((await json('/api/reports/alerts?type=anomaly')).rows).toEqual([]);
    expect((await json('/api/reports/alerts?state=failed')).rows).toEqual([]);
    // Decided when the collection's hook ran: today, in real time (the reports' clock is the dataset's).
    const today = new Date().toISOString().slice(0, 10);
    expect((await json(`/api/reports/alerts?type=budget&state=sent&from=${today}&to=${today}`)).rows).toHaveLength(1);
    expect((await json('/api/reports/alerts?type=budget&to=2025-03-09')).rows).toEqual([]);
    for (const q of ['type=sms', 'state=lost', 'from=yesterday']) expect((await request(`${app.base}/api/reports/alerts?${q}`)).statusCode, q).toBe(400);
  });
});

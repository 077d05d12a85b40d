/**
 * The budget editor: an admin creates, changes and archives a budget in headless Chromium, each
 * change written to the audit log; a viewer sees the budgets but is refused the editor (403);
 * bad input answers 422 with the form naming each problem and stores nothing.
 */
import type { Browser as Chromium, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import { auditReport } from '../../src/reports/audit.js';
import { budgetsReport } from '../../src/reports/budgets.js';
import { createWebApp } from '../../src/web/app.js';
import { createWebAuth } from '../../src/web/auth.js';
import { siteSettingsOf } from '../../src/web/site.js';
import { Browser, configWithUsers, PASSWORDS } from '../auth/app.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { PERIODS_NOW, seedPeriods } from '../reports/periods-fixture.js';

const CONFIG_BUDGET = { name: 'Everything in EUR', currency: 'EUR', amount_per_month: '5000' };

async function startApp(db: Database, config: Config): Promise<{ url: string; close: () => Promise<void> }> {
  const logger = createLogger({ level: 'silent' });
  const app = createWebApp({
    reports: [budgetsReport, auditReport],
    context: () => ({ db, config, now: PERIODS_NOW }),
    logger,
    demo: false,
    secret: config.auth.sessionSecret ?? undefined,
    auth: createWebAuth({ config, db, logger }),
    budgets: { db, config, now: () => PERIODS_NOW, channelNames: ['finance-mail', 'finance-hook'] },
    site: siteSettingsOf(config),
  });
  const { url, close } = await listenOnFreePort(app);
  return { url, close };
}

interface AuditRow {
  actor: string;
  role: string;
  action: string;
  result: string;
  reason: string;
}

describe.each(testDatabases())('the budget editor on $name', ({ open }) => {
  let db: Database;
  let app: { url: string; close: () => Promise<void> };

  beforeAll(async () => {
    db = await open();
    await seedPeriods(db);
    const config = await configWithUsers({ cost_max_gap_hours: 24, budgets: [CONFIG_BUDGET] });
    app = await startApp(db, config);
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const audit = () => db.query<AuditRow & Record<string, unknown>>(`select actor, role, action, result, reason from audit_log order by id`);
  const budgetRows = () => db.query<{ name: string; amount: string; archived: boolean }>(`select name, trim_scale(amount)::text as amount, archived_at is not null as archived from budgets order by id`);

  describe.skipIf(skipBrowserTests)('in headless Chromium', () => {
    let chromium: Chromium;
    beforeAll(async () => {
      chromium = await launchChromium();
    });
    afterAll(async () => {
      await chromium?.close();
    });

    async function login(page: Page, user: keyof typeof PASSWORDS): Promise<void> {
      await page.goto(`${app.url}/reports/budgets`);
      await page.waitForURL(/\/login\?next=/);
      await page.getByLabel('User name').fill(user);
      await page.getByLabel('Password').fill(PASSWORDS[user]);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(/\/reports\/budgets$/);
    }

    const rowOf = (page: Page, name: string) => page.locator('table.report-table tbody tr', { hasText: name });

    it('an admin creates, changes and archives a budget; each change is in the audit log', async () => {
      const { page, problems } = await watchedPage(browser());
      await login(page, 'adam');
      // The configured budget is shown, without an edit link (it is changed in the file).
      await expect(rowOf(page, 'Everything in EUR').count()).resolves.toBe(1);
      expect(await page.locator('[data-budget-edit]').count()).toBe(0);

      await page.getByRole('link', { name: 'New budget' }).click();
      await page.waitForURL(/\/budgets\/new$/);
      await page.getByLabel('Name', { exact: true }).fill('ML team');
      await page.locator('select[name="by"]').selectOption('tag');
      await page.getByLabel('Tag key').fill('team');
      await page.getByLabel(/^Group/).fill('ml');
      await page.getByLabel('Currency').fill('eur');
      await page.getByLabel('Amount for the period').fill('2000');
      await page.getByLabel('Alert channels').fill('finance-mail');
      await page.getByRole('button', { name: 'Create budget' }).click();
      await page.waitForURL(/\/reports\/budgets$/);
      await expect(page.locator('.flash').textContent()).resolves.toContain('Budget "ML team" created.');
      // 570 of 2000 so far (the periods dataset: team ml EUR, March to 03-10 12:00).
      const created = await rowOf(page, 'ML team').locator('td').allTextContents();
      // Every budget here is in EUR: the currency is in the column headers, not in the cells.
      expect(created.map((c) => c.trim())).toEqual(expect.arrayContaining(['ML team', 'Tag team = ml', 'EUR', '2,000.00', '570.00', '1,860.00', '28.50%', 'on track']));

      await page.locator('[data-budget-edit]').first().click();
      await page.waitForURL(/\/budgets\/\d+\/edit$/);
      await expect(page.getByLabel('Amount for the period').inputValue()).resolves.toBe('2000');
      await page.getByLabel('Amount for the period').fill('1800.50');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForURL(/\/reports\/budgets$/);
      // The forecast (1860) now reaches the amount (1860 / 1800.50 = 103.30 %): at risk.
      expect((await rowOf(page, 'ML team').locator('td').allTextContents()).map((c) => c.trim())).toEqual(expect.arrayContaining(['1,800.50', '103.30%', 'at risk']));

      await page.locator('[data-budget-edit]').first().click();
      await page.getByRole('button', { name: 'Archive this budget' }).click();
      await page.waitForURL(/\/reports\/budgets$/);
      await expect(rowOf(page, 'ML team').count()).resolves.toBe(0);

      expect(await budgetRows()).toEqual([{ name: 'ML team', amount: '1800.5', archived: true }]);
      const rows = (await audit()).filter((r) => r.action.startsWith('budget_'));
      expect(rows.map((r) => [r.actor, r.role, r.action, r.result])).toEqual([
        ['adam', 'admin', 'budget_create', 'budget_created'],
        ['adam', 'admin', 'budget_change', 'budget_changed'],
        ['adam', 'admin', 'budget_archive', 'budget_archived'],
      ]);
      expect(rows[0]!.reason).toMatch(/"ML team": tag:team=ml, EUR 2000 per month, alerts at 50,80,100% to finance-mail/);
      expect(rows[1]!.reason).toMatch(/amount_per_month 2000 -> 1800\.5/);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it('an admin makes a quarterly budget, then makes it yearly; the report and the audit log follow', async () => {
      const { page, problems } = await watchedPage(browser());
      await login(page, 'adam');
      await page.getByRole('link', { name: 'New budget' }).click();
      await page.getByLabel('Name', { exact: true }).fill('ML quarter');
      await page.locator('select[name="by"]').selectOption('tag');
      await page.getByLabel('Tag key').fill('team');
      await page.getByLabel(/^Group/).fill('ml');
      await page.getByLabel('Currency').fill('EUR');
      await page.locator('.budget-form select[name="period"]').selectOption('quarter');
      await page.getByLabel('Amount for the period').fill('3000');
      await page.getByRole('button', { name: 'Create budget' }).click();
      await page.waitForURL(/\/reports\/budgets$/);
      // Team ml in 2025-Q1 so far: 960 + 1560 + 570 = 3090 of 3000; forecast 3090 + 60 x 21.5 = 4380.
      expect((await rowOf(page, 'ML quarter').locator('td').allTextContents()).map((c) => c.trim())).toEqual(
        expect.arrayContaining(['ML quarter', '2025-Q1', '3,000.00', '3,090.00', '4,380.00', '103.00%', 'over']),
      );
      await page.getByRole('link', { name: 'Edit or archive “ML quarter”' }).click();
      await expect(page.locator('.budget-form select[name="period"]').inputValue()).resolves.toBe('quarter');
      await page.locator('.budget-form select[name="period"]').selectOption('year');
      await page.getByLabel('Amount for the period').fill('20000');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForURL(/\/reports\/budgets$/);
      // 296.5 days left in 2025: 3090 + 60 x 296.5 = 20880.
      expect((await rowOf(page, 'ML quarter').locator('td').allTextContents()).map((c) => c.trim())).toEqual(
        expect.arrayContaining(['2025', '20,000.00', '3,090.00', '20,880.00', '15.45%', 'at risk']),
      );
      const reasons = (await audit()).filter((r) => r.reason.includes('"ML quarter"')).map((r) => r.reason);
      expect(reasons[0]).toMatch(/tag:team=ml, EUR 3000 per quarter, alerts at 50,80,100%/);
      expect(reasons[1]).toMatch(/period quarter -> year; amount 3000 -> 20000/);
      expect(problems).toEqual([]);
      await page.context().close();
    });

    it('shows the problems of a bad form (422) and stores nothing', async () => {
      const { page, problems } = await watchedPage(browser());
      await login(page, 'adam');
      const before = await budgetRows();
      await page.goto(`${app.url}/budgets/new`);
      await page.getByLabel('Name', { exact: true }).fill('Everything in eur'); // a configured budget's name
      await page.getByLabel('Currency').fill('E1R');
      await page.getByLabel('Amount for the period').fill('-5');
      await page.getByLabel('Alert at').fill('50, 50');
      await page.getByRole('button', { name: 'Create budget' }).click();
      await page.waitForURL(/\/budgets$/);
      const listed = await page.locator('.field-errors li').evaluateAll((items) => items.map((li: any) => li.dataset.field));
      expect(listed.sort()).toEqual(['amount', 'currency', 'thresholds']);
      // What was typed is kept.
      await expect(page.getByLabel('Amount for the period').inputValue()).resolves.toBe('-5');
      // With the rest fixed, the name is refused: it is a configured budget's.
      await page.getByLabel('Currency').fill('EUR');
      await page.getByLabel('Amount for the period').fill('5');
      await page.getByLabel('Alert at').fill('100');
      await page.getByRole('button', { name: 'Create budget' }).click();
      // The answer is at the same URL: wait for its error list, not the one of the page before.
      await page.locator('.field-errors li[data-field="name"]').waitFor();
      await expect(page.locator('.field-errors li').evaluateAll((items) => items.map((li: any) => li.dataset.field))).resolves.toEqual(['name']);
      expect(await budgetRows()).toEqual(before);
      expect(problems.filter((p) => !/422/.test(p))).toEqual([]);
      await page.context().close();
    });

    it('a viewer sees the budgets but no editing control, and the editor answers 403', async () => {
      const { page } = await watchedPage(browser());
      await login(page, 'alice');
      await expect(rowOf(page, 'Everything in EUR').count()).resolves.toBe(1);
      expect(await page.getByRole('link', { name: 'New budget' }).count()).toBe(0);
      const answer = await page.goto(`${app.url}/budgets/new`);
      expect(answer?.status()).toBe(403);
      await page.context().close();
    });

    function browser(): Chromium {
      return chromium;
    }
  });

  it('refuses a viewer\'s and an operator\'s writes (403) and a write without a CSRF token', async () => {
    const [id] = await db.query<{ id: string }>(`insert into budgets (name, currency, amount, created_by, updated_by) values ('Kept', 'USD', 100, 'adam', 'adam') returning id::text`);
    for (const user of ['alice', 'olivia'] as const) {
      const b = new Browser(app.url);
      await b.login(user, PASSWORDS[user]);
      await b.get('/reports/budgets');
      expect((await b.post('/budgets', { name: 'X', currency: 'EUR', amount_per_month: '1' })).status, user).toBe(403);
      expect((await b.post(`/budgets/${id!.id}`, { name: 'X', currency: 'EUR', amount_per_month: '1' })).status, user).toBe(403);
      expect((await b.post(`/budgets/${id!.id}/archive`, {})).status, user).toBe(403);
    }
    const admin = new Browser(app.url);
    await admin.login('adam', PASSWORDS.adam);
    await admin.get('/reports/budgets');
    expect((await admin.post(`/budgets/${id!.id}/archive`, {}, { csrf: null })).status).toBe(403);
    expect((await db.query<{ archived: boolean }>(`select archived_at is not null as archived from budgets where id = $1`, [id!.id]))[0]!.archived).toBe(false);
    // JSON clients get 422 naming the fields; unknown budgets 404.
    const bad = await admin.post('/budgets', { name: '', currency: 'EUR', amount_per_month: '1e3' }, { headers: { accept: 'application/json' } });
    expect(bad.status).toBe(422);
    expect((JSON.parse(bad.body) as { errors: Array<{ field: string }> }).errors.map((e) => e.field).sort()).toEqual(['body.amount_per_month', 'body.name']);
    // Channels must be configured ones.
    const channel = await admin.post('/budgets', { name: 'Y', currency: 'EUR', amount_per_month: '1', notify: 'finance-mail, pager' }, { headers: { accept: 'application/json' } });
    expect(channel.status).toBe(422);
    expect((JSON.parse(channel.body) as { errors: Array<{ field: string; message: string }> }).errors).toEqual([
      { field: 'body.notify', message: 'names no configured channel: pager (configured channels: finance-mail, finance-hook)' },
    ]);
    expect((await admin.post('/budgets/999999/archive', {})).status).toBe(404);
    expect((await admin.get('/budgets/config:Everything%20in%20EUR/edit')).status).toBe(404);
  });

  it('takes every channel of a form that sends notify twice, and refuses a single field sent twice (400)', async () => {
    const admin = new Browser(app.url);
    await admin.login('adam', PASSWORDS.adam);
    await admin.get('/reports/budgets');
    const notifyOf = async (name: string) =>
      (await db.query<{ notify: string[] }>(`select notify from budgets where name = $1`, [name]))[0]?.notify;

    const created = await admin.post('/budgets', { name: 'Two channels', currency: 'EUR', amount_per_month: '100', notify: ['finance-mail', 'finance-hook'] });
    expect(created.status).toBe(303);
    expect(await notifyOf('Two channels')).toEqual(['finance-mail', 'finance-hook']);
    // An unknown channel among several is still named, not dropped.
    const unknown = await admin.post('/budgets', { name: 'Pager', currency: 'EUR', amount_per_month: '100', notify: ['finance-mail', 'pager'] }, { headers: { accept: 'application/json' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toContain('names no configured channel: pager');

    const twice = await admin.post('/budgets', { name: ['A', 'B'], currency: 'EUR', amount_per_month: ['100', '200'] }, { headers: { accept: 'application/json' } });
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body)).toMatchObject({
      errors: [
        { field: 'body.name', message: 'name was sent 2 times; it takes one value' },
        { field: 'body.amount_per_month', message: 'amount_per_month was sent 2 times; it takes one value' },
      ],
    });
    const page = await admin.post('/budgets', { name: 'C', currency: ['EUR', 'USD'], amount_per_month: '100' });
    expect(page.status).toBe(400);
    expect(page.body).toContain('currency was sent 2 times; it takes one value');
    expect(await db.query(`select name from budgets where name in ('A', 'B', 'C', 'Pager')`)).toEqual([]);
  });
});

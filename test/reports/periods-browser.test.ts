/**
 * The period picker in headless Chromium, with JavaScript off (plain GET forms): it writes the
 * period into the URL (so the view can be bookmarked) and the figures follow. Amounts by hand in
 * periods-fixture.ts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from './helpers.js';
import { PERIODS_NOW, periodsConfig, seedPeriods } from './periods-fixture.js';

describe.skipIf(skipBrowserTests)('the period picker in headless Chromium', () => {
  let app: ReportsApp;
  let browser: Browser;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(testDatabases()[0], { seed: seedPeriods, config: periodsConfig(), now: PERIODS_NOW }));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('picks a month, a custom range and a quarter, each in the URL, with the figures of that period', async () => {
    const { page, problems } = await watchedPage(browser, { javaScriptEnabled: false });
    await page.goto(`${app.base}/reports/cost?by=tag%3Ateam&kind=instance`);
    // Month to date by default: ml 9 x 60 + 30, exact value in the cell's title. The group rows
    // are in tbody; the totals per currency in tfoot (web EUR spent 0 in March, so the EUR total
    // is ml's 570 too).
    await expect(page.locator('tbody td[title="570 EUR"]').count()).resolves.toBe(1);
    await expect(page.locator('tfoot td[title="570 EUR"]').count()).resolves.toBe(1);

    await page.locator('form.period-named select[name="period"]').selectOption('2025-02');
    await page.getByRole('button', { name: 'Show period' }).click();
    await page.waitForURL((url) => url.searchParams.get('period') === '2025-02');
    const url = new URL(page.url());
    // The other parameters stay: the view is bookmarkable as it is.
    expect([url.searchParams.get('by'), url.searchParams.get('kind'), url.searchParams.has('from')]).toEqual(['tag:team', 'instance', false]);
    await expect(page.locator('h1').textContent()).resolves.toBe('Cost by tag team, 2025-02 (Instances)');
    // web EUR 26 x 96, ml EUR 26 x 60 (January 960 before it), web USD 17 x 72.
    for (const exact of ['2496 EUR', '1560 EUR', '960 EUR', '1224 USD']) await expect(page.locator(`tbody td[title="${exact}"]`).count(), exact).resolves.toBe(1);
    // Totals: EUR 2496 + 1560 = 4056 (January 960 + 0), USD 1224 (January 16 x 72 = 1152).
    for (const exact of ['4056 EUR', '960 EUR', '1224 USD', '1152 USD']) await expect(page.locator(`tfoot td[title="${exact}"]`).count(), exact).resolves.toBe(1);
    await expect(page.locator('details.notices-line summary').textContent()).resolves.toMatch(/Coverage: 26 of 28 days/);
    await expect(page.locator('details.notices-line li.notice-coverage').textContent()).resolves.toMatch(/cover 26 of 28 days/);

    await page.locator('form.period-range input[name="from"]').fill('2025-02-01');
    await page.locator('form.period-range input[name="to"]').fill('2025-02-09');
    await page.getByRole('button', { name: 'Show range' }).click();
    await page.waitForURL((url) => url.searchParams.get('from') === '2025-02-01' && url.searchParams.get('to') === '2025-02-09');
    expect(new URL(page.url()).searchParams.has('period')).toBe(false);
    // 9 days: ml 9 x 60, web EUR 9 x 96, web USD 9 x 72; the 9 days before (01-23 .. 01-31) cost
    // the same for ml and web USD, so those amounts are there twice.
    for (const [exact, cells] of [['540 EUR', 2], ['864 EUR', 1], ['648 USD', 2]] as const) await expect(page.locator(`tbody td[title="${exact}"]`).count(), exact).resolves.toBe(cells);
    await expect(page.locator('form.period-range input[name="from"]').inputValue()).resolves.toBe('2025-02-01');

    await page.locator('form.period-named select[name="period"]').selectOption('2025-Q1');
    await page.getByRole('button', { name: 'Show period' }).click();
    await page.waitForURL((url) => url.searchParams.get('period') === '2025-Q1' && !url.searchParams.has('from') && !url.searchParams.has('to'));
    // ml 960 + 1560 + 570, web USD 1152 + 1224 + 612.
    for (const exact of ['3090 EUR', '2988 USD']) await expect(page.locator(`tbody td[title="${exact}"]`).count(), exact).resolves.toBe(1);

    // The other filters keep the period.
    await page.locator('form.filters:not(.period-named):not(.period-range) select[name="by"]').selectOption('project');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((url) => url.searchParams.get('by') === 'project' && url.searchParams.get('period') === '2025-Q1');
    expect(problems).toEqual([]);
  });
});

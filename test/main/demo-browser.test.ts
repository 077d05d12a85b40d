import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { drawnCharts, launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';

/**
 * What a newcomer does after `npm start`: the real service on embedded defaults (PGlite, the
 * built-in simulator's demo company with a day of history), the real overview in Chromium.
 */
describe.skipIf(skipBrowserTests)('the demo overview in headless Chromium', () => {
  let service: RunningService;
  let browser: Browser;

  beforeAll(async () => {
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 1 });
    await service.ready;
    await service.collection.idle();
    browser = await launchChromium();
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('draws the charts, groups by a tag, drills down and downloads the CSV, with no errors or CSP violations', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${service.url}/reports/overview`);
    await expect(page.locator('h1').textContent()).resolves.toMatch(/Overview/);
    await page.locator('figure.chart-drawn').first().waitFor();
    const charts = await drawnCharts(page);
    expect(charts.length).toBeGreaterThanOrEqual(2);
    for (const chart of charts) {
      expect(chart.type).not.toBeNull();
      expect(chart.painted).toBeGreaterThan(500);
    }

    // Group the top groups by the demo company's `team` tag: the choice lands in the URL.
    await page.locator('select[name="by"]').selectOption('tag:team');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((url) => url.searchParams.get('by') === 'tag:team');
    await page.locator('figure.chart-drawn').first().waitFor();
    const groups = await page.locator('table.report-table tbody tr td:first-child a').allTextContents();
    expect(groups.length).toBeGreaterThan(1);
    expect(groups).toContain('ml');
    for (const chart of await drawnCharts(page)) expect(chart.painted).toBeGreaterThan(500);

    // The CSV of exactly this view, as Excel wants it.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('a[data-export="csv"]').click()]);
    expect(download.suggestedFilename()).toMatch(/^cloudtally-overview-.*team.*\.csv$/);
    const file = readFileSync((await download.path())!);
    expect([...file.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = file.toString('utf8').slice(1).split('\r\n').filter(Boolean);
    // The header, the groups, then the table footer's totals (one per currency) as "Total" rows.
    const totals = await page.locator('table.report-table tfoot tr').count();
    expect(totals).toBeGreaterThan(0);
    expect(lines.length).toBe(groups.length + 1 + totals);
    expect(lines.slice(-totals).every((line) => line.startsWith('Total,'))).toBe(true);

    // Drill down: the resources behind the `ml` group, in the inventory.
    await page.locator('table.report-table tbody').getByRole('link', { name: 'ml', exact: true }).first().click();
    await page.waitForURL(/\/reports\/inventory\?/);
    const url = new URL(page.url());
    expect(url.searchParams.getAll('tag')).toContain('team:ml');
    const rows = await page.locator('table.report-table tbody tr').count();
    expect(rows).toBeGreaterThan(0);
    const tagCells = await page.locator('table.report-table tbody tr').evaluateAll((trs: any[]) => trs.map((tr) => tr.textContent as string));
    for (const text of tagCells) expect(text).toMatch(/team\s*ml/);

    expect(problems).toEqual([]);
    await page.context().close();
  });
});

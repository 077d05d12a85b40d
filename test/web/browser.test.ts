import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { drawnCharts, launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { startTestServer, type TestServer } from './fixtures.js';

describe.skipIf(skipBrowserTests)('in headless Chromium', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('draws the charts, filters, drills down and downloads the CSV, with no errors or CSP violations', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${server.url}/reports/costs`);

    // Every chart drawn by Chart.js under the strict CSP, each canvas with pixels on it.
    await page.locator('figure.chart-drawn').nth(2).waitFor();
    const charts = await drawnCharts(page);
    expect(charts.map((c) => [c.id, c.type])).toEqual([
      ['chart-by-team', 'doughnut'],
      ['chart-resources', 'bar'],
      ['chart-trend', 'line'],
    ]);
    for (const chart of charts) {
      expect(chart.width).toBeGreaterThan(100);
      expect(chart.painted).toBeGreaterThan(500);
    }

    // Drill down: the link behind a row.
    await page.getByRole('link', { name: '@cmd' }).click();
    await page.waitForURL(/\/reports\/costs\?team=alpha$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Cost by resource: team alpha');

    // A filter: the URL carries it, so the view can be bookmarked.
    await page.locator('select[name="team"]').selectOption('gamma');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL((url) => url.searchParams.get('team') === 'gamma');
    await expect(page.locator('h1').textContent()).resolves.toBe('Cost by resource: team gamma');
    await expect(page.locator('table.report-table tbody tr').count()).resolves.toBe(1);

    // Sorting by a header link keeps the filter.
    await page.locator('thead').getByRole('link', { name: /Resources/ }).click();
    await page.waitForURL((url) => url.searchParams.get('sort') === 'count' && url.searchParams.get('team') === 'gamma');

    // The CSV of exactly this view.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('a[data-export="csv"]').click()]);
    // The name carries the instant its figures are as of (one instant per answer).
    expect(download.suggestedFilename()).toMatch(/^cloudtally-costs-team-gamma-2024-05-17T\d{6}Z\.csv$/);
    const file = readFileSync((await download.path())!);
    expect([...file.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(file.toString('utf8').split('\r\n')[1]).toMatch(/^'-2,gamma,100\.00,EUR,/);

    // Collect now: a real form POST with its CSRF token, back to the same view with a message.
    const before = server.collectCalls;
    await page.getByRole('button', { name: 'Collect now' }).click();
    await page.locator('.flash-info').waitFor();
    expect(server.collectCalls).toBe(before + 1);
    expect(new URL(page.url()).searchParams.get('team')).toBe('gamma');

    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('works without JavaScript: the table, sorting and paging are links', async () => {
    const { page, problems } = await watchedPage(browser, { javaScriptEnabled: false });
    await page.goto(`${server.url}/reports/costs?limit=2`);
    await expect(page.locator('table.report-table tbody tr').count()).resolves.toBe(2);
    await expect(page.locator('.chart-table').first().isVisible()).resolves.toBe(true);
    await page.getByRole('link', { name: /Next/ }).click();
    await page.waitForURL((url) => url.searchParams.get('offset') === '2');
    await expect(page.locator('.paging .range').textContent()).resolves.toBe('Rows 3–4 of 5');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestServer, type TestServer } from './fixtures.js';

const CHROMIUM = '/usr/bin/chromium';
// In CI the browser test must run (and fail loudly if Chromium is missing); locally it is skipped without it.
const skip = !existsSync(CHROMIUM) && !process.env.CI;

describe.skipIf(skip)('in headless Chromium', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Records everything that would mean the page is broken: console errors, page errors, CSP violations, failed loads. */
  async function watchedPage(javaScriptEnabled = true): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ acceptDownloads: true, javaScriptEnabled });
    const page = await context.newPage();
    const problems: string[] = [];
    // Runs in the page (the tsconfig has no DOM types, hence `any`).
    await page.addInitScript(() => {
      const doc = (globalThis as any).document;
      doc.addEventListener('securitypolicyviolation', (e: any) => {
        console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`);
      });
    });
    page.on('console', (msg) => {
      if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console ${msg.type()}: ${msg.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} ${req.failure()?.errorText}`));
    page.on('response', (res) => {
      if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
    });
    return { page, problems };
  }

  it('draws the charts, filters, drills down and downloads the CSV, with no errors or CSP violations', async () => {
    const { page, problems } = await watchedPage();
    await page.goto(`${server.url}/reports/costs`);

    // Every chart drawn by Chart.js under the strict CSP, each canvas with pixels on it.
    await page.locator('figure.chart-drawn').nth(2).waitFor();
    const charts = await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('canvas')].map((canvas: any) => {
        const chart = (globalThis as any).Chart.getChart(canvas) as { config: { type: string } } | undefined;
        const ctx = canvas.getContext('2d');
        const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data as Uint8ClampedArray;
        let painted = 0;
        for (let i = 3; i < pixels.length; i += 4) if (pixels[i]! > 0) painted++;
        return { id: canvas.id as string, type: chart?.config.type, width: canvas.width as number, painted };
      }),
    );
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
    expect(download.suggestedFilename()).toBe('cloudtally-costs-team-gamma-2024-05-17.csv');
    const file = readFileSync((await download.path())!);
    expect([...file.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(file.toString('utf8').split('\r\n')[1]).toMatch(/^'-2,gamma,100,EUR,/);

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
    const { page, problems } = await watchedPage(false);
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

/**
 * Issue 27: the overview's first screen at 1440x900 in headless Chromium, on the demo service
 * (embedded defaults, three days of demo history, no sign-in: the local-mode and demo notices
 * both show). The answer is above the fold: the headline cards and the first daily chart end
 * above 900 px, each amount on one line, the notices in one line of at most 80 px that expands,
 * one period control with every preset, the chart from the first covered day, a bar that opens
 * the cost report of its day (which folds its notices the same way); axe-core finds no serious
 * violation on it, light or dark.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import type { Headline } from '../../src/reports/report.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const FOLD = 900;

describe.skipIf(skipBrowserTests)('the overview first screen at 1440x900 in Chromium', () => {
  let service: RunningService;
  let browser: Browser;
  let headline: Headline;

  beforeAll(async () => {
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 3 });
    await service.ready;
    await service.collection.idle();
    browser = await launchChromium();
    headline = ((await (await request(`${service.url}/api/reports/overview`)).body.json()) as { headline: Headline }).headline;
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  async function overview(path = '/reports/overview', colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
    });
    const response = await page.goto(`${service.url}${path}`);
    expect(response?.status()).toBe(200);
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('figure.chart:not(.chart-empty):not(.chart-drawn)').length === 0);
    return { page, problems };
  }

  it('shows the headline cards and the first daily chart above the fold, each amount on one line', async () => {
    const { page, problems } = await overview();
    // Both currencies of the demo, three cards each: spend, run-rate, projection.
    const cards = page.locator('.kpis .kpi');
    expect(await cards.count()).toBe(3 * headline.kpis.length);
    expect(headline.kpis.length).toBeGreaterThan(0);
    for (const box of await cards.evaluateAll((els) => els.map((e: any) => e.getBoundingClientRect().bottom as number))) expect(box).toBeLessThan(FOLD);
    const chart = page.locator('figure.chart').first();
    await expect(chart.getAttribute('aria-labelledby')).resolves.toMatch(/cost-per-day/);
    expect((await chart.boundingBox())!.y + (await chart.boundingBox())!.height).toBeLessThan(FOLD);
    // One line box: the value's height is its line height, and nothing overflows it.
    const values = await page.locator('.kpi-value').evaluateAll((els) =>
      els.map((e: any) => {
        const style = (globalThis as any).getComputedStyle(e);
        return { text: e.textContent as string, height: e.getBoundingClientRect().height as number, line: parseFloat(style.lineHeight), overflow: e.scrollWidth > e.clientWidth };
      }),
    );
    expect(values.length).toBe(3 * headline.kpis.length);
    for (const v of values) {
      expect(v.height, v.text).toBeLessThanOrEqual(v.line + 1);
      expect(v.overflow, v.text).toBe(false);
      // The currency is a suffix of the amount, not a line of its own.
      expect(v.text).toMatch(/^[\d,.]+ [A-Z]{3}$|^no data$/);
    }
    expect(problems).toEqual([]);
  });

  it('folds the status notices into one line of at most 80 px that expands on click', async () => {
    const { page } = await overview();
    const notices = page.locator('details.notices-line');
    expect((await notices.boundingBox())!.height).toBeLessThanOrEqual(80);
    await expect(notices.locator('summary').textContent()).resolves.toMatch(/Local mode · Demo data · Coverage: /);
    // Not a banner each above the page any more.
    expect(await page.locator('main > .banner').count()).toBe(0);
    await expect(notices.getByText('Demo data from the built-in simulator', { exact: false }).isVisible()).resolves.toBe(false);
    await notices.locator('summary').click();
    await expect(notices.getByText('Demo data from the built-in simulator', { exact: false }).isVisible()).resolves.toBe(true);
    await expect(notices.getByText(/^The figures cover/).isVisible()).resolves.toBe(true);
    // The cost report folds them the same way (a finance reader goes there from the overview).
    await page.goto(`${service.url}/reports/cost?period=last-7-days`);
    expect(await page.locator('main > .banner').count()).toBe(0);
    expect((await page.locator('details.notices-line').boundingBox())!.height).toBeLessThanOrEqual(80);
  });

  it('has one period control with every preset, and a preset shows its period at once', async () => {
    const { page, problems } = await overview();
    const select = page.getByRole('combobox', { name: 'Period', exact: true });
    expect(await page.locator('form.period-control').count()).toBe(1);
    const options = await select.locator('option').evaluateAll((els) => els.map((e: any) => [e.value, e.textContent]));
    expect(options).toEqual([
      ['mtd', 'This month'],
      ['last-month', 'Last month'],
      ['last-7-days', 'Last 7 days'],
      ['last-30-days', 'Last 30 days'],
      ['qtd', 'This quarter'],
      ['last-quarter', 'Last quarter'],
      ['ytd', 'Year to date'],
      ['custom', 'Custom range…'],
    ]);
    // The custom range's dates show only with "Custom range…".
    await expect(page.getByLabel('From', { exact: true }).isVisible()).resolves.toBe(false);
    await select.selectOption('last-7-days');
    await page.waitForURL(/period=last-7-days/);
    await expect(page.locator('h1').textContent()).resolves.toMatch(/^Overview, last 7 days \(\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\)$/);
    await page.getByRole('combobox', { name: 'Period', exact: true }).selectOption('custom');
    await expect(page.getByLabel('From', { exact: true }).isVisible()).resolves.toBe(true);
    const day = headline.first_covered_day!;
    await page.getByLabel('From', { exact: true }).fill(day);
    await page.getByLabel('to', { exact: true }).fill(day);
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL((url) => url.searchParams.get('period') === 'custom' && url.searchParams.get('from') === day);
    await expect(page.locator('h1').textContent()).resolves.toBe(`Overview, ${day} to ${day}`);
    expect(problems).toEqual([]);
  });

  it('starts the daily chart at the first covered day, stacked by group, and a bar opens the cost report of its day', async () => {
    const { page } = await overview();
    const drawn = await page.evaluate(() => {
      const canvas = (globalThis as any).document.querySelector('figure.chart canvas');
      const chart = (globalThis as any).Chart.getChart(canvas);
      const meta = chart.getDatasetMeta(0);
      const bar = meta.data[meta.data.length - 2];
      return { labels: chart.data.labels as string[], series: chart.data.datasets.length as number, stacked: chart.options.scales.x.stacked as boolean, bar: { x: bar.x as number, y: (bar.y + bar.base) / 2 } };
    });
    // The last 30 days would start long before the three days of history.
    expect(drawn.labels[0]).toBe(headline.first_covered_day);
    expect(drawn.series).toBeGreaterThan(1);
    expect(drawn.stacked).toBe(true);
    const box = (await page.locator('figure.chart canvas').first().boundingBox())!;
    await page.mouse.click(box.x + drawn.bar.x, box.y + drawn.bar.y);
    const day = drawn.labels[drawn.labels.length - 2]!;
    await page.waitForURL((url) => url.pathname === '/reports/cost');
    const url = new URL(page.url());
    expect([url.searchParams.get('from'), url.searchParams.get('to'), url.searchParams.get('by')]).toEqual([day, day, 'tag:team']);
    await expect(page.locator('h1').textContent()).resolves.toBe(`Cost by tag team, ${day} to ${day}`);
  });

  it('axe-core finds no serious or critical violation on the overview, notices open, light or dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { page } = await overview('/reports/overview', scheme);
      await page.locator('details.notices-line summary').click();
      await page.locator('details.chart-table-fold summary').first().click();
      await page.evaluate(AXE);
      const violations = (await page.evaluate(() =>
        (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }).then((r: any) => r.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n: any) => n.target.join(' ')) }))),
      )) as Array<{ id: string; impact: string; nodes: string[] }>;
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), scheme).toEqual([]);
    }
  });
});

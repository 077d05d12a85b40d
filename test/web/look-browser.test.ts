/**
 * Issue 16 (charts, dark mode, print, accessibility) on the real service: the demo company with a
 * day of history, three users, every page in headless Chromium. PGlite by default; a fresh
 * Postgres database when TEST_DATABASE_URL is set.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { INVENTORY_KINDS } from '../../src/reports/inventory-kinds.js';
import { allReports } from '../../src/reports/index.js';
import { addDecimal } from '../../src/read-models/decimal.js';
import { PASSWORDS, SESSION_SECRET, testUsers } from '../auth/app.js';
import { launchChromium, skipBrowserTests } from '../helpers/browser.js';
import { freshPostgresDatabase } from '../helpers/databases.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** Dark-mode screenshots for people to look at (test output, not committed). */
const SHOTS = join(process.cwd(), 'test-results', 'dark-mode');

/** Every report page and inventory kind. */
function reportPages(): string[] {
  const pages = allReports()
    .filter((r) => r.name !== 'inventory')
    .map((r) => `/reports/${r.name}`);
  for (const kind of INVENTORY_KINDS) pages.push(`/reports/inventory?kind=${kind}`);
  return pages;
}

interface AxeProblem {
  page: string;
  scheme: string;
  rule: string;
  impact: string;
  targets: string[];
}

/** axe-core's serious and critical violations on the page as it is now (its colours, its theme). */
async function axeProblems(page: Page, scheme: string): Promise<AxeProblem[]> {
  // evaluate() runs outside the page's CSP, which refuses any inline script.
  await page.evaluate(AXE);
  const violations = (await page.evaluate(() =>
    (globalThis as any).axe.run((globalThis as any).document, { resultTypes: ['violations'] }).then((r: any) =>
      r.violations.map((v: any) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 5).map((n: any) => `${n.target.join(' ')} ${n.failureSummary?.split('\n')[1] ?? ''}`) })),
    ),
  )) as Array<{ id: string; impact: string; targets: string[] }>;
  const url = new URL(page.url());
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ page: url.pathname + url.search, scheme, rule: v.id, impact: v.impact, targets: v.targets }));
}

/** Kind codes and API field names among the labels and series names of the page's charts. */
async function chartCodes(page: Page): Promise<string[]> {
  const specs = (await page.locator('script.chart-spec').allTextContents()).map((t) => JSON.parse(t) as { labels: string[]; datasets: Array<{ label: string }> });
  const codes = new Set(['instance', 'cluster', 'k8s_price', 'cluster_server', 'instances', 'publicips', 'volumes', 'price_per_hour']);
  return specs.flatMap((spec) => [...spec.labels, ...spec.datasets.map((d) => d.label)]).filter((label) => codes.has(label));
}

/** Waits until every chart that has something to draw is drawn (or the page has none). */
async function chartsDrawn(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const doc = (globalThis as any).document;
    return doc.querySelectorAll('figure.chart:not(.chart-empty):not(.chart-drawn)').length === 0;
  });
}

/** label -> colour of every group the charts of the page colour (doughnut slices, series). */
function chartColours(page: Page): Promise<Array<{ id: string; type: string; colours: Record<string, string> }>> {
  return page.evaluate(() =>
    [...(globalThis as any).document.querySelectorAll('canvas')].map((canvas: any) => {
      const chart = (globalThis as any).Chart.getChart(canvas);
      const colours: Record<string, string> = {};
      const type = chart.config.type as string;
      if (type === 'doughnut') chart.data.labels.forEach((l: string, i: number) => (colours[l] = chart.data.datasets[0].backgroundColor[i]));
      else if (chart.data.datasets.length > 1) for (const d of chart.data.datasets) colours[d.label] = d.borderColor === d.backgroundColor || type === 'bar' ? d.backgroundColor : d.borderColor;
      return { id: canvas.id as string, type, colours };
    }),
  );
}

describe.skipIf(skipBrowserTests)('the pages in headless Chromium: accessibility, colours, dark mode, print', () => {
  let service: RunningService;
  let browser: Browser;
  let signedIn: Awaited<ReturnType<BrowserContext['storageState']>>;
  let dropDatabase: (() => Promise<void>) | null = null;

  beforeAll(async () => {
    const env: Record<string, string> = { CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_SESSION_SECRET: SESSION_SECRET, CLOUDTALLY_CONFIG: '/test/cloudtally.json' };
    if (process.env.TEST_DATABASE_URL) {
      const fresh = await freshPostgresDatabase(process.env.TEST_DATABASE_URL);
      env.DATABASE_URL = fresh.url;
      dropDatabase = fresh.drop;
    }
    const users = await testUsers();
    const config = loadConfig(env, { readFile: () => JSON.stringify({ users }) });
    service = await startService(config, silentLogger(), { demoHistoryDays: 1 });
    await service.ready;
    await service.collection.idle();
    browser = await launchChromium();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${service.url}/login`);
    await page.getByLabel('User name').fill('adam');
    await page.getByLabel('Password').fill(PASSWORDS.adam);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname !== '/login');
    signedIn = await context.storageState();
    await context.close();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
    await dropDatabase?.();
  });

  /** A signed-in admin's page (a fresh context) and the errors it logs. */
  async function adminPage(options: { colorScheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; problems: string[] }> {
    const context = await browser.newContext({ storageState: signedIn, colorScheme: options.colorScheme ?? 'light', viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    await page.addInitScript(() => {
      (globalThis as any).document.addEventListener('securitypolicyviolation', (e: any) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !/status of 404/.test(msg.text())) problems.push(`console error: ${msg.text()}`);
    });
    return { page, problems };
  }

  it('axe-core finds no serious or critical violation on any page, light or dark', async () => {
    mkdirSync(SHOTS, { recursive: true });
    const found: AxeProblem[] = [];
    const rawLabels: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      const { page, problems } = await adminPage({ colorScheme: scheme });
      const visit = async (path: string, shot: string) => {
        const response = await page.goto(`${service.url}${path}`);
        expect(response?.status(), path).toBeLessThan(500);
        await chartsDrawn(page);
        found.push(...(await axeProblems(page, scheme)));
        rawLabels.push(...(await chartCodes(page)).map((code) => `${path}: ${code}`));
        if (scheme === 'dark') await page.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
      };
      await visit('/', 'index');
      for (const path of reportPages()) await visit(path, path.replace(/^\/reports\//, '').replace(/\?kind=/, '-'));
      await visit('/reports/no-such-report', 'not-found');

      // The stop pages: confirmation (from an idle row's "Stop…" link), a dry run's results, a scheduled stop.
      await page.goto(`${service.url}/reports/idle`);
      const ref = await page.locator('table.idle-table input[name="instance"]').first().getAttribute('value');
      expect(ref).toBeTruthy();
      await visit(`/actions/stop/confirm?instance=${encodeURIComponent(ref!)}`, 'stop-confirm');
      await page.getByLabel('Reason (kept in the audit log)').fill('accessibility check');
      await page.getByLabel(/Dry run/).check();
      await page.getByRole('button', { name: 'Stop now' }).click();
      await page.waitForURL(/\/actions\/stop$/);
      found.push(...(await axeProblems(page, scheme)));
      if (scheme === 'dark') await page.screenshot({ path: join(SHOTS, 'stop-results.png'), fullPage: true });
      // A stop after the grace period (another instance in each scheme): the "scheduled" page.
      await page.goto(`${service.url}/reports/idle`);
      const later = await page.locator('table.idle-table input[name="instance"]').nth(scheme === 'light' ? 1 : 2).getAttribute('value');
      await page.goto(`${service.url}/actions/stop/confirm?instance=${encodeURIComponent(later!)}`);
      await page.getByLabel('Reason (kept in the audit log)').fill('accessibility check');
      await page.getByRole('button', { name: /Stop after the grace period/ }).click();
      await page.waitForURL(/\/actions\/stop\/schedule$/);
      await expect(page.locator('h1').textContent()).resolves.toMatch(/scheduled/);
      found.push(...(await axeProblems(page, scheme)));
      await visit('/reports/scheduled-stops', 'scheduled-stops-with-one');
      await page.context().close();

      // Signed out: the sign-in page.
      const context = await browser.newContext({ colorScheme: scheme });
      const login = await context.newPage();
      await login.goto(`${service.url}/login`);
      found.push(...(await axeProblems(login, scheme)));
      if (scheme === 'dark') await login.screenshot({ path: join(SHOTS, 'login.png'), fullPage: true });
      await context.close();
      expect(problems).toEqual([]);
    }
    expect(found).toEqual([]);
    // Human labels on every chart: no kind code or API field name as a label or series.
    expect(rawLabels).toEqual([]);
  }, 600_000);

  it('gives a group one colour on every chart and page, at most 8 slices with "other" summed exactly, and human labels', async () => {
    const { page, problems } = await adminPage();
    const seen = new Map<string, Set<string>>();
    const record = (charts: Awaited<ReturnType<typeof chartColours>>) => {
      for (const chart of charts) for (const [label, colour] of Object.entries(chart.colours)) seen.set(label, (seen.get(label) ?? new Set()).add(colour));
    };
    for (const path of ['/reports/overview?by=tag:team', '/reports/cost?by=tag:team', '/reports/trend?by=tag:team', '/reports/trend?by=kind', '/reports/cost?by=kind']) {
      await page.goto(`${service.url}${path}`);
      await chartsDrawn(page);
      record(await chartColours(page));
    }
    // The demo's teams appear on several charts (EUR and USD, cost and trend): each in one colour.
    expect(seen.get('ml')?.size).toBe(1);
    const shared = [...seen].filter(([label]) => label !== 'other' && !label.startsWith('other ('));
    expect(shared.length).toBeGreaterThan(3);
    for (const [label, colours] of shared) expect([label, colours.size]).toEqual([label, 1]);
    // Kinds by their names, never their codes.
    expect(seen.has('Kubernetes clusters')).toBe(true);
    for (const code of ['k8s_price', 'instance', 'cluster']) expect(seen.has(code)).toBe(false);

    // Flavors are many: the share chart names seven and sums the rest.
    await page.goto(`${service.url}/reports/cost?by=flavor`);
    await chartsDrawn(page);
    const doughnuts = (await page.evaluate(() =>
      [...(globalThis as any).document.querySelectorAll('canvas')].map((c: any) => {
        const chart = (globalThis as any).Chart.getChart(c);
        return { type: chart.config.type, labels: chart.data.labels, data: chart.data.datasets[0].data, currency: chart.options.plugins.tooltip ? c.id.split('-').pop() : '' };
      }),
    )) as Array<{ type: string; labels: string[]; data: number[]; currency: string }>;
    const shares = doughnuts.filter((d) => d.type === 'doughnut');
    expect(shares.length).toBeGreaterThan(0);
    const json = (await (await page.request.get(`${service.url}/api/reports/cost?by=flavor&limit=1000`)).json()) as { rows: Array<{ group: string; currency: string | null; price_per_hour: string | null }> };
    let withOther = 0;
    for (const chart of shares) {
      expect(chart.labels.length).toBeLessThanOrEqual(8);
      const other = chart.labels.findIndex((l) => /^other \(\d+\)$/.test(l));
      if (other < 0) continue;
      withOther++;
      // "other" = every group of that currency not named, summed exactly from the JSON's decimals.
      const named = new Set(chart.labels.slice(0, other));
      const rest = json.rows.filter((r) => r.currency === chart.currency && r.price_per_hour !== null && !named.has(r.group));
      expect(chart.labels[other]).toBe(`other (${rest.length})`);
      expect(chart.data[other]).toBe(Number(rest.reduce((sum, r) => addDecimal(sum, r.price_per_hour!), '0')));
    }
    expect(withOther).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('switches to dark mode with the toggle, keeps it across pages, and re-colours the charts', async () => {
    const { page, problems } = await adminPage({ colorScheme: 'light' });
    const background = () => page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor as string);
    const legendColour = () => page.evaluate(() => (globalThis as any).Chart.getChart((globalThis as any).document.querySelector('canvas')).options.color as string);
    await page.goto(`${service.url}/reports/overview`);
    await chartsDrawn(page);
    const light = await background();
    const lightLegend = await legendColour();
    await expect(page.getByRole('button', { name: 'Auto' }).getAttribute('aria-pressed')).resolves.toBe('true');

    await page.getByRole('button', { name: 'Dark' }).click();
    const dark = await background();
    expect(dark).not.toBe(light);
    expect(await page.getByRole('button', { name: 'Dark' }).getAttribute('aria-pressed')).toBe('true');
    expect(await legendColour()).not.toBe(lightLegend);

    // Remembered: the next page opens dark, its charts too.
    await page.getByRole('navigation', { name: 'Reports' }).getByRole('link', { name: 'Trend' }).click();
    await page.waitForURL(/\/reports\/trend/);
    await chartsDrawn(page);
    expect(await background()).toBe(dark);
    expect(await page.evaluate(() => (globalThis as any).document.documentElement.dataset.theme)).toBe('dark');
    expect(await legendColour()).not.toBe(lightLegend);
    await page.screenshot({ path: join(SHOTS, 'trend-toggled.png'), fullPage: true });

    // Auto follows the system again (light here).
    await page.getByRole('button', { name: 'Auto' }).click();
    expect(await background()).toBe(light);
    await page.reload();
    expect(await background()).toBe(light);

    // The keyboard reaches the toggle.
    await page.getByRole('button', { name: 'Light' }).focus();
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.textContent)).toBe('Dark');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('prints a report on A4: no navigation or controls, the filters as text, totals and charts', async () => {
    const { page, problems } = await adminPage();
    await page.goto(`${service.url}/reports/cost?by=tag:team`);
    await chartsDrawn(page);
    await page.emulateMedia({ media: 'print' });
    await expect(page.locator('nav.sidebar').isVisible()).resolves.toBe(false);
    await expect(page.locator('.exports').isVisible()).resolves.toBe(false);
    await expect(page.locator('.theme-toggle').isVisible()).resolves.toBe(false);
    await expect(page.locator('form.filters').first().isVisible()).resolves.toBe(false);
    await expect(page.locator('.print-filters').textContent()).resolves.toMatch(/^Filters: Period: .+; Group by: tag team$/);
    await expect(page.locator('table.report-table tfoot tr').first().isVisible()).resolves.toBe(true);
    await expect(page.locator('figure.chart canvas').first().isVisible()).resolves.toBe(true);
    // Dark on screen, light on paper.
    await page.emulateMedia({ media: 'screen' });
    await page.getByRole('button', { name: 'Dark' }).click();
    const screenBackground = await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor as string);
    await page.emulateMedia({ media: 'print' });
    expect(await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor)).toBe('rgb(255, 255, 255)');
    expect(screenBackground).not.toBe('rgb(255, 255, 255)');
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    await page.emulateMedia({ media: 'screen' });
    await expect(page.locator('nav.sidebar').isVisible()).resolves.toBe(true);
    await expect(page.locator('.print-filters').isVisible()).resolves.toBe(false);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('says "Drawing the chart…" until Chart.js has drawn it', async () => {
    const { page, problems } = await adminPage();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/static/chart.umd.js', async (route) => {
      await held;
      await route.continue();
    });
    // The deferred chart script holds DOMContentLoaded: wait for the parsed figures instead.
    await page.goto(`${service.url}/reports/overview`, { waitUntil: 'commit' });
    await page.locator('figure.chart:not(.chart-empty) .chart-canvas').first().waitFor({ state: 'attached' });
    const placeholder = () =>
      page.evaluate(() => {
        const box = (globalThis as any).document.querySelector('figure.chart:not(.chart-empty) .chart-canvas');
        return (globalThis as any).getComputedStyle(box, '::before').content as string;
      });
    expect(await placeholder()).toBe('"Drawing the chart…"');
    release();
    await chartsDrawn(page);
    expect(await placeholder()).toBe('none');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('on a phone, thins a crowded axis deliberately and says so under the chart', async () => {
    const context = await browser.newContext({ storageState: signedIn, viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    // The trend's cost per day draws every day of its range (the overview's starts at the first covered day).
    await page.goto(`${service.url}/reports/trend?by=tag:team&days=30`);
    await chartsDrawn(page);
    const axis = (await page.evaluate(() => {
      const chart = (globalThis as any).Chart.getChart((globalThis as any).document.getElementById('chart-daily-cost-EUR'));
      return { labels: chart.data.labels.length, shown: chart.scales.x.ticks.filter((t: any) => t.label !== '').length };
    })) as { labels: number; shown: number };
    expect(axis.labels).toBe(30);
    const note = page.locator('#chart-daily-cost-EUR-note');
    await expect(note.isVisible()).resolves.toBe(true);
    const step = Number(/every (\d+)(st|nd|rd|th) of the 30 points/.exec((await note.textContent()) ?? '')?.[1]);
    expect(step).toBeGreaterThan(1);
    // Labels 1, 1 + step, 1 + 2 step, ...: as many as fit.
    expect(axis.shown).toBe(Math.ceil(30 / step));

    // At 1440 px every one of the 30 days is named, with no note.
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.waitForFunction(() => (globalThis as any).document.getElementById('chart-daily-cost-EUR-note').hidden === true);
    const wide = await page.evaluate(() => (globalThis as any).Chart.getChart((globalThis as any).document.getElementById('chart-daily-cost-EUR')).scales.x.ticks.filter((t: any) => t.label !== '').length);
    expect(wide).toBe(30);
    await context.close();
  });
});

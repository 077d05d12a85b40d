import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { appendAudit } from '../../src/actions/audit.js';
import { scheduleStops } from '../../src/actions/scheduled-stops.js';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { INVENTORY_KINDS } from '../../src/reports/inventory-kinds.js';
import { allReports } from '../../src/reports/index.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from '../reports/helpers.js';

/*
 * Tables in headless Chromium (issue 16 items 1 and 3): every report and every inventory kind of
 * the demo company at 1440x900 and at 390 px, the column choice in the URL, the copy button, and
 * the changes report's diff. (The tsconfig has no DOM types: page functions use `any`.)
 */

const PAGES = [
  ...allReports()
    .filter((r) => r.name !== 'inventory')
    .map((r) => `/reports/${r.name}`),
  ...INVENTORY_KINDS.map((kind) => `/reports/inventory?kind=${kind}`),
];

/** The page's and each table box's scroll width against its visible width. */
function widths(page: Page) {
  return page.evaluate(() => {
    const doc = (globalThis as any).document;
    return {
      page: { scroll: doc.documentElement.scrollWidth as number, client: doc.documentElement.clientWidth as number },
      tables: [...doc.querySelectorAll('.table-wrap')].map((w: any) => ({ scroll: w.scrollWidth as number, client: w.clientWidth as number })),
    };
  });
}

describe.skipIf(skipBrowserTests)('tables of the demo in headless Chromium', () => {
  let service: RunningService;
  let browser: Browser;
  let scheduled: { project_id: number; region_id: number; resource_id: string; name: string };

  beforeAll(async () => {
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 1 });
    await service.ready;
    await service.collection.idle();
    // Audit rows: one stop with its task, one dry run without any (its task ids are empty).
    const base = { actor: 'olivia', role: 'operator' as const, action: 'stop' as const, instanceId: '0b7f5c3e-1d2a-4c8b-9e6f-123456789abc', projectId: 380101, regionId: 38, reason: 'idle for a week', error: null };
    await appendAudit(service.database, { ...base, at: new Date(), dryRun: false, result: 'stopped', taskIds: ['5d0e8a54-7f61-4b5e-a0c1-9b2f3e4d5c6b'] });
    await appendAudit(service.database, { ...base, at: new Date(), dryRun: true, result: 'would_stop', taskIds: [] });
    // A stop scheduled for a running instance (audited too, without a task): the scheduled stops
    // page has a row, and the inventory shows the due stop beside the row's action.
    const running = (await (await fetch(`${service.url}/api/reports/inventory?kind=instances&status=ACTIVE&sort=name&limit=1`)).json()) as { rows: Array<{ project_id: number; region_id: number; resource_id: string; name: string }> };
    scheduled = running.rows[0]!;
    const result = await scheduleStops(
      { db: service.database, config },
      { actor: { name: 'olivia', role: 'operator' }, reason: 'idle, warn first', refs: [{ projectId: scheduled.project_id, regionId: scheduled.region_id, instanceId: scheduled.resource_id }] },
    );
    expect(result.scheduled).toHaveLength(1);
    browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await service?.stop();
  });

  it('fits every report and inventory kind into 1440x900 without sideways scrolling, identifying column sticky', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    const tablesSeen: string[] = [];
    for (const path of PAGES) {
      await page.goto(`${service.url}${path}`);
      const w = await widths(page);
      expect(w.page.scroll, `${path} scrolls sideways`).toBeLessThanOrEqual(w.page.client);
      // The default column set is chosen for this screen: the table itself fits too.
      for (const t of w.tables) expect(t.scroll, `${path}: the table is wider than its box`).toBeLessThanOrEqual(t.client);
      if (w.tables.length === 0) continue;
      tablesSeen.push(path);
      const sticky = await page.evaluate(() => {
        const doc = (globalThis as any).document;
        const th = doc.querySelector('.report-table thead th.sticky-col');
        const td = doc.querySelector('.report-table tbody td.sticky-col');
        const style = (globalThis as any).getComputedStyle;
        return { th: th ? style(th).position : null, td: td ? style(td).position : null, left: td ? style(td).left : null };
      });
      expect(sticky, path).toMatchObject({ th: 'sticky', td: 'sticky' });
    }
    // Every page with rows in the demo drew a table (audit and scheduled stops included).
    expect(tablesSeen).toEqual(expect.arrayContaining(['/reports/overview', '/reports/focus', '/reports/audit', '/reports/scheduled-stops', '/reports/inventory?kind=instances', '/reports/idle']));
    expect(problems).toEqual([]);
    await page.context().close();
  }, 240_000);

  it('keeps every page at 390 px from scrolling sideways: the table scrolls in its own box, its first column and action stay', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 390, height: 844 });
    for (const path of PAGES) {
      await page.goto(`${service.url}${path}`);
      const w = await widths(page);
      expect(w.page.scroll, `${path} scrolls sideways at 390 px`).toBeLessThanOrEqual(w.page.client);
    }
    await page.goto(`${service.url}/reports/inventory?kind=instances`);
    const wrap = page.locator('.table-wrap').first();
    const w = await widths(page);
    expect(w.tables[0]!.scroll).toBeGreaterThan(w.tables[0]!.client);
    // Scroll the table (not the page) half way: the ID column and the "Stop…" link stay in view.
    const edges = await wrap.evaluate((el: any) => {
      el.scrollLeft = (el.scrollWidth - el.clientWidth) / 2;
      const box = el.getBoundingClientRect();
      const row = el.querySelector('tbody tr');
      const first = row.querySelector('td.sticky-col').getBoundingClientRect();
      const select = row.querySelector('td.select-col').getBoundingClientRect();
      const action = row.querySelector('td.action-col').getBoundingClientRect();
      return { scrolled: el.scrollLeft as number, box: [box.left, box.right], select: select.left, first: [first.left, first.right], action: [action.left, action.right] };
    });
    expect(edges.scrolled).toBeGreaterThan(0);
    expect(Math.abs(edges.select - edges.box[0])).toBeLessThanOrEqual(1);
    expect(edges.first[0]).toBeGreaterThanOrEqual(edges.box[0]);
    expect(edges.first[1]).toBeLessThan(edges.box[1]);
    expect(Math.abs(edges.action[1] - edges.box[1])).toBeLessThanOrEqual(1);
    await expect(page.locator('tbody tr').first().getByRole('link', { name: /^Stop / }).isVisible()).resolves.toBe(true);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 240_000);

  it('shows more columns through the URL, kept by sorting, and a chosen set through the column form', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${service.url}/reports/inventory?kind=instances`);
    const before = await page.locator('.report-table thead th[data-key]').count();
    await page.getByRole('link', { name: 'More columns' }).click();
    await page.waitForURL((url) => url.searchParams.get('cols') === 'all');
    const after = await page.locator('.report-table thead th[data-key]').count();
    expect(after).toBeGreaterThan(before);
    await expect(page.locator('.report-table thead th[data-key="first_seen"]').count()).resolves.toBe(1);
    // Every column is wider than the screen: the table scrolls in its box, the page does not.
    const w = await widths(page);
    expect(w.page.scroll).toBeLessThanOrEqual(w.page.client);

    // Sorting keeps the choice.
    await page.locator('.report-table thead th[data-key="name"] a').click();
    await page.waitForURL((url) => url.searchParams.get('sort') === 'name');
    expect(new URL(page.url()).searchParams.get('cols')).toBe('all');
    await expect(page.locator('.report-table thead th[data-key]').count()).resolves.toBe(after);

    // Back to the default set, then pick one more column with the form.
    await page.getByRole('link', { name: 'Default columns' }).click();
    await page.waitForURL((url) => !url.searchParams.has('cols'));
    expect(new URL(page.url()).searchParams.get('sort')).toBe('name');
    await page.locator('details.columns-picker summary').click();
    await page.getByRole('checkbox', { name: 'SSH key' }).check();
    await page.getByRole('button', { name: 'Show these columns' }).click();
    await page.waitForURL((url) => url.searchParams.getAll('cols').includes('ssh_key_name'));
    await expect(page.locator('.report-table thead th[data-key]').count()).resolves.toBe(before + 1);
    await expect(page.locator('.report-table thead th[data-key="ssh_key_name"]').count()).resolves.toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 120_000);

  it('shortens UUIDs to 8 characters with the full ID in the title, and the copy button copies it', async () => {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    const page = await context.newPage();
    await page.goto(`${service.url}/reports/inventory?kind=instances`);
    const cell = page.locator('.report-table tbody td.uuid').first();
    const full = (await cell.getAttribute('title'))!;
    expect(full).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await expect(cell.innerText()).resolves.toBe(`${full.slice(0, 8)}…`);
    const button = cell.getByRole('button', { name: `Copy ${full}` });
    await button.click();
    await page.waitForSelector('button.copy-button[data-copied="true"]');
    await expect(page.evaluate(() => (globalThis as any).navigator.clipboard.readText())).resolves.toBe(full);
    // Regions read as names, with the number in the title.
    const region = page.locator('.report-table tbody td.region').first();
    await expect(region.innerText()).resolves.toMatch(/^(Frankfurt-1|Luxembourg-2|Manassas-1)$/);
    await expect(region.getAttribute('title')).resolves.toMatch(/^Region \d+ \(/);
    await context.close();
  }, 60_000);

  it('shows a due stop beside the row\'s action when the scheduled stop column is hidden', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${service.url}/reports/inventory?kind=instances&q=${scheduled.resource_id}`);
    await expect(page.locator('.report-table thead th[data-key="scheduled_stop_at"]').count()).resolves.toBe(0);
    const action = page.locator('.report-table tbody tr').first().locator('td.action-col');
    await expect(action.innerText()).resolves.toMatch(/Stop due \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    await expect(action.locator('time').getAttribute('datetime')).resolves.toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);

  it('keeps audit rows compact: a dash for no task, the task ID shortened', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${service.url}/reports/audit`);
    const rows = page.locator('.report-table tbody tr');
    // The stop, the dry run, and the scheduling of a stop.
    await expect(rows.count()).resolves.toBe(3);
    const taskIndex = await page.locator('.report-table thead th').evaluateAll((ths: any[]) => ths.findIndex((th) => th.getAttribute('data-key') === 'task_ids'));
    const tasks = await rows.evaluateAll((trs: any[], i: number) => trs.map((tr) => (tr.children[i].innerText as string).trim()), taskIndex);
    expect(tasks.sort()).toEqual(['5d0e8a54…', '—', '—']);
    expect(await page.content()).not.toContain('>[]<');
    // One line each (at most two, for a wrapped reason): not the ~350 px rows of before.
    for (const height of await rows.evaluateAll((trs: any[]) => trs.map((tr) => tr.getBoundingClientRect().height as number))) expect(height).toBeLessThan(60);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});

describe.skipIf(skipBrowserTests)('the changes diff in headless Chromium', () => {
  let app: ReportsApp;
  let browser: Browser;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(testDatabases()[0]));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('shows each changed field with its old and new value, and tag changes as chips', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${app.base}/reports/changes?kind=instances&hours=6`);
    const row = page.locator('.report-table tbody tr', { has: page.locator('td', { hasText: /^i2$/ }) });
    const fields = await row.locator('table.diff tr').evaluateAll((trs: any[]) => trs.map((tr) => [...tr.children].map((c: any) => (c.innerText as string).trim())));
    expect(fields).toEqual([
      ['Status', 'ACTIVE', '→', 'SHUTOFF'],
      ['VM state', 'active', '→', 'stopped'],
    ]);
    // The old value struck through, the new one marked as inserted.
    await expect(row.locator('table.diff del').first().evaluate((el: any) => (globalThis as any).getComputedStyle(el).textDecorationLine)).resolves.toBe('line-through');
    const added = page.locator('.report-table tbody tr', { has: page.locator('td', { hasText: /^i1$/ }) }).locator('ul.tag-diff li.tag-added');
    await expect(added.count()).resolves.toBe(1);
    await expect(added.innerText()).resolves.toMatch(/^\+\s*(added\s*)?env\s*prod$/);
    expect(await page.content()).not.toMatch(/\{&quot;status&quot;|\{"status"/);
    const w = await widths(page);
    expect(w.page.scroll).toBeLessThanOrEqual(w.page.client);
    expect(problems).toEqual([]);
    await page.context().close();
  }, 60_000);
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { configWithUsers, PASSWORDS, startActionsApp, type ActionsApp } from '../auth/app.js';
import { clientOf, seedFromSimulator, startTestSimulator } from './helpers.js';
import { IDLE_RULE_TITLES } from '../../src/read-models/idle-rules.js';


describe.skipIf(skipBrowserTests)('stopping idle instances in headless Chromium', () => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;
  let browser: Browser;

  beforeAll(async () => {
    [db, sim] = await Promise.all([testDatabases()[0]!.open(), startTestSimulator()]);
    client = clientOf(sim);
    const config = await configWithUsers();
    await seedFromSimulator(db, sim, config);
    app = await startActionsApp({ db, config, client });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  async function login(page: Page, user: keyof typeof PASSWORDS): Promise<void> {
    await page.goto(`${app.url}/reports/idle`);
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('User name').fill(user);
    await page.getByLabel('Password').fill(PASSWORDS[user]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/reports\/idle$/);
  }

  it('an operator selects two idle instances, confirms, sees each result and the audit entries', async () => {
    const { page, problems } = await watchedPage(browser);
    await login(page, 'olivia');
    await expect(page.locator('.signed-in').textContent()).resolves.toContain('olivia');

    const boxes = page.locator('table.idle-table input[name="instance"]');
    expect(await boxes.count()).toBeGreaterThan(2);
    const chosen = [await boxes.nth(0).getAttribute('value'), await boxes.nth(1).getAttribute('value')] as string[];
    await boxes.nth(0).check();
    await boxes.nth(1).check();
    await page.getByRole('button', { name: 'Stop selected…' }).click();

    await page.waitForURL(/\/actions\/stop\/confirm$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Stop 2 instances?');
    expect(await page.locator('table.stop-plan tbody tr').evaluateAll((rows) => rows.map((r: any) => r.dataset.instance))).toEqual(chosen);
    await expect(page.locator('.irreversible').textContent()).resolves.toContain('cannot be undone');
    expect(chosen.every((ref) => sim.state.instance(ref.split(':')[2]!)!.status === 'ACTIVE')).toBe(true);

    await page.getByLabel('Reason (kept in the audit log)').fill('idle GPUs, agreed with the team');
    await page.getByRole('button', { name: 'Stop now' }).click();

    await page.waitForURL(/\/actions\/stop$/);
    await expect(page.locator('h1').textContent()).resolves.toBe('Stop results');
    expect(await page.locator('table.stop-results tbody tr td.result').allTextContents()).toEqual(['Stopped', 'Stopped']);
    expect(chosen.every((ref) => sim.state.instance(ref.split(':')[2]!)!.status === 'SHUTOFF')).toBe(true);

    await page.locator('main').getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL(/\/reports\/audit\?/);
    const auditText = await page.locator('table.report-table tbody').textContent();
    // Instance IDs show shortened, the whole ID in the cell's title (and its copy button).
    const auditIds = await page.locator('table.report-table tbody td.uuid').evaluateAll((tds: any[]) => tds.map((td) => td.getAttribute('title') as string));
    for (const ref of chosen) expect(auditIds).toContain(ref.split(':')[2]);
    expect(auditText).toContain('idle GPUs, agreed with the team');
    expect(await page.locator('table.report-table tbody tr').count()).toBe(2);

    // Back on the idle report, the stopped ones are gone at once.
    await page.goto(`${app.url}/reports/idle`);
    const remaining = await page.locator('table.idle-table input[name="instance"]').evaluateAll((els) => els.map((e: any) => e.value));
    expect(remaining).not.toContain(chosen[0]);
    expect(remaining).not.toContain(chosen[1]);

    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('a viewer finds no stop control', async () => {
    const { page, problems } = await watchedPage(browser);
    await login(page, 'alice');
    expect(await page.locator('table.idle-table tbody tr').count()).toBeGreaterThan(0);
    // (The column picker's check boxes are no stop control.)
    expect(await page.locator('input[type="checkbox"][name="instance"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: /Stop/ }).count()).toBe(0);
    expect(await page.locator('form[action^="/actions/"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Collect now' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('reads as people read it at 1440x900: whole reasons, regions by name, rule names on the confirmation and in the audit', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.setViewportSize({ width: 1440, height: 900 });
    await login(page, 'olivia');

    // Each reason whole: no ellipsis, nothing cut by the cell.
    const reasons = page.locator('table.idle-table tbody td.wrap');
    expect(await reasons.count()).toBeGreaterThan(0);
    const cells = await reasons.evaluateAll((tds: any[]) => tds.map((td) => ({ text: td.textContent.trim(), clipped: td.querySelector('.clip') !== null, overflow: td.scrollWidth - td.clientWidth })));
    expect(cells.some((c) => c.text.length > 32), 'a reason longer than what used to be cut').toBe(true);
    for (const cell of cells) {
      expect(cell.clipped, cell.text).toBe(false);
      expect(cell.overflow, cell.text).toBeLessThanOrEqual(0);
    }

    // Regions by name in the filter, never a bare number.
    const regionLabels = await page.locator('select[name="region"] option').allTextContents();
    expect(regionLabels.length).toBeGreaterThan(1);
    for (const label of regionLabels) expect(label.trim()).not.toMatch(/^\d+$/);

    // The confirmation names the rules as people say them.
    const titles = Object.values(IDLE_RULE_TITLES);
    await page.locator('table.idle-table input[name="instance"]').first().check();
    await page.getByRole('button', { name: 'Stop selected…' }).click();
    await page.waitForURL(/\/actions\/stop\/confirm$/);
    const rules = await page.locator('table.stop-plan .rule-list li').allTextContents();
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(titles.some((t) => rule.startsWith(`${t}: `)), rule).toBe(true);
      expect(rule).not.toMatch(/^[a-z_]+:/);
    }

    // And so does the audit entry.
    await page.getByLabel('Reason (kept in the audit log)').fill('readable rules check');
    await page.getByRole('button', { name: 'Stop now' }).click();
    await page.waitForURL(/\/actions\/stop$/);
    await page.goto(`${app.url}/reports/audit`);
    const audit = await page.locator('table.report-table tbody').textContent();
    expect(audit).toContain('readable rules check [idle rules: ');
    expect(titles.some((t) => audit!.includes(`[idle rules: ${t}: `))).toBe(true);

    expect(problems).toEqual([]);
    await page.context().close();
  });
});

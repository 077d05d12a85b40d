import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { clientOf, startTestSimulator } from '../actions/helpers.js';
import { configWithUsers, PASSWORDS, startActionsApp, type ActionsApp } from '../auth/app.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return (await page.evaluate(() =>
    (globalThis as any).axe
      .run((globalThis as any).document, { resultTypes: ['violations'] })
      .then((r: any) => r.violations.filter((v: any) => v.impact === 'serious' || v.impact === 'critical').map((v: any) => `${v.id}: ${v.nodes[0]?.target.join(' ')}`)),
  )) as string[];
}

/* A view saved on a report page as alice (shared), found and opened by olivia, deleted by adam (admin). */

describe.skipIf(skipBrowserTests).each(testDatabases())('saved views in Chromium on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;
  let browser: Browser;

  beforeAll(async () => {
    [db, sim, browser] = await Promise.all([open(), startTestSimulator(), launchChromium()]);
    client = clientOf(sim);
    app = await startActionsApp({ db, config: await configWithUsers(), client, savedViews: true });
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  const signIn = async (name: keyof typeof PASSWORDS, next: string) => {
    const watched = await watchedPage(browser);
    const { page } = watched;
    await page.goto(`${app.url}/login?next=${encodeURIComponent(next)}`);
    await page.getByLabel(/user/i).fill(name);
    await page.getByLabel(/password/i).fill(PASSWORDS[name]);
    await page.getByRole('button', { name: /sign in/i }).click();
    await page.waitForURL((url) => url.pathname + url.search === next);
    return watched;
  };

  it('saves a shared view from a report page; another user finds and opens it but cannot delete it; an admin can', async () => {
    const a = await signIn('alice', '/reports/idle?rule=expired');
    await a.page.getByText('Save view', { exact: true }).click();
    const form = a.page.locator('form.save-view-form');
    await form.getByLabel('Name').fill('Expired VMs (team)');
    await form.getByLabel('Shared with everyone').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await a.page.waitForURL((url) => url.pathname + url.search === '/reports/idle?rule=expired');
    await expect(a.page.locator('.flash').textContent()).resolves.toContain('View "Expired VMs (team)" saved and shared');
    expect(a.problems).toEqual([]);

    const b = await signIn('olivia', '/reports/audit');
    const menu = b.page.locator('details.nav-views');
    await menu.locator('summary').click();
    const link = menu.getByRole('link', { name: 'Expired VMs (team)' });
    await expect(link.isVisible()).resolves.toBe(true);
    expect(await axeViolations(b.page)).toEqual([]);
    await link.click();
    await b.page.waitForURL((url) => url.pathname + url.search === '/reports/idle?rule=expired');
    await b.page.goto(`${app.url}/views`);
    const row = b.page.locator('table.saved-views tr', { hasText: 'Expired VMs (team)' });
    await expect(row.getByRole('button', { name: /Delete/ }).count()).resolves.toBe(0);
    await expect(row.textContent()).resolves.toContain('owner or admin only');
    expect(await axeViolations(b.page)).toEqual([]);
    expect(b.problems).toEqual([]);

    const admin = await signIn('adam', '/views');
    const adminRow = admin.page.locator('table.saved-views tr', { hasText: 'Expired VMs (team)' });
    await adminRow.getByRole('button', { name: 'Delete view Expired VMs (team)' }).click();
    await admin.page.waitForURL((url) => url.pathname === '/views');
    await expect(admin.page.locator('.flash').textContent()).resolves.toContain('View "Expired VMs (team)" deleted.');
    await expect(admin.page.locator('table.saved-views tr', { hasText: 'Expired VMs (team)' }).count()).resolves.toBe(0);
    expect(admin.problems).toEqual([]);
  });
});

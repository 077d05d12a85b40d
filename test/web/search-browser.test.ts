import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runCollection } from '../../src/collect/index.js';
import type { Database } from '../../src/db/connection.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from '../reports/helpers.js';

/** The app's data as a collection from the simulator writes it (versions folded). */
async function collectFromSimulator(db: Database): Promise<void> {
  const sim = await startTestSimulator({ seed: 3 });
  const config = testConfig();
  const client = testClient(sim, config);
  try {
    expect((await runCollection(testDeps(db, sim, client, config))).status).toBe('succeeded');
  } finally {
    await client.close();
    await sim.close();
  }
}

/* The header's search box in headless Chromium: type an id, submit, follow the result to the inventory. */

describe.skipIf(skipBrowserTests).each(testDatabases())('header search in Chromium on $name', (database) => {
  let app: ReportsApp;
  let browser: Browser;
  let instance: { id: string; name: string };

  appTest.beforeAll(async ({ reportsApps }) => {
    const served = await reportsApps.open(database, { seed: collectFromSimulator, config: testConfig() });
    app = served.app;
    const [row] = await served.db.query<{ id: string; name: string }>(
      `select instance_id as id, name from instances where name is not null
        and snapshot_id = (select max(id) from snapshots where kind = 'instance' and complete) order by instance_id limit 1`,
    );
    instance = row!;
  });
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  appTest('finds an instance typed into the header box and opens it in the inventory', async () => {
    const { page, problems } = await watchedPage(browser);
    await page.goto(`${app.base}/reports/overview`);
    const box = page.getByRole('search').getByLabel('Search');
    await box.fill(instance.id.slice(0, 8));
    await box.press('Enter');
    await page.waitForURL(/\/search\?q=/);
    const link = page.locator('table.search-results a', { hasText: instance.id });
    await expect(link.count()).resolves.toBe(1);
    await link.click();
    await page.waitForURL(/\/reports\/inventory\?kind=instances&q=/);
    await expect(page.locator('main table').first().textContent()).resolves.toContain(instance.name);
    expect(problems).toEqual([]);
  });
});

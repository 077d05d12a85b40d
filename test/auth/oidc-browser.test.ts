import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser as Chromium } from 'playwright-core';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { clientOf, seedFromSimulator, startTestSimulator } from '../actions/helpers.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { configWithUsers, startActionsApp, type ActionsApp } from './app.js';
import { OIDC_ENV, oidcFile, reservePort, startTestProvider, type TestProvider } from './oidc-provider.js';

describe.skipIf(skipBrowserTests).each(testDatabases())('OpenID Connect sign-in in headless Chromium on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;
  let provider: TestProvider;
  let chromium: Chromium;

  beforeAll(async () => {
    const slot = await reservePort();
    const redirect = `${slot.url}/auth/oidc/callback`;
    [db, sim, provider, chromium] = await Promise.all([open(), startTestSimulator(), startTestProvider(redirect, { lead: { groups: ['ml-leads'] } }), launchChromium()]);
    client = clientOf(sim);
    // Password users too: the login page offers both.
    const config = await configWithUsers(oidcFile(provider.issuer, redirect), OIDC_ENV);
    await seedFromSimulator(db, sim, config);
    app = await startActionsApp({ db, config, client, listening: slot });
  }, 120_000);
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close(), provider?.close()]);
  });

  it('clicks "Sign in with Example SSO", signs in at the provider, and lands on the page asked for, signed in', async () => {
    const { page, problems } = await watchedPage(chromium);
    await page.goto(`${app.url}/reports/idle`);
    await page.waitForURL(/\/login\?next=/);
    await expect(page.getByLabel('Password').count()).resolves.toBe(1);
    await page.getByRole('link', { name: 'Sign in with Example SSO' }).click();

    await page.waitForURL((url) => url.origin === provider.issuer);
    await page.getByPlaceholder('Enter any login').fill('lead');
    await page.getByPlaceholder('and password').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();

    await page.waitForURL(`${app.url}/reports/idle`);
    await expect(page.locator('.signed-in').innerText()).resolves.toBe('Signed in as lead (operator, sees team = ml)');
    // The provider's own pages (their web font, from no network here) are not the app's problems.
    expect(problems.filter((p) => p.includes(app.url))).toEqual([]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/login\?logged_out=1$/);
    await page.goto(`${app.url}/reports/idle`);
    await page.waitForURL(/\/login\?next=/);
  });
});

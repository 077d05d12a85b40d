/**
 * Report page bodies kept per cached result (src/web/page-bodies.ts): a page served again while
 * the report cache holds its result reuses the body, yet a new data version renders anew, and
 * each role and user gets its own page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { allReports } from '../../src/reports/index.js';
import { createWebApp } from '../../src/web/app.js';
import { createWebAuth } from '../../src/web/auth.js';
import { viewsDir } from '../../src/web/paths.js';
import { customViewTemplate, keptBodyTemplate } from '../../src/web/render.js';
import { siteSettingsOf } from '../../src/web/site.js';
import { Browser, configWithUsers, PASSWORDS } from '../auth/app.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { NOW, seedKnownDataset, T3 } from '../reports/fixture.js';
import { startReportsApp, testConfig, type ReportsApp } from '../reports/helpers.js';

for (const target of testDatabases()) {
  describe(`kept report page bodies (${target.name})`, () => {
    let db: Database;
    const apps: ReportsApp[] = [];

    beforeAll(async () => {
      db = await target.open();
    });
    afterEach(async () => {
      for (const app of apps.splice(0)) await app.close();
    });
    afterAll(async () => {
      await db?.close();
    });

    const page = async (base: string, path: string) => {
      const res = await request(`${base}${path}`);
      expect(res.statusCode).toBe(200);
      return res.body.text();
    };

    it('renders the page anew when the data version changes, as a fresh app renders it', async () => {
      await seedKnownDataset(db);
      const config = testConfig();
      const app = await startReportsApp(() => ({ db, config, now: NOW }));
      apps.push(app);
      const before = await page(app.base, '/reports/overview');
      expect(await page(app.base, '/reports/overview')).toBe(before);
      // Another query of the same result is its own page.
      expect(await page(app.base, '/reports/overview?sort=cost&dir=asc')).not.toBe(before);

      // The latest snapshots go (as pruning or a failed finalise would): a new data version.
      await db.execute('update snapshots set complete = false where taken_at = $1', [T3]);
      const after = await page(app.base, '/reports/overview');
      expect(after).not.toBe(before);
      // The same as an app whose report cache has never seen this database and configuration.
      const freshConfig = testConfig();
      const fresh = await startReportsApp(() => ({ db, config: freshConfig, now: NOW }));
      apps.push(fresh);
      expect(after).toBe(await page(fresh.base, '/reports/overview'));
    });

    it('gives each role and user its own page of the same cached result', async () => {
      await db.execute('update snapshots set complete = false');
      const config: Config = await configWithUsers();
      const app = createWebApp({
        reports: allReports(),
        context: () => ({ db, config, now: NOW }),
        logger: silentLogger(),
        demo: false,
        secret: config.auth.sessionSecret ?? undefined,
        // No data yet: the empty table tells admins to collect, others to wait.
        status: async () => ({ lastGoodAt: null, staleScopes: [], running: false }),
        collectNow: async () => ({ runId: 1, status: 'running' }),
        auth: createWebAuth({ config, db, logger: silentLogger() }),
        site: siteSettingsOf(config),
      });
      const { url: base, close } = await listenOnFreePort(app);
      apps.push({ base, close });

      const pages: Record<string, string> = {};
      for (const [name, password] of [['adam', PASSWORDS.adam], ['alice', PASSWORDS.alice], ['olivia', PASSWORDS.olivia]] as const) {
        const browser = new Browser(base);
        expect((await browser.login(name, password, '/reports/overview')).status).toBe(303);
        const answer = await browser.get('/reports/overview');
        expect(answer.status).toBe(200);
        pages[name] = answer.body;
        // Again, now from the kept body: the same page but for this request's CSRF token.
        const again = await browser.get('/reports/overview');
        expect(again.body.replace(/name="_csrf" value="[^"]+"/g, '')).toBe(answer.body.replace(/name="_csrf" value="[^"]+"/g, ''));
      }
      expect(pages.adam).toContain('Signed in as <strong>adam</strong> (admin)');
      expect(pages.adam).toContain('Use “Collect now” above, or wait for the schedule.');
      expect(pages.alice).toContain('Signed in as <strong>alice</strong> (viewer)');
      expect(pages.alice).toContain('The first collection runs on its schedule.');
      expect(pages.alice).not.toContain('Collect now');
      expect(pages.olivia).toContain('Signed in as <strong>olivia</strong> (operator)');
      expect(pages.olivia).not.toContain('adam');
    });
  });
}

/** Every template `template` includes, itself first, following includes to the end. */
function withIncludes(template: string, seen = new Set<string>()): Set<string> {
  if (seen.has(template)) return seen;
  seen.add(template);
  const text = readFileSync(join(viewsDir, `${template}.eta`), 'utf8');
  for (const [, name] of text.matchAll(/include\('\/([^']+)'/g)) withIncludes(name!, seen);
  return seen;
}

describe('which report pages keep their bodies', () => {
  // A kept body is served to every user with the same view of the page: one that draws a form
  // would carry its first user's CSRF token to the others; one that draws none should be kept
  // (the overview, the first screen, had lost it when it got a view of its own).
  it('keeps the body of every cached report page that draws no form, and of none that draws one', () => {
    // Only a cached result is an owner a body can be kept for (report-routes.ts).
    const kept = allReports().filter((report) => report.cached).map((report) => {
      const template = report.view ? customViewTemplate(report.view) : 'pages/report';
      const body = keptBodyTemplate(template);
      const drawsForm = [...withIncludes(body ?? template)].some((t) => t === 'partials/csrf');
      return { report: report.name, kept: body !== undefined, drawsForm };
    });
    expect(kept.filter((k) => k.kept === k.drawsForm)).toEqual([]);
    expect(kept.find((k) => k.report === 'overview')?.kept).toBe(true);
  });
});

/**
 * The reports web app over a fresh, seeded test database, as a file-scoped vitest fixture.
 *
 * `reportsApps.open(database, setup)` opens `database` (one of testDatabases(), PGlite when left
 * out), seeds it (the known dataset of test/reports/fixture.ts unless `setup.seed` says otherwise),
 * and starts the web app with every report over it on a free loopback port. Everything opened
 * through the fixture is closed after the file's last test (app first, then its database), also
 * when a test failed.
 *
 *   import { appTest } from '../helpers/reports-app.js';
 *
 *   describe.each(testDatabases())('reports over periods on $name', (database) => {
 *     let db: Database;
 *     let app: ReportsApp;
 *     appTest.beforeAll(async ({ reportsApps }) => {
 *       ({ db, app } = await reportsApps.open(database, { seed: seedPeriods, config: periodsConfig(), now: PERIODS_NOW }));
 *     });
 *
 *     it('...', async () => { const res = await request(`${app.base}/api/reports/cost`); ... });
 *   });
 *
 * Tests may also take the fixture themselves: `appTest('...', async ({ reportsApps }) => ...)`.
 */
import { test } from 'vitest';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { NOW, seedKnownDataset, type Seeded } from '../reports/fixture.js';
import { startReportsApp, testConfig, type Ctx, type ReportsApp } from '../reports/helpers.js';
import { testDatabases, type TestDatabase } from './databases.js';

export interface ReportsAppSetup<S> {
  /** Fills the fresh database; what it returns is `seeded`. Default: seedKnownDataset. */
  seed?: (db: Database) => Promise<S>;
  /** The configuration; a function is asked at every request (a test may change it). Default: testConfig(). */
  config?: Config | (() => Config);
  /** The reports' clock; a function is asked at every request. Default: NOW of the known dataset. */
  now?: Date | (() => Date);
}

export interface ServedReports<S> {
  db: Database;
  /** The app: `app.base` is http://127.0.0.1:<port>. */
  app: ReportsApp;
  /** What the seed returned. */
  seeded: S;
  /** The context the app's reports run in, as it is now (to run a report directly). */
  context(): Ctx;
}

export interface ReportsApps {
  open<S = Seeded>(database?: TestDatabase, setup?: ReportsAppSetup<S>): Promise<ServedReports<S>>;
}

export const appTest = test.extend<{ $file: { reportsApps: ReportsApps } }>({
  reportsApps: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const closers: Array<() => Promise<void>> = [];
      await use({
        async open<S>(database: TestDatabase = testDatabases()[0]!, setup: ReportsAppSetup<S> = {}): Promise<ServedReports<S>> {
          const db = await database.open();
          try {
            const seeded = setup.seed ? await setup.seed(db) : ((await seedKnownDataset(db)) as S);
            const config = setup.config ?? testConfig();
            const now = setup.now ?? NOW;
            const context = (): Ctx => ({
              db,
              config: typeof config === 'function' ? config() : config,
              now: typeof now === 'function' ? now() : now,
            });
            const app = await startReportsApp(context);
            closers.push(async () => {
              try {
                await app.close();
              } finally {
                await db.close();
              }
            });
            return { db, app, seeded, context };
          } catch (err) {
            await db.close();
            throw err;
          }
        },
      });
      const errors: unknown[] = [];
      for (const close of closers.reverse()) await close().catch((err: unknown) => errors.push(err));
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1) throw new AggregateError(errors, 'closing the reports apps failed');
    },
    { scope: 'file' },
  ],
});

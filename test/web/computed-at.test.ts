/**
 * A cached report result says when its figures were computed: the JSON's generated_at and the
 * page's "Figures as of" are the computation's time, not the (later) request's.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset } from '../reports/fixture.js';
import { startReportsApp, testConfig, type ReportsApp } from '../reports/helpers.js';

const [pglite] = testDatabases();

describe('when cached figures were computed', () => {
  let db: Database;
  let app: ReportsApp;
  let base: string;
  let now = NOW;

  beforeAll(async () => {
    db = await pglite!.open();
    await seedKnownDataset(db);
    const config = testConfig();
    app = await startReportsApp(() => ({ db, config, now }));
    base = app.base;
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const json = async (path: string) => JSON.parse(await (await request(`${base}${path}`)).body.text()) as { generated_at: string };

  it('reports the computation time of a result served from the cache', async () => {
    now = NOW;
    expect((await json('/api/reports/cost?by=project')).generated_at).toBe(NOW.toISOString());
    now = new Date(NOW.getTime() + 30_000);
    expect((await json('/api/reports/cost?by=project')).generated_at).toBe(NOW.toISOString());
    const page = await (await request(`${base}/reports/cost?by=project`)).body.text();
    expect(page).toContain(`Figures as of <time datetime="${now.toISOString()}">`);
    // A report that is not cached computes at every request.
    expect((await json('/api/reports/collection-health')).generated_at).toBe(now.toISOString());
  });
});

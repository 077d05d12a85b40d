/**
 * A cached report result says when its figures were computed: the JSON's generated_at and the
 * page's "Figures as of" are the computation's time, not the (later) request's; within the cache
 * window every format is computed for that one instant.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { NOW } from '../reports/fixture.js';

const [pglite] = testDatabases();

describe('when cached figures were computed', () => {
  let base: string;
  let now = NOW;

  appTest.beforeAll(async ({ reportsApps }) => {
    base = (await reportsApps.open(pglite, { now: () => now })).app.base;
  });

  const json = async (path: string) => JSON.parse(await (await request(`${base}${path}`)).body.text()) as { generated_at: string };

  it('reports the computation time of a result served from the cache', async () => {
    now = NOW;
    expect((await json('/api/reports/cost?by=project')).generated_at).toBe(NOW.toISOString());
    now = new Date(NOW.getTime() + 30_000);
    expect((await json('/api/reports/cost?by=project')).generated_at).toBe(NOW.toISOString());
    // The page, computed later but within the window at the same data version, is as of the same instant.
    const page = await (await request(`${base}/reports/cost?by=project`)).body.text();
    expect(page).toContain(`Figures as of <time datetime="${NOW.toISOString()}">`);
    // A report that is not cached computes at every request.
    expect((await json('/api/reports/collection-health')).generated_at).toBe(now.toISOString());
    // Past the window, the next answer is computed for a new instant.
    now = new Date(NOW.getTime() + 61_000);
    const later = await (await request(`${base}/reports/cost?by=project&limit=7`)).body.text();
    expect(later).toContain(`Figures as of <time datetime="${now.toISOString()}">`);
  });
});

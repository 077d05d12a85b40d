/**
 * A cached report result says when its figures were computed: the JSON's generated_at and the
 * page's "Figures as of" are the computation's time, not the (later) request's.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { allReports } from '../../src/reports/index.js';
import { createWebApp } from '../../src/web/app.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset } from '../reports/fixture.js';
import { testConfig } from '../reports/helpers.js';

const [pglite] = testDatabases();

describe('when cached figures were computed', () => {
  let db: Database;
  let server: Server;
  let base: string;
  let now = NOW;

  beforeAll(async () => {
    db = await pglite!.open();
    await seedKnownDataset(db);
    const config = testConfig();
    const app = createWebApp({ reports: allReports(), context: () => ({ db, config, now }), logger: silentLogger(), demo: false });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
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

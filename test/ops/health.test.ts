import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database, type Queryable } from '../../src/db/connection.js';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../src/db/migrate.js';
import { collectionAllowanceMs, longestGapMs } from '../../src/ops/allowance.js';
import { createReadinessCheck, healthRouter, type HealthDeps } from '../../src/ops/health.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';

const HOUR = 3_600_000;

async function serveHealth(deps: HealthDeps) {
  const app = express();
  app.use(healthRouter(deps));
  const { url: base, close } = await listenOnFreePort(app);
  return {
    get: async (path: string) => {
      const res = await fetch(base + path);
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    },
    close,
  };
}

const fresh = () => Promise.resolve(new Date(Date.now() - 5 * 60_000));

describe.each(testDatabases())('readiness ($name)', ({ open }) => {
  let database: Database;
  beforeAll(async () => {
    database = await open();
  });
  afterAll(async () => {
    await database?.close();
  });

  const deps = (over: Partial<HealthDeps> = {}): HealthDeps => ({
    database,
    lastGoodCollectionAt: fresh,
    startedAt: new Date(Date.now() - 10 * HOUR),
    collectionMaxAgeMs: 2 * HOUR,
    ...over,
  });

  it('answers /healthz 200 and /readyz 200 naming every check when all is well', async () => {
    const server = await serveHealth(deps());
    try {
      const health = await server.get('/healthz');
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok' });
      expect(typeof health.body.uptime_s).toBe('number');

      const ready = await server.get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe('ready');
      expect(ready.body.checks.database).toMatchObject({ ok: true });
      expect(typeof ready.body.checks.database.ms).toBe('number');
      expect(ready.body.checks.migrations).toMatchObject({ ok: true });
      expect(ready.body.checks.migrations.applied).toBeGreaterThan(0);
      expect(ready.body.checks.collection).toMatchObject({ ok: true, max_age_s: 7200 });
      expect(ready.body.checks.collection.age_s).toBeGreaterThanOrEqual(300);
    } finally {
      await server.close();
    }
  });

  it('is not ready when the build ships a migration the database lacks', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'ct-migrations-'));
    try {
      cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
      const journalPath = join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ when: number; tag: string; idx: number }> };
      const last = journal.entries.at(-1)!;
      journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag: '9999_future' });
      writeFileSync(journalPath, JSON.stringify(journal));
      const result = await createReadinessCheck(deps({ migrationsFolder: folder }))();
      expect(result.status).toBe('not_ready');
      expect(result.checks.migrations).toMatchObject({ ok: false, expected: '9999_future' });
      expect(String(result.checks.migrations.error)).toMatch(/pending/);
      expect(result.checks.database.ok).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('is not ready when the database was never migrated', async () => {
    const bare = await open({ migrate: false });
    try {
      const result = await createReadinessCheck(deps({ database: bare }))();
      expect(result.status).toBe('not_ready');
      expect(result.checks.database.ok).toBe(true);
      expect(result.checks.migrations).toMatchObject({ ok: false, applied: 0 });
      expect(String(result.checks.migrations.error)).toMatch(/never been migrated/);
    } finally {
      await bare.close();
    }
  });

  it('judges the last good collection against its allowance, with a start-up grace', async () => {
    const check = (over: Partial<HealthDeps>) => createReadinessCheck(deps(over))();
    const stale = () => Promise.resolve(new Date(Date.now() - 3 * HOUR));

    const tooOld = await check({ lastGoodCollectionAt: stale });
    expect(tooOld.status).toBe('not_ready');
    expect(tooOld.checks.collection).toMatchObject({ ok: false });
    expect(String(tooOld.checks.collection.error)).toMatch(/old \(allowed 7200 s\)/);

    const noneYetButJustStarted = await check({ lastGoodCollectionAt: async () => null, startedAt: new Date(Date.now() - 60_000) });
    expect(noneYetButJustStarted.status).toBe('ready');
    expect(noneYetButJustStarted.checks.collection).toMatchObject({ ok: true, last_good_at: null });

    const noneForHours = await check({ lastGoodCollectionAt: async () => null });
    expect(noneForHours.status).toBe('not_ready');
    expect(String(noneForHours.checks.collection.error)).toMatch(/no successful collection/);

    const staleButJustRestarted = await check({ lastGoodCollectionAt: stale, startedAt: new Date(Date.now() - 60_000) });
    expect(staleButJustRestarted.checks.collection).toMatchObject({ ok: true });

    const failing = await check({ lastGoodCollectionAt: () => Promise.reject(new Error('status query failed')) });
    expect(failing.status).toBe('not_ready');
    expect(failing.checks.collection).toMatchObject({ ok: false, error: 'status query failed' });
  });

  it('is not ready, and still alive, once the database is closed', async () => {
    const doomed = await open();
    const server = await serveHealth(deps({ database: doomed }));
    try {
      expect((await server.get('/readyz')).status).toBe(200);
      await doomed.close();
      const ready = await server.get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.status).toBe('not_ready');
      expect(ready.body.checks.database.ok).toBe(false);
      expect(ready.body.checks.database.error).toBeTruthy();
      expect(ready.body.checks.migrations.error).toMatch(/not checked/);
      expect((await server.get('/healthz')).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('readiness with a database that hangs (simulated: a query that never answers)', () => {
  it('gives up after the timeout and shares one ping between concurrent probes', async () => {
    let pings = 0;
    const hanging = {
      driver: 'pg',
      query: () => {
        pings++;
        return new Promise(() => undefined);
      },
    } as unknown as Queryable;
    const check = createReadinessCheck({
      database: hanging,
      lastGoodCollectionAt: fresh,
      startedAt: new Date(),
      collectionMaxAgeMs: HOUR,
      databaseTimeoutMs: 50,
    });
    const [a, b] = await Promise.all([check(), check()]);
    expect(a.status).toBe('not_ready');
    expect(a.checks.database).toMatchObject({ ok: false, error: 'database ping did not finish within 50 ms' });
    expect(b.checks.database.ok).toBe(false);
    expect(pings).toBe(1);
  });
});

const postgresUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!postgresUrl)('readiness as a real Postgres database goes away and comes back', () => {
  const name = `ct_ops_ready_${Date.now()}_${randomBytes(3).toString('hex')}`;
  let admin: pg.Client;
  let database: Database;

  beforeAll(async () => {
    const adminUrl = new URL(postgresUrl!);
    adminUrl.pathname = '/postgres';
    admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(postgresUrl!);
    url.pathname = `/${name}`;
    // Terminated idle connections are reported here; the pool drops them and connects anew.
    database = await openDatabase({ driver: 'pg', url: url.toString() }, { poolSize: 2, onPoolError: () => undefined });
    await migrateDatabase(database);
  });
  afterAll(async () => {
    await database?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin?.end();
  });

  it('turns 503 while no connection is possible and 200 again once it is', async () => {
    const server = await serveHealth({
      database,
      lastGoodCollectionAt: fresh,
      startedAt: new Date(),
      collectionMaxAgeMs: HOUR,
      databaseTimeoutMs: 2000,
    });
    try {
      expect((await server.get('/readyz')).status).toBe(200);

      // The database goes away: new connections refused, existing ones killed.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name]);
      const down = await server.get('/readyz');
      expect(down.status).toBe(503);
      expect(down.body.checks.database.ok).toBe(false);
      expect(down.body.checks.database.error).toMatch(/not currently accepting connections|terminat/);
      expect((await server.get('/healthz')).status).toBe(200);

      // It comes back: the same service is ready again without a restart.
      await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`);
      const up = await server.get('/readyz');
      expect(up.status).toBe(200);
      expect(up.body.checks.migrations.ok).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('collection allowance from the schedules', () => {
  it('is twice the longest gap of the most frequent schedule', () => {
    expect(longestGapMs('0 * * * *')).toBe(HOUR);
    expect(longestGapMs('0 9,17 * * *')).toBe(16 * HOUR);
    expect(collectionAllowanceMs({ instances: '0 * * * *', flavors: '0 */6 * * *', free: '0 3 * * *' })).toBe(2 * HOUR);
    expect(collectionAllowanceMs({ flavors: '0 */6 * * *' }, 3)).toBe(18 * HOUR);
  });
});

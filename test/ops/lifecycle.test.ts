import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connection.js';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../src/db/migrate.js';
import { shutdownService } from '../../src/ops/lifecycle.js';
import { StartupError, connectWithRetry, migrateOrFail, openMigratedDatabase } from '../../src/ops/startup.js';
import { createReadinessCheck } from '../../src/ops/health.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { memoryLogger } from './helpers.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server with /slow, which answers `release()` is called; `entered` resolves when a request is inside. */
async function slowServer(): Promise<{ server: Server; url: string; entered: Promise<void>; release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const app = express();
  app.get('/slow', async (_req, res) => {
    entered();
    await released;
    res.send('finished');
  });
  app.get('/fast', (_req, res) => {
    res.send('fast');
  });
  const { server, url } = await listenOnFreePort(app);
  return { server, url, entered: inside, release };
}

describe('shutdownService', () => {
  it('closes the parts in order and lets an in-flight request finish before the database closes', async () => {
    const { server, url, entered, release } = await slowServer();
    const order: string[] = [];
    // A keep-alive connection left idle by an earlier request must not hold the server open.
    expect(await (await fetch(`${url}/fast`)).text()).toBe('fast');

    const slow = fetch(`${url}/slow`).then(async (res) => {
      order.push('request answered');
      return { status: res.status, body: await res.text() };
    });
    await entered;

    const { logger, entries } = memoryLogger('info');
    const closing = shutdownService(
      {
        server,
        collection: {
          stop: async () => {
            order.push('collection stop begins');
            // The request still runs while the collection stops; it ends during this step.
            release();
            await tick(20);
            order.push('collection stopped');
          },
        },
        timers: { prune: { stop: () => void order.push('timer prune stopped') } },
        client: { close: async () => void order.push('client closed') },
        simulator: { close: async () => void order.push('simulator closed') },
        database: { close: async () => void order.push('database closed') },
      },
      { logger, deadlineMs: 10_000, httpDrainMs: 5_000 },
    );

    const report = await closing;
    const answer = await slow;
    expect(answer).toEqual({ status: 200, body: 'finished' });
    expect(report.ok).toBe(true);
    expect(report.steps.map((s) => s.step)).toEqual([
      'http',
      'collection',
      'timer prune',
      'http-drain',
      'client',
      'simulator',
      'database',
    ]);
    expect(order.indexOf('request answered')).toBeLessThan(order.indexOf('client closed'));
    expect(order.slice(-3)).toEqual(['client closed', 'simulator closed', 'database closed']);
    expect(order.indexOf('collection stopped')).toBeLessThan(order.indexOf('database closed'));
    expect(server.listening).toBe(false);
    // Each step is logged.
    expect(entries().filter((e) => String(e.msg).startsWith('shutdown:')).map((e) => e.step)).toEqual(report.steps.map((s) => s.step));
    // New connections are refused.
    await expect(fetch(`${url}/fast`)).rejects.toThrow();
  });

  it('cuts a request that overruns the drain time and still closes everything', async () => {
    const { server, url, entered } = await slowServer();
    const slow = fetch(`${url}/slow`).then(
      (res) => res.status,
      (err: Error) => `failed: ${err.message}`,
    );
    await entered;
    const closed: string[] = [];
    const { logger, text } = memoryLogger('info');
    const report = await shutdownService(
      { server, database: { close: async () => void closed.push('database') } },
      { logger, deadlineMs: 5_000, httpDrainMs: 50 },
    );
    expect(report.ok).toBe(true);
    expect(await slow).toMatch(/^failed/);
    expect(closed).toEqual(['database']);
    expect(server.listening).toBe(false);
    expect(text()).toContain('closing their connections');
  });

  it('moves on when a step hangs, so the whole shutdown stays bounded, and reports the failure', async () => {
    const closed: string[] = [];
    const { logger, entries } = memoryLogger('info');
    const report = await shutdownService(
      {
        collection: { stop: () => new Promise<void>(() => undefined) },
        client: { close: () => Promise.reject(new Error('client refused to close')) },
        database: { close: async () => void closed.push('database') },
      },
      { logger, deadlineMs: 400 },
    );
    expect(report.ok).toBe(false);
    expect(report.steps.map((s) => [s.step, s.ok])).toEqual([
      ['collection', false],
      ['client', false],
      ['database', true],
    ]);
    expect(report.steps[0]!.error).toMatch(/did not finish/);
    expect(report.steps[1]!.error).toBe('client refused to close');
    expect(closed).toEqual(['database']);
    expect(entries().filter((e) => e.level === 50)).toHaveLength(2);
  });
});

describe('connectWithRetry', () => {
  const noWait = async () => undefined;

  it('retries a database that is not reachable yet, logging each failure', async () => {
    const { logger, entries } = memoryLogger('info');
    let calls = 0;
    const value = await connectWithRetry(
      async () => {
        calls++;
        if (calls < 3) throw new Error('cannot connect to Postgres at db:5432/app as app: connect ECONNREFUSED 10.0.0.9:5432');
        return 'connected';
      },
      { logger, target: 'db:5432/app as app', attempts: 5, sleep: noWait },
    );
    expect(value).toBe('connected');
    const warnings = entries().filter((e) => e.msg === 'database not reachable yet; retrying');
    expect(warnings.map((w) => w.attempt)).toEqual([1, 2]);
    expect(warnings[0]).toMatchObject({ database: 'db:5432/app as app', attempts: 5 });
  });

  it('gives up after the attempts with a clear error that names the database but never its password', async () => {
    const { logger, text } = memoryLogger('debug');
    const password = 'pw-never-shown-7Q2';
    const url = `postgres://app:${password}@127.0.0.1:1/app`;
    const error = await connectWithRetry(() => openDatabase({ driver: 'pg', url }), {
      logger,
      target: '127.0.0.1:1/app as app',
      attempts: 3,
      sleep: noWait,
    }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StartupError);
    expect((error as StartupError).exitCode).toBe(69);
    expect((error as Error).message).toMatch(/^cannot open the database 127\.0\.0\.1:1\/app as app \(3 attempts failed\): .*ECONNREFUSED/);
    expect((error as Error).message).not.toContain(password);
    expect(text()).not.toContain(password);
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('does not retry what waiting cannot fix (no such database)', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = '/ct_ops_no_such_database';
    url.password = 'pw-never-shown-9K1';
    const { logger } = memoryLogger('info');
    let calls = 0;
    const error = await connectWithRetry(
      () => {
        calls++;
        return openDatabase({ driver: 'pg', url: url.toString() });
      },
      { logger, target: 'the test server', attempts: 5, sleep: noWait },
    ).catch((err: unknown) => err);
    expect(calls).toBe(1);
    expect((error as Error).message).toMatch(/refused the connection.*does not exist/);
    expect((error as Error).message).not.toContain('pw-never-shown-9K1');
  });
});

describe('openMigratedDatabase', () => {
  it.skipIf(!process.env.TEST_DATABASE_URL)('opens and migrates Postgres, naming it without its password', async () => {
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    const name = `ct_ops_start_${Date.now()}_${process.pid}`;
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${name}`;
    url.username = url.username || 'postgres';
    url.password = 'pw-never-shown-3Z8';
    const { logger, text } = memoryLogger('info');
    const database = await openMigratedDatabase({ driver: 'pg', url: url.toString() }, { logger });
    try {
      const ready = await createReadinessCheck({ database, lastGoodCollectionAt: async () => null, startedAt: new Date(), collectionMaxAgeMs: 60_000 })();
      expect(ready.checks.migrations.ok).toBe(true);
      expect(text()).toContain(`"database":"127.0.0.1:5432/${name} as ${url.username}"`);
      expect(text()).not.toContain('pw-never-shown-3Z8');
    } finally {
      await database.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('tries a PGlite folder that cannot be created once, and says which', async () => {
    const { logger, text } = memoryLogger('info');
    const dataDir = join(tmpdir(), `ct-not-a-dir-${process.pid}`);
    writeFileSync(dataDir, 'a file where the data folder should be');
    try {
      const error = await openMigratedDatabase({ driver: 'pglite', dataDir }, { logger, attempts: 5, sleep: async () => undefined }).catch(
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(StartupError);
      expect((error as Error).message).toContain(`cannot open the database PGlite in ${dataDir} (it failed)`);
      expect(text()).not.toContain('retrying');
    } finally {
      rmSync(dataDir, { force: true });
    }
  });
});

describe.each(testDatabases())('migrateOrFail ($name)', ({ open }) => {
  it('stops the start with the failing migration named, and leaves the schema as it was', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'ct-bad-migrations-'));
    const database = await open({ migrate: false });
    try {
      cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
      const journalPath = join(folder, 'meta', '_journal.json');
      const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ when: number; tag: string; idx: number }> };
      const last = journal.entries.at(-1)!;
      journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag: '9999_broken' });
      writeFileSync(journalPath, JSON.stringify(journal));
      writeFileSync(join(folder, '9999_broken.sql'), 'ALTER TABLE no_such_table ADD COLUMN x int;');

      const { logger } = memoryLogger('info');
      const error = await migrateOrFail(() => migrateDatabase(database, { migrationsFolder: folder }), {
        logger,
        target: 'the test database',
      }).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(StartupError);
      expect((error as StartupError).exitCode).toBe(70);
      expect((error as Error).message).toMatch(/migrations failed on the test database; nothing was applied/);
      expect((error as Error).message).toMatch(/no_such_table/);
      // drizzle runs the pending migrations in one transaction: not even the good ones stayed.
      const [row] = await database.query<{ t: string | null }>(`SELECT to_regclass('public.snapshots')::text AS t`);
      expect(row!.t).toBeNull();
    } finally {
      await database.close();
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

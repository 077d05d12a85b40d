import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { redactDatabaseUrl } from '../../src/db/url.js';
import { collectionRuns } from '../../src/db/schema.js';
import { spawnCli } from '../helpers/cli.js';
import { testDatabases } from '../helpers/databases.js';

describe.each(testDatabases())('database on $name', ({ name, open }) => {
  let database: Database;
  beforeAll(async () => {
    database = await open();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('returns raw values the same way on both drivers', async () => {
    const rows = await database.query(
      `SELECT 9007199254740993::int8 AS big, 7::int4 AS small, 0.1::numeric + 0.2::numeric AS money,
              ARRAY[0.1, 2]::numeric[] AS monies, ARRAY[1, 9007199254740993]::int8[] AS bigs,
              '2024-02-29'::date AS day, '2024-01-02T03:04:05.678Z'::timestamptz AS at,
              '{"a": [1, "x"]}'::jsonb AS doc, ARRAY['a', NULL]::text[] AS names, true AS flag`,
    );
    expect(rows).toEqual([
      {
        big: '9007199254740993',
        small: 7,
        money: '0.3',
        monies: ['0.1', '2'],
        bigs: ['1', '9007199254740993'],
        day: '2024-02-29',
        at: new Date('2024-01-02T03:04:05.678Z'),
        doc: { a: [1, 'x'] },
        names: ['a', null],
        flag: true,
      },
    ]);
  });

  it('reads zone-less timestamps as UTC and cuts days in UTC', async () => {
    const [row] = await database.query<{ at: Date; day: string; tz: string }>(
      `SELECT '2023-09-28 23:30:00.115'::timestamptz AS at, ('2023-09-28T23:30:00-02:00'::timestamptz)::date AS day,
              current_setting('TimeZone') AS tz`,
    );
    expect(row!.at.toISOString()).toBe('2023-09-28T23:30:00.115Z');
    expect(row!.day).toBe('2023-09-29');
    expect(row!.tz).toBe('UTC');
  });

  it.runIf(name === 'postgres')('runs every statement with JIT compilation off', async () => {
    expect(await database.query(`SELECT current_setting('jit') AS jit`)).toEqual([{ jit: 'off' }]);
  });

  it('binds parameters of every kind', async () => {
    const rows = await database.query<{ t: string; n: number; j: unknown; arr: string[] }>(
      'SELECT $1::text AS t, $2::int AS n, $3::jsonb AS j, $4::text[] AS arr',
      ['Ünïcode "q"', 42, JSON.stringify({ 'cost.center': 'x' }), ['a', 'b,c']],
    );
    expect(rows).toEqual([{ t: 'Ünïcode "q"', n: 42, j: { 'cost.center': 'x' }, arr: ['a', 'b,c'] }]);
  });

  it('commits a transaction, and rolls it back when the function throws', async () => {
    const id = await database.transaction(async (tx) => {
      const [run] = await tx.db.insert(collectionRuns).values({ trigger: 'manual', collectors: [], runnerId: 'commit' }).returning();
      await tx.execute(`UPDATE collection_runs SET status = 'succeeded' WHERE id = $1`, [run!.id]);
      return run!.id;
    });
    const committed = await database.db.select().from(collectionRuns).where(eq(collectionRuns.id, id));
    expect(committed[0]?.status).toBe('succeeded');

    const failure = new Error('collector blew up');
    await expect(
      database.transaction(async (tx) => {
        await tx.db.insert(collectionRuns).values({ trigger: 'manual', collectors: [], runnerId: 'rollback' });
        await tx.query(`INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('manual', '{}', 'rollback')`);
        throw failure;
      }),
    ).rejects.toBe(failure);
    const rolledBack = await database.query(`SELECT id FROM collection_runs WHERE runner_id = 'rollback'`);
    expect(rolledBack).toEqual([]);
  });

  it('reports affected row counts', async () => {
    await database.query(`INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('manual', '{}', 'count'), ('manual', '{}', 'count')`);
    const result = await database.execute(`UPDATE collection_runs SET status = 'failed' WHERE runner_id = 'count'`);
    expect(result.rowCount).toBe(2);
  });

  it(`reads a query through a server-side cursor in batches on Postgres, none on PGlite (${name})`, async () => {
    if (name === 'pglite') {
      expect(database.cursorBatches).toBeUndefined();
      return;
    }
    const read = async (n: number, batch: number) => {
      const batches: Array<Array<{ i: number; money: string; day: string }>> = [];
      for await (const rows of database.cursorBatches!<{ i: number; money: string; day: string }>(
        `SELECT i, (i * 0.1)::numeric AS money, ('2024-01-01'::date + i) AS day FROM generate_series(1, $1::int) i ORDER BY i`,
        [n],
        batch,
      )) {
        batches.push(rows);
      }
      return batches;
    };
    // 7 rows by 3: 3 + 3 + 1; raw values as query() gives them (numeric as exact text, date as text).
    const batches = await read(7, 3);
    expect(batches.map((b) => b.length)).toEqual([3, 3, 1]);
    expect(batches[2]).toEqual([{ i: 7, money: '0.7', day: '2024-01-08' }]);
    // A multiple of the batch size ends without an empty batch; no rows, no batch.
    expect((await read(6, 3)).map((b) => b.length)).toEqual([3, 3]);
    expect(await read(0, 3)).toEqual([]);
    // Stopping early and a failing query both give the connection back (the pool has 10: 12 rounds would block).
    for (let i = 0; i < 12; i++) {
      for await (const _rows of database.cursorBatches!('SELECT generate_series(1, 100)', [], 10)) break;
    }
    for (let i = 0; i < 12; i++) {
      await expect(
        (async () => {
          for await (const _rows of database.cursorBatches!('SELECT 1 / (3 - i) FROM generate_series(1, 5) i', [], 1)) {
            // the third row divides by zero
          }
        })(),
      ).rejects.toThrow(/division by zero/);
    }
    await expect(database.cursorBatches!('SELECT 1', [], 0).next()).rejects.toThrow(/batch size/);
    expect(await database.query('SELECT 1 AS ok')).toEqual([{ ok: 1 }]);
  });

  it('lets one holder at a time have an advisory lock', async () => {
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let signalHeld!: () => void;
    const held = new Promise<void>((resolve) => (signalHeld = resolve));

    const first = database.withAdvisoryLock('test-lock', async () => {
      signalHeld();
      await firstHolds;
      return 'first';
    });
    await held;
    expect(await database.withAdvisoryLock('test-lock', async () => 'second', { wait: false })).toEqual({ acquired: false });
    expect(await database.withAdvisoryLock('other-lock', async () => 'other', { wait: false })).toEqual({ acquired: true, value: 'other' });

    const order: string[] = [];
    const waiter = database.withAdvisoryLock('test-lock', async () => {
      order.push('waiter');
      return 'waited';
    });
    order.push('release');
    releaseFirst();
    expect(await first).toEqual({ acquired: true, value: 'first' });
    expect(await waiter).toEqual({ acquired: true, value: 'waited' });
    expect(order).toEqual(['release', 'waiter']);
    expect(await database.withAdvisoryLock('test-lock', async () => 'free again', { wait: false })).toEqual({
      acquired: true,
      value: 'free again',
    });
  });

  it(`holds an advisory lock until released, seen as held by withAdvisoryLock, and close() lets it go (${name})`, async () => {
    const extra = await open();
    try {
      const held = await extra.holdAdvisoryLock('held-lock');
      expect(held).not.toBeNull();
      expect(await extra.holdAdvisoryLock('held-lock')).toBeNull();
      expect(await extra.withAdvisoryLock('held-lock', async () => 'no', { wait: false })).toEqual({ acquired: false });
      await held!.release();
      expect(await extra.withAdvisoryLock('held-lock', async () => 'free', { wait: false })).toEqual({ acquired: true, value: 'free' });
      // A lock still held when the database closes (a run that has not ended) does not keep close() waiting.
      expect(await extra.holdAdvisoryLock('held-at-close')).not.toBeNull();
    } finally {
      await extra.close();
    }
  });

  it(`closes idempotently (${name})`, async () => {
    const extra = await open();
    await extra.close();
    await extra.close();
  });
});

describe('PGlite in a folder', () => {
  it('creates the folder, migrates, and keeps the data across a reopen', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'cloudtally-pglite-')), 'nested', 'data');
    try {
      const first = await openDatabase({ driver: 'pglite', dataDir: dir });
      await migrateDatabase(first);
      await first.query(`INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('startup', '{clusters}', 'disk')`);
      await first.close();

      const again = await openDatabase({ driver: 'pglite', dataDir: dir });
      try {
        await migrateDatabase(again);
        expect(await again.query('SELECT runner_id, collectors FROM collection_runs')).toEqual([{ runner_id: 'disk', collectors: ['clusters'] }]);
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dirname(dirname(dir)), { recursive: true, force: true });
    }
  });
});

describe('PGlite folder lock: one process per data folder', () => {
  let dir: string;
  beforeAll(() => {
    dir = join(mkdtempSync(join(tmpdir(), 'cloudtally-lock-')), 'data');
  });
  afterAll(() => {
    rmSync(dirname(dir), { recursive: true, force: true });
  });
  const lockFile = () => join(dir, 'cloudtally.lock');

  it('refuses a second open in the same process, and frees the folder on close', async () => {
    const first = await openDatabase({ driver: 'pglite', dataDir: dir });
    try {
      expect(JSON.parse(readFileSync(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
      const error = await openDatabase({ driver: 'pglite', dataDir: dir }).catch((err: unknown) => err);
      expect((error as Error).message).toContain(`the data folder ${dir} is in use by another cloudtally process (pid ${process.pid} on ${hostname()}`);
    } finally {
      await first.close();
    }
    expect(existsSync(lockFile())).toBe(false);
  });

  it('a second process (npm start) exits at once with exit 75, naming the folder and the holding pid', async () => {
    const holder = await openDatabase({ driver: 'pglite', dataDir: dir });
    try {
      const second = spawnCli(['start'], { CLOUDTALLY_DATA_DIR: dir, PORT: '0' });
      const { code } = await second.exited;
      expect(code, second.stdout()).toBe(75);
      const lines = second.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^cloudtally: the data folder ${dir} is in use by another cloudtally process \\(pid ${process.pid} on `));
      // The holder's lock is untouched.
      expect(JSON.parse(readFileSync(lockFile(), 'utf8'))).toMatchObject({ pid: process.pid });
    } finally {
      await holder.close();
    }
  }, 120_000);

  it('takes over the lock of a process that died without releasing it', async () => {
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(lockFile(), JSON.stringify({ pid: gone, host: hostname(), startedAt: '2020-01-01T00:00:00.000Z' }));
    const migrate = spawnCli(['migrate'], { CLOUDTALLY_DATA_DIR: dir });
    const { code } = await migrate.exited;
    expect(code, migrate.stderr()).toBe(0);
    expect(existsSync(lockFile())).toBe(false);
  }, 120_000);
});

describe('connection errors', () => {
  it('names the Postgres target but never the password', async () => {
    const url = 'postgres://someone:s3cr3t-pw@127.0.0.1:1/nowhere';
    const error = await openDatabase({ driver: 'pg', url }).catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/^cannot connect to Postgres at 127\.0\.0\.1:1\/nowhere as someone: /);
    expect((error as Error).message).not.toContain('s3cr3t-pw');
  });

  it('redacts passwords in database URLs', () => {
    expect(redactDatabaseUrl('postgres://u:p%40ss@h:5432/db?sslpassword=x&sslmode=require')).toBe(
      'postgres://u:***@h:5432/db?sslpassword=***&sslmode=require',
    );
    expect(redactDatabaseUrl('not a url with secret')).toBe('[unparseable database URL]');
  });
});

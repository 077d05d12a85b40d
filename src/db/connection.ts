/**
 * Opens the database: Postgres through a pg.Pool, or embedded PGlite (in a folder or in memory).
 * Both give the same Database interface, so callers write one code path.
 *
 * Every session runs with TimeZone=UTC, so zone-less timestamps are read as UTC and day
 * boundaries (date_trunc, ::date) are UTC days on both drivers.
 *
 * Raw query results (`query`/`execute`) are normalised across drivers: int8 and numeric (and
 * their arrays) come back as strings (exact), date as 'YYYY-MM-DD', timestamptz as Date, jsonb
 * parsed. Drizzle queries through `db` map values as the schema declares.
 */
import { mkdirSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PGlite, types as pgliteTypes, type Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import pg from 'pg';
import { from as copyFromStdin, to as copyToStdout } from 'pg-copy-streams';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { inlineParams } from './sql-literal.js';
import * as schema from './schema.js';
import { describeDatabaseTarget } from './url.js';

export type DatabaseConfig = { driver: 'pg'; url: string } | { driver: 'pglite'; dataDir: string };
export type Driver = DatabaseConfig['driver'];

export type Schema = typeof schema;
/** The drizzle database, typed with the schema, the same type for both drivers. */
export type Db = PgDatabase<PgQueryResultHKT, Schema>;

export type Row = Record<string, unknown>;

/** Something to run statements on: the database itself, or one transaction / session of it. */
export interface Queryable {
  readonly driver: Driver;
  /** Drizzle bound to this connection (inside a transaction: to the transaction). */
  readonly db: Db;
  /** Raw SQL with $1.. placeholders; returns the rows. */
  query<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<R[]>;
  /** Raw SQL; returns the rows and the number of rows affected. */
  execute<R extends Row = Row>(text: string, params?: readonly unknown[]): Promise<{ rows: R[]; rowCount: number }>;
  /**
   * COPY FROM STDIN: `into` is `"table" ("column", ...)` (trusted text, never user input), `data`
   * the COPY text (text format) in pieces, sent one after the other. Returns the rows copied.
   */
  copyFrom(into: string, data: readonly string[]): Promise<number>;
}

export interface Database extends Queryable {
  /**
   * Runs fn in one transaction on one connection: committed when fn resolves, rolled back when it
   * throws. Use only the handle given to fn inside (on PGlite the outer object waits for the
   * transaction to end); do not nest transactions through `tx.db.transaction`.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Runs fn while holding a cluster-wide advisory lock named `name` (Postgres: a session-level
   * pg_advisory_lock on a dedicated connection, so replicas exclude each other; PGlite: an
   * in-process lock). With `wait: false` it returns `{ acquired: false }` at once when the lock is
   * held elsewhere. fn gets a handle on the locked session (not a transaction).
   */
  withAdvisoryLock<T>(
    name: string,
    fn: (session: Queryable) => Promise<T>,
    options?: { wait?: boolean },
  ): Promise<{ acquired: true; value: T } | { acquired: false }>;
  /**
   * Takes the advisory lock `name` without waiting and holds it until `release()`, or answers null
   * when it is held elsewhere. Postgres: a session-level lock on a connection of its own, so the
   * server releases it the moment this process dies; PGlite: an in-process lock (the data folder
   * lock keeps other processes out). withAdvisoryLock on the same name sees it as held.
   */
  holdAdvisoryLock(name: string): Promise<HeldLock | null>;
  /**
   * Postgres only (undefined on PGlite): the rows of one query in batches of `batchSize`, read
   * through a server-side cursor (`DECLARE ... NO SCROLL CURSOR` + `FETCH n`) in a read-only
   * transaction on one pooled connection, so a query of any size runs once and memory holds at
   * most two batches (the next is fetched while one is consumed). Planned for reading every row
   * (cursor_tuple_fraction 1), as a plain query would be. Stopping early closes the cursor.
   */
  cursorBatches?<R extends Row = Row>(text: string, params: readonly unknown[], batchSize: number): AsyncGenerator<R[]>;
  /**
   * Postgres only (undefined on PGlite): the result of one query as CSV written by the server,
   * `COPY (text) TO STDOUT WITH (FORMAT csv)`, in the pieces the server sends (about 64 KB, a
   * record may span two). COPY takes no parameters: `params` are inlined as quoted literals
   * (sql-literal.ts). Stopping early drops the connection, which ends the COPY on the server.
   */
  csvCopy?(text: string, params: readonly unknown[]): AsyncGenerator<Buffer>;
  close(): Promise<void>;
}

export interface HeldLock {
  /** Lets the lock go (idempotent). */
  release(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** pg only: connections in the pool (default 10). */
  poolSize?: number;
  /** pg only: an idle pooled connection failed (e.g. the server restarted). Default: a process warning. */
  onPoolError?: (err: Error) => void;
  /**
   * PGlite only: start from this data-directory dump (PGlite's dumpDataDir) instead of running
   * initdb; tests use it to open a migrated database in a fraction of the time.
   */
  pgliteLoadDataDir?: Blob;
}

export async function openDatabase(cfg: DatabaseConfig, options: OpenDatabaseOptions = {}): Promise<Database> {
  return cfg.driver === 'pg' ? openPostgres(cfg.url, options) : openPglite(cfg.dataDir, options.pgliteLoadDataDir);
}

// ---------------------------------------------------------------------------------------------
// Postgres.

const { types: pgTypes } = pg;
const getPgParser = pgTypes.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown;
const parseTextArray = getPgParser(1009 /* text[] */);
const identity = (value: string) => value;
const parseTimestamptz = getPgParser(1184);
/**
 * timestamptz through pg's own parser, each column of a result remembering its last text: rows
 * share their snapshot times, and parsing dates is a large part of reading 100,000 rows. Each row
 * still gets its own Date.
 */
function instantColumnParser(): (text: string) => unknown {
  let lastText: string | undefined;
  let lastValue: unknown;
  return (text) => {
    if (text !== lastText) {
      lastValue = parseTimestamptz(text);
      lastText = text;
    }
    return lastValue instanceof Date ? new Date(lastValue.getTime()) : lastValue;
  };
}

/** int8 and numeric stay strings; their arrays too; dates stay 'YYYY-MM-DD'; timestamptz as above. */
const pgRawTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => {
    switch (oid) {
      case 1231: // numeric[]
      case 1016: // int8[]
      case 1182: // date[]
        return parseTextArray;
      case 1082: // date
        return identity;
      case 1184: // timestamptz
        return format === 'binary' ? getPgParser(oid, format) : instantColumnParser();
      default:
        return getPgParser(oid, format);
    }
  },
};

async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const target = describeDatabaseTarget(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    application_name: 'cloudtally',
    // Startup parameters, so they hold before the first statement of every connection. (An
    // `options` parameter inside DATABASE_URL takes precedence over these.) JIT off: Postgres
    // compiles any plan whose estimated cost passes jit_above_cost, and report and rollup plans
    // over 100,000-row snapshots pass it (the planner also over-estimates set-returning functions
    // such as jsonb_each_text); compiling them costs 100 ms to seconds where running them takes ms.
    options: '-c TimeZone=UTC -c jit=off',
  });
  const onPoolError =
    options.onPoolError ??
    ((err: Error) => process.emitWarning(`idle Postgres connection to ${target} failed: ${err.message}`));
  pool.on('error', onPoolError);

  try {
    await pool.query('select 1');
  } catch (err) {
    await pool.end().catch(() => undefined); // the connection error below is the one that matters
    throw new Error(`cannot connect to Postgres at ${target}: ${(err as Error).message}`, { cause: err });
  }

  const session = (client: pg.Pool | pg.PoolClient): Queryable => ({
    driver: 'pg',
    db: drizzleNodePg({ client, schema }),
    query: async (text, params) => (await runPg(client, text, params)).rows as never[],
    execute: async (text, params) => {
      const result = await runPg(client, text, params);
      return { rows: result.rows as never[], rowCount: result.rowCount ?? 0 };
    },
    copyFrom: async (into, data) => {
      if (client instanceof pg.Pool) {
        const connection = await client.connect();
        let broken = false;
        try {
          return await copyPg(connection, into, data);
        } catch (err) {
          // A server error ends the COPY cleanly; anything else may leave the connection mid-protocol.
          broken = !(err instanceof pg.DatabaseError);
          throw err;
        } finally {
          connection.release(broken);
        }
      }
      return copyPg(client, into, data);
    },
  });

  let closed = false;
  const heldLocks = new Set<HeldLock>();
  return {
    ...session(pool),

    async transaction(fn) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const value = await fn(session(client));
        await client.query('COMMIT');
        return value;
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackErr) {
          broken = true;
          throw new AggregateError([err, rollbackErr], `transaction failed, and so did its rollback: ${(err as Error).message}`);
        }
        throw err;
      } finally {
        client.release(broken);
      }
    },

    async *cursorBatches<R extends Row = Row>(text: string, params: readonly unknown[], batchSize: number): AsyncGenerator<R[]> {
      if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`cursorBatches: batch size must be a positive integer, got ${batchSize}`);
      const client = await pool.connect();
      let broken = false;
      let open = false;
      // A fetch started ahead may fail while the consumer is busy: settled at once, thrown when reached.
      const fetchBatch = () =>
        runPg(client, `FETCH ${batchSize} FROM cloudtally_export`).then(
          (r) => ({ rows: r.rows as R[] }),
          (error: unknown) => ({ error }),
        );
      try {
        await client.query('BEGIN READ ONLY');
        open = true;
        await client.query('SET LOCAL cursor_tuple_fraction = 1');
        await runPg(client, `DECLARE cloudtally_export NO SCROLL CURSOR FOR ${text}`, params);
        let next: ReturnType<typeof fetchBatch> | null = fetchBatch();
        while (next) {
          const outcome = await next;
          next = null;
          if ('error' in outcome) throw outcome.error;
          if (outcome.rows.length === batchSize) next = fetchBatch();
          if (outcome.rows.length > 0) yield outcome.rows;
        }
        open = false;
        await client.query('COMMIT');
      } catch (err) {
        broken = !(err instanceof pg.DatabaseError);
        throw err;
      } finally {
        // Stopped early (the client went away) or failed: the transaction ends, and the cursor with it.
        if (open) {
          await client.query('ROLLBACK').catch((err: unknown) => {
            broken = true;
            onPoolError(err as Error);
          });
        }
        client.release(broken);
      }
    },

    async *csvCopy(text: string, params: readonly unknown[]): AsyncGenerator<Buffer> {
      const statement = `COPY (${inlineParams(text, params)}) TO STDOUT WITH (FORMAT csv)`;
      const client = await pool.connect();
      // Until the COPY has ended, the connection is mid-protocol: if it stops early it is dropped.
      let broken = true;
      try {
        for await (const chunk of client.query(copyToStdout(statement))) yield chunk as Buffer;
        broken = false;
      } catch (err) {
        // The server refused or failed the COPY: its error ended the protocol cleanly.
        broken = !(err instanceof pg.DatabaseError);
        throw err;
      } finally {
        client.release(broken);
      }
    },

    async withAdvisoryLock(name, fn, opts = {}) {
      const client = await pool.connect();
      let broken = false;
      try {
        if (opts.wait === false) {
          const res = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [name]);
          if (!res.rows[0]?.ok) return { acquired: false };
        } else {
          await client.query('select pg_advisory_lock(hashtextextended($1, 0))', [name]);
        }
        try {
          return { acquired: true, value: await fn(session(client)) };
        } finally {
          await client.query('select pg_advisory_unlock(hashtextextended($1, 0))', [name]).catch((err: unknown) => {
            broken = true; // a dropped connection releases its locks; make sure it is not reused
            onPoolError(err as Error);
          });
        }
      } finally {
        client.release(broken);
      }
    },

    async holdAdvisoryLock(name) {
      const client = await pool.connect();
      // A checked-out connection that breaks emits 'error'; without a listener that would crash.
      let broken = false;
      const onError = (err: Error) => {
        broken = true;
        onPoolError(err);
      };
      client.on('error', onError);
      const giveBack = () => {
        client.off('error', onError);
        client.release(broken);
      };
      try {
        const res = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [name]);
        if (!res.rows[0]?.ok) {
          giveBack();
          return null;
        }
      } catch (err) {
        broken = true;
        giveBack();
        throw err;
      }
      let released: Promise<void> | null = null;
      const held: HeldLock = {
        release: () =>
          (released ??= (async () => {
            heldLocks.delete(held);
            if (!broken) {
              await client.query('select pg_advisory_unlock(hashtextextended($1, 0))', [name]).catch((err: unknown) => {
                broken = true; // a dropped connection released the lock anyway; make sure it is not reused
                onPoolError(err as Error);
              });
            }
            giveBack();
          })()),
      };
      heldLocks.add(held);
      return held;
    },

    async close() {
      if (closed) return;
      closed = true;
      // pool.end() waits for every checked-out connection: a held lock (a run that has not ended
      // yet, e.g. one that did not stop in time) would keep it waiting. Closing ends the session anyway.
      await Promise.all([...heldLocks].map((lock) => lock.release()));
      await pool.end();
    },
  };
}

function runPg(client: pg.Pool | pg.PoolClient, text: string, params?: readonly unknown[]) {
  return client.query({ text, values: params ? [...params] : [], types: pgRawTypes });
}

async function copyPg(client: pg.PoolClient, into: string, data: readonly string[]): Promise<number> {
  const stream = client.query(copyFromStdin(`COPY ${into} FROM STDIN`));
  await pipeline(Readable.from(data, { objectMode: false }), stream);
  return stream.rowCount;
}

// ---------------------------------------------------------------------------------------------
// PGlite.

/** Global PGlite parsers: int8 as string (like pg) so values above 2^53 stay exact; date as text. */
const pgliteParsers = {
  [pgliteTypes.INT8]: identity,
  [pgliteTypes.DATE]: identity,
};

async function openPglite(dataDir: string, loadDataDir: Blob | undefined): Promise<Database> {
  const inMemory = dataDir === 'memory://' || dataDir === '';
  let dirLock: DataDirLock | null = null;
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    // Before PGlite touches the folder: a second process must not even open it.
    dirLock = lockDataDir(dataDir);
  }
  let client: PGlite;
  try {
    client = await PGlite.create(inMemory ? 'memory://' : dataDir, { parsers: pgliteParsers, loadDataDir });
    await client.query("SET TIME ZONE 'UTC'");
  } catch (err) {
    dirLock?.release();
    throw new Error(`cannot open PGlite database in ${inMemory ? 'memory' : dataDir}: ${(err as Error).message}`, { cause: err });
  }

  const session = (conn: PGlite | PGliteTransaction): Queryable => ({
    driver: 'pglite',
    // drizzle's PGlite driver only calls query() on its client, which a PGlite transaction has.
    db: drizzlePglite({ client: conn as PGlite, schema }),
    query: async (text, params) => (await conn.query(text, params ? [...params] : [])).rows as never[],
    execute: async (text, params) => {
      const result = await conn.query(text, params ? [...params] : []);
      return { rows: result.rows as never[], rowCount: result.affectedRows ?? 0 };
    },
    // PGlite reads COPY data from its /dev/blob device.
    copyFrom: async (into, data) => (await conn.query(`COPY ${into} FROM '/dev/blob'`, [], { blob: new Blob([...data]) })).affectedRows ?? 0,
  });

  // PGlite is one session in this process: an in-process lock is what excludes concurrent holders.
  const held = new Map<string, Promise<void>>();
  let closed = false;

  return {
    ...session(client),

    transaction: (fn) => client.transaction((tx) => fn(session(tx))),

    async withAdvisoryLock(name, fn, opts = {}) {
      if (opts.wait === false && held.has(name)) return { acquired: false };
      while (held.has(name)) await held.get(name);
      let release!: () => void;
      held.set(name, new Promise<void>((resolve) => (release = resolve)));
      try {
        return { acquired: true, value: await fn(session(client)) };
      } finally {
        held.delete(name);
        release();
      }
    },

    async holdAdvisoryLock(name) {
      if (held.has(name)) return null;
      let release!: () => void;
      held.set(name, new Promise<void>((resolve) => (release = resolve)));
      let released = false;
      return {
        release: async () => {
          if (released) return;
          released = true;
          held.delete(name);
          release();
        },
      };
    },

    async close() {
      if (closed) return;
      closed = true;
      try {
        await client.close();
      } finally {
        dirLock?.release();
      }
    },
  };
}

/**
 * Postgres through a pg.Pool (connection.ts says what every driver gives). Raw results: int8 and
 * numeric (and their arrays) as strings, date as 'YYYY-MM-DD', timestamptz as Date, jsonb parsed.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { from as copyFromStdin, to as copyToStdout } from 'pg-copy-streams';
import { DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS, DEFAULT_KEEPALIVE_SECONDS, type Database, type HeldLock, type OpenDatabaseOptions, type Queryable, type Row } from './connection.js';
import { LOCK_NOT_AVAILABLE } from './errors.js';
import { inlineParams } from './sql-literal.js';
import * as schema from './schema.js';
import { describeDatabaseTarget } from './url.js';
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

/** A Citus coordinator: the citus extension is created in this database. */
const CITUS_PROBE = `select exists (select 1 from pg_extension where extname = 'citus') as citus`;
/**
 * Startup parameters of every session of a Citus database, never of plain Postgres: the fold
 * joins a snapshot's staged rows (distributed by snapshot_id) to version rows (distributed by
 * scope_key), which Citus plans only as a repartition join.
 */
const CITUS_SESSION_OPTIONS = ['-c citus.enable_repartition_joins=on'];

export async function openPostgres(url: string, options: OpenDatabaseOptions): Promise<Database> {
  const target = describeDatabaseTarget(url);
  const applicationName = options.applicationName ?? 'cloudtally';
  const idleInTransactionMs = options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS;
  const keepAliveSeconds = options.keepAliveSeconds ?? DEFAULT_KEEPALIVE_SECONDS;
  const onPoolError =
    options.onPoolError ??
    ((err: Error) => process.emitWarning(`idle Postgres connection to ${target} failed: ${err.message}`));
  const makePool = (extraOptions: readonly string[]) => {
    const made = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      application_name: applicationName,
      keepAlive: true,
      keepAliveInitialDelayMillis: keepAliveSeconds * 1000,
      // Startup parameters, so they hold before the first statement of every connection. (An
      // `options` parameter inside DATABASE_URL takes precedence over these.) JIT off: Postgres
      // compiles any plan whose estimated cost passes jit_above_cost, and report and rollup plans
      // over 100,000-row snapshots pass it (the planner also over-estimates set-returning functions
      // such as jsonb_each_text); compiling them costs 100 ms to seconds where running them takes ms.
      // A session that stops talking (a frozen process, a lost network) must not hold its locks
      // for ever: an open transaction left idle is ended by the server, and the server's own
      // keepalives notice a silent peer (its default waits 2 hours).
      options: [
        '-c TimeZone=UTC',
        '-c jit=off',
        `-c idle_in_transaction_session_timeout=${idleInTransactionMs}`,
        `-c tcp_keepalives_idle=${keepAliveSeconds}`,
        `-c tcp_keepalives_interval=${keepAliveSeconds}`,
        '-c tcp_keepalives_count=3',
        `-c tcp_user_timeout=${keepAliveSeconds * 4 * 1000}`,
        ...extraOptions,
      ].join(' '),
    });
    made.on('error', onPoolError);
    return made;
  };

  let pool = makePool([]);
  try {
    const [probe] = (await pool.query<{ citus: boolean }>(CITUS_PROBE)).rows;
    // Found once at open; the pool is opened again with the Citus settings on every session.
    if (probe!.citus) {
      await pool.end();
      pool = makePool(CITUS_SESSION_OPTIONS);
      await pool.query('select 1');
    }
  } catch (err) {
    await pool.end().catch(() => undefined); // the connection error below is the one that matters
    throw new Error(`cannot connect to Postgres at ${target}: ${(err as Error).message}`, { cause: err });
  }

  /**
   * A pooled connection for work that keeps it across statements. One that dies while checked
   * out and idle (the server ended the session: a restart, a terminate, the idle-in-transaction
   * timeout) emits 'error', which would crash the process without a listener: it is reported,
   * and released as broken so it is never reused.
   */
  const checkOut = async () => {
    const client = await pool.connect();
    let failed = false;
    const onError = (err: Error) => {
      failed = true;
      onPoolError(err);
    };
    client.on('error', onError);
    return {
      client,
      release: (broken: boolean) => {
        client.off('error', onError);
        client.release(broken || failed);
      },
    };
  };

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
        const { client: connection, release } = await checkOut();
        let broken = false;
        try {
          return await copyPg(connection, into, data);
        } catch (err) {
          // A server error ends the COPY cleanly; anything else may leave the connection mid-protocol.
          broken = !(err instanceof pg.DatabaseError);
          throw err;
        } finally {
          release(broken);
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
      const { client, release } = await checkOut();
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
        release(broken);
      }
    },

    async *cursorBatches<R extends Row = Row>(text: string, params: readonly unknown[], batchSize: number): AsyncGenerator<R[]> {
      if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`cursorBatches: batch size must be a positive integer, got ${batchSize}`);
      const { client, release } = await checkOut();
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
        release(broken);
      }
    },

    async *csvCopy(text: string, params: readonly unknown[]): AsyncGenerator<Buffer> {
      const statement = `COPY (${inlineParams(text, params)}) TO STDOUT WITH (FORMAT csv)`;
      const { client, release } = await checkOut();
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
        release(broken);
      }
    },

    async withAdvisoryLock(name, fn, opts = {}) {
      const { client, release } = await checkOut();
      let broken = false;
      try {
        if (opts.wait === false) {
          const res = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [name]);
          if (!res.rows[0]?.ok) return { acquired: false };
        } else if (opts.timeoutMs !== undefined) {
          // lock_timeout bounds advisory lock waits too; the session's own value is restored after.
          await client.query(`select set_config('lock_timeout', $1, false)`, [`${Math.max(1, Math.round(opts.timeoutMs))}ms`]);
          try {
            await client.query('select pg_advisory_lock(hashtextextended($1, 0))', [name]);
          } catch (err) {
            if (err instanceof pg.DatabaseError && err.code === LOCK_NOT_AVAILABLE) return { acquired: false };
            throw err;
          } finally {
            await client.query('RESET lock_timeout').catch(() => (broken = true));
          }
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
        release(broken);
      }
    },

    async holdAdvisoryLock(name, opts = {}) {
      const client = await pool.connect();
      // A checked-out connection that breaks emits 'error'; without a listener that would crash.
      let broken = false;
      let released = false;
      let resolveLost!: (err: Error) => void;
      const lost = new Promise<Error>((resolve) => (resolveLost = resolve));
      const onError = (err: Error) => {
        broken = true;
        if (!released) resolveLost(err);
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
        if (opts.applicationName) await client.query(`select set_config('application_name', $1, false)`, [opts.applicationName]);
      } catch (err) {
        broken = true;
        giveBack();
        throw err;
      }
      let releasing: Promise<void> | null = null;
      const held: HeldLock = {
        session: session(client),
        lost,
        release: () =>
          (releasing ??= (async () => {
            released = true;
            heldLocks.delete(held);
            if (!broken) {
              await client
                .query(`select pg_advisory_unlock(hashtextextended($1, 0)), set_config('application_name', $2, false)`, [name, applicationName])
                .catch((err: unknown) => {
                  broken = true; // a dropped connection released the lock anyway; make sure it is not reused
                  onPoolError(err as Error);
                });
            }
            giveBack();
          })()),
        abandon: (reason) =>
          (releasing ??= (async () => {
            // Closing the connection is what lets the server drop the lock; nothing is sent
            // first. The error listener stays: the dying connection may still report.
            resolveLost(reason);
            released = true;
            broken = true;
            heldLocks.delete(held);
            client.release(true);
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

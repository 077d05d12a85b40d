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
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';
import type * as schema from './schema.js';

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
   * held elsewhere, with `timeoutMs` once it has waited that long. fn gets a handle on the locked
   * session (not a transaction).
   */
  withAdvisoryLock<T>(
    name: string,
    fn: (session: Queryable) => Promise<T>,
    options?: { wait?: boolean; timeoutMs?: number },
  ): Promise<{ acquired: true; value: T } | { acquired: false }>;
  /**
   * Takes the advisory lock `name` without waiting and holds it until `release()`, or answers null
   * when it is held elsewhere. Postgres: a session-level lock on a connection of its own, so the
   * server releases it the moment this process dies; PGlite: an in-process lock (the data folder
   * lock keeps other processes out). withAdvisoryLock on the same name sees it as held.
   * `applicationName` names the lock's session in pg_stat_activity while it holds the lock.
   */
  holdAdvisoryLock(name: string, options?: { applicationName?: string }): Promise<HeldLock | null>;
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
  /** The session holding the lock (Postgres: its own connection; PGlite: the database). */
  readonly session: Queryable;
  /**
   * Resolves when the session holding the lock ended before release() (Postgres: the server
   * restarted, terminated it, or the network dropped it): the lock is gone with it. Never
   * resolves on PGlite.
   */
  readonly lost: Promise<Error>;
  /**
   * Gives the session up without unlocking (it stopped answering): its connection is closed, so
   * the server drops the lock with it; `lost` resolves with `reason`.
   */
  abandon(reason: Error): Promise<void>;
}

/** Sessions that sit in an open transaction this long are ended by the server (pg only). */
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000;
/** TCP keepalive idle time and probe interval, both sides (pg only); 3 unanswered probes end the session. */
export const DEFAULT_KEEPALIVE_SECONDS = 10;

export interface OpenDatabaseOptions {
  /** pg only: connections in the pool (default 10). */
  poolSize?: number;
  /** pg only: application_name of every session (pg_stat_activity); default `cloudtally`. */
  applicationName?: string;
  /** pg only: idle_in_transaction_session_timeout of every session; 0 turns it off. */
  idleInTransactionTimeoutMs?: number;
  /**
   * pg only: TCP keepalives on every session, both ways (the client socket's, and the server's
   * tcp_keepalives_idle/interval with 3 probes and a tcp_user_timeout of 4 x this), so a silent
   * network partition ends the server session, and the locks it holds, within about 4 x this.
   */
  keepAliveSeconds?: number;
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

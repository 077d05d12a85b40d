/**
 * Start-up that fails fast and says why: a database that is not reachable yet is retried a few
 * times (a container starting beside its Postgres), one that refuses us for good (bad password,
 * no such database) is not; a failing migration stops the start with the migration's error.
 * Messages name the database as `host:port/db as user`, never with its password.
 */
import type { DatabaseSessionSettings } from '../config/index.js';
import { DataDirLockedError } from '../db/data-dir-lock.js';
import { openDatabase, type Database, type DatabaseConfig, type OpenDatabaseOptions } from '../db/connection.js';
import { migrateDatabase } from '../db/migrate.js';
import { describeDatabaseTarget } from '../db/url.js';
import type { Logger } from '../logger.js';

/**
 * A start-up failure an operator must fix; `exitCode` follows sysexits: 69 database unavailable,
 * 70 migrations failed, 73 the web port cannot be bound, 75 the PGlite folder is held by another
 * process (try again when it has stopped).
 */
export class StartupError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StartupError';
    this.exitCode = exitCode;
  }
}

export const EX_UNAVAILABLE = 69;
export const EX_SOFTWARE = 70;
export const EX_CANTCREAT = 73;
export const EX_TEMPFAIL = 75;

export interface ConnectRetryOptions {
  /** Attempts in all, the first included. Default 10. */
  attempts?: number;
  /** Wait between attempts. Default 3000. */
  delayMs?: number;
  logger: Logger;
  /** What is being opened, for messages: e.g. describeDatabaseTarget(url) or `PGlite in ./data`. */
  target: string;
  /** Waits between attempts; tests pass a fast one. */
  sleep?: (ms: number) => Promise<void>;
}

/** Postgres SQLSTATEs that no amount of waiting fixes (bad credentials, missing database or role). */
const PERMANENT_SQLSTATES = new Set(['28P01', '28000', '3D000', '42501']);

export async function connectWithRetry<T>(open: () => Promise<T>, options: ConnectRetryOptions): Promise<T> {
  const attempts = options.attempts ?? 10;
  const delayMs = options.delayMs ?? 3000;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 1; ; attempt++) {
    try {
      return await open();
    } catch (err) {
      if (err instanceof StartupError) throw err;
      const reason = reasonOf(err);
      const permanent = isPermanent(err);
      if (permanent || attempt >= attempts) {
        const why = permanent ? 'it refused the connection' : attempts === 1 ? 'it failed' : `${attempts} attempts failed`;
        throw new StartupError(`cannot open the database ${options.target} (${why}): ${reason}`, EX_UNAVAILABLE, { cause: err });
      }
      options.logger.warn(
        { database: options.target, attempt, attempts, retryInMs: delayMs, error: reason },
        'database not reachable yet; retrying',
      );
      await sleep(delayMs);
    }
  }
}

/** `host:port/db as user` for Postgres, `PGlite in <dir>` for the embedded database. */
export function databaseTargetOf(settings: DatabaseConfig): string {
  if (settings.driver === 'pg') return describeDatabaseTarget(settings.url);
  return settings.dataDir === 'memory://' || settings.dataDir === '' ? 'PGlite in memory' : `PGlite in ${settings.dataDir}`;
}

/** How this process opens its database sessions: the name they carry, and the configured bounds. */
export function sessionOptions(sessions: DatabaseSessionSettings, applicationName: string): OpenDatabaseOptions {
  return { applicationName, idleInTransactionTimeoutMs: sessions.idleInTransactionTimeoutMs, keepAliveSeconds: sessions.keepAliveSeconds };
}

/**
 * Opens the configured database and applies the migrations, failing with a StartupError that
 * says what to fix. Postgres is retried while unreachable; PGlite (a local folder) is tried once,
 * since waiting does not make a folder readable.
 */
export async function openMigratedDatabase(
  settings: DatabaseConfig,
  options: Omit<ConnectRetryOptions, 'target'> & { open?: OpenDatabaseOptions },
): Promise<Database> {
  const target = databaseTargetOf(settings);
  const attempts = settings.driver === 'pg' ? options.attempts : 1;
  const open = () =>
    openDatabase(settings, options.open).catch((err: unknown) => {
      // Waiting does not help, and the message already names the folder and the holder.
      if (err instanceof DataDirLockedError) throw new StartupError(err.message, EX_TEMPFAIL, { cause: err });
      throw err;
    });
  const database = await connectWithRetry(open, { ...options, attempts, target });
  try {
    await migrateOrFail(() => migrateDatabase(database), { logger: options.logger, target });
  } catch (err) {
    await database.close().catch(() => undefined); // the migration error is the one to report
    throw err;
  }
  return database;
}

/** Runs the migrations; a failure becomes a StartupError that says nothing was applied. */
export async function migrateOrFail(migrate: () => Promise<void>, options: { logger: Logger; target: string }): Promise<void> {
  const started = Date.now();
  try {
    await migrate();
  } catch (err) {
    // drizzle applies all pending migrations in one transaction: a failure leaves the schema as it was.
    throw new StartupError(
      `database migrations failed on ${options.target}; nothing was applied, the schema is as it was before: ${reasonOf(err)}`,
      EX_SOFTWARE,
      { cause: err },
    );
  }
  options.logger.info({ database: options.target, ms: Date.now() - started }, 'database migrations up to date');
}

function isPermanent(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && PERMANENT_SQLSTATES.has(code)) return true;
  }
  return false;
}

/** The error's message and those of its causes, deduplicated (openDatabase already wraps with the target). */
function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const message = e instanceof Error ? e.message : String(e);
    if (message && !parts.some((p) => p.includes(message))) parts.push(message);
  }
  return parts.join(': ') || 'unknown error';
}

/** The database (Postgres, or the embedded PGlite), its read replica, and how long history is kept. */
import type { Env } from './env.js';
import type { ConfigProblem } from './problems.js';
import type { ConfigShape, DatabaseSessionSettings } from './types.js';

export const DEFAULT_DB_LOCK_TIMEOUT_SECONDS = 5;

export function databaseSettings(vars: Env, problems: ConfigProblem[]): Pick<ConfigShape, 'database' | 'databaseReadUrl'> {
  if (vars.DATABASE_READ_URL && !vars.DATABASE_URL) {
    problems.push({
      path: 'DATABASE_READ_URL',
      message: 'needs DATABASE_URL: a read replica follows a Postgres primary (the embedded PGlite has none)',
    });
  }
  return {
    database: vars.DATABASE_URL ? { driver: 'pg', url: vars.DATABASE_URL } : { driver: 'pglite', dataDir: vars.CLOUDTALLY_DATA_DIR ?? './data' },
    databaseReadUrl: vars.DATABASE_READ_URL ?? null,
  };
}

/** The retention of snapshots and of their hourly detail: the variables win over the file. */
export function retentionSettings(
  vars: Env,
  file: { retention_days?: number | undefined; retention_hourly_days?: number | undefined } | null,
  problems: ConfigProblem[],
): Pick<ConfigShape, 'retentionDays' | 'retentionHourlyDays'> {
  const retentionDays = vars.CLOUDTALLY_RETENTION_DAYS ?? file?.retention_days ?? 90;
  // Default: hourly detail for the whole retention (history is stored as versions: an unchanged
  // resource costs almost nothing per collection, so thinning is no longer needed).
  const retentionHourlyDays = Math.min(vars.CLOUDTALLY_RETENTION_HOURLY_DAYS ?? file?.retention_hourly_days ?? retentionDays, retentionDays);
  const hourlyExplicit = vars.CLOUDTALLY_RETENTION_HOURLY_DAYS ?? file?.retention_hourly_days;
  if (hourlyExplicit !== undefined && hourlyExplicit > retentionDays) {
    problems.push({
      path: vars.CLOUDTALLY_RETENTION_HOURLY_DAYS !== undefined ? 'CLOUDTALLY_RETENTION_HOURLY_DAYS' : 'retention_hourly_days',
      message: `must not exceed the retention (${retentionDays} days)`,
    });
  }
  return { retentionDays, retentionHourlyDays };
}

/**
 * Bounds on a database session that stops moving (a frozen process, a lost network): an open
 * transaction left idle is ended after CLOUDTALLY_DB_IDLE_IN_TRANSACTION_SECONDS (60; 0 turns it
 * off); clean-up and maintenance statements wait at most CLOUDTALLY_DB_LOCK_TIMEOUT_SECONDS (5)
 * for a lock; TCP keepalives every CLOUDTALLY_DB_KEEPALIVE_SECONDS (10), 3 unanswered probes end
 * the session. Postgres only (PGlite is one in-process session).
 */
export function databaseSessionSettings(vars: Env): DatabaseSessionSettings {
  return {
    idleInTransactionTimeoutMs: (vars.CLOUDTALLY_DB_IDLE_IN_TRANSACTION_SECONDS ?? 60) * 1000,
    lockTimeoutMs: (vars.CLOUDTALLY_DB_LOCK_TIMEOUT_SECONDS ?? DEFAULT_DB_LOCK_TIMEOUT_SECONDS) * 1000,
    keepAliveSeconds: vars.CLOUDTALLY_DB_KEEPALIVE_SECONDS ?? 10,
  };
}

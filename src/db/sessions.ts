/**
 * Other sessions on the database, found by their application_name (every cloudtally process names
 * its sessions, db/postgres.ts): how many there are, and ending them. Postgres only: PGlite is one
 * session in one process, so there is never another one (both answer 0 there).
 *
 * The caller's own session, and every session carrying the caller's own application_name, are
 * never counted nor ended.
 */
import type { Queryable } from './connection.js';

const OTHERS = `application_name = ANY($1::text[])
   AND pid <> pg_backend_pid()
   AND application_name <> current_setting('application_name')
   AND datname = current_database()`;

/** Sessions of this database whose application_name is one of `names`. */
export async function countSessions(db: Queryable, names: readonly string[]): Promise<number> {
  if (db.driver !== 'pg' || names.length === 0) return 0;
  const rows = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${OTHERS}`, [names]);
  return rows[0]?.n ?? 0;
}

/**
 * Terminates the sessions of this database whose application_name is one of `names` (their open
 * transactions roll back and their locks are released), waiting up to `waitMs` for each to end.
 * Returns how many were ended; one that may not be ended (another role, without
 * pg_signal_backend) is left and not counted.
 */
export async function terminateSessions(db: Queryable, names: readonly string[], waitMs = 5_000): Promise<number> {
  if (db.driver !== 'pg' || names.length === 0) return 0;
  const sessions = await db.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE ${OTHERS}`, [names]);
  let ended = 0;
  for (const { pid } of sessions) {
    try {
      const [row] = await db.query<{ ok: boolean }>('SELECT pg_terminate_backend($1, $2) AS ok', [pid, waitMs]);
      if (row?.ok) ended++;
    } catch {
      // Not allowed to signal it: the lock timeouts of the clean-up still bound the wait.
    }
  }
  return ended;
}

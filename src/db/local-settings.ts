import type { Queryable } from './connection.js';
import { inTransaction } from './transaction.js';

/** Runs fn with settings changed for the current transaction, restoring the caller's afterwards. */
export async function withLocalSettings<T>(tx: Queryable, settings: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const names = Object.keys(settings);
  const [previous] = await tx.query<Record<string, string>>(`select ${names.map((_, i) => `current_setting($${i + 1}) as s${i}`).join(', ')}`, names);
  const apply = (values: readonly string[]) =>
    tx.query(`select ${names.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(', ')}`, names.flatMap((name, i) => [name, values[i]]));
  await apply(names.map((name) => settings[name]!));
  const value = await fn();
  await apply(names.map((_, i) => previous![`s${i}`]!));
  return value;
}

/**
 * Runs fn in a transaction (the caller's, when q is one; else a new one) whose lock waits give
 * up after `ms` with SQLSTATE 55P03 (isLockTimeout), so clean-up and maintenance never queue
 * behind a session that holds a lock and does not move.
 */
export function withLockTimeout<T>(q: Queryable, ms: number, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return inTransaction(q, (tx) => withLocalSettings(tx, { lock_timeout: `${Math.max(1, Math.round(ms))}ms` }, () => fn(tx)));
}

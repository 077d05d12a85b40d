import type { Database, Queryable } from './connection.js';

/** Runs fn in a transaction: the caller's, when q is one; else a new one. (JIT is off for every connection: db/postgres.ts.) */
export async function inTransaction<T>(q: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return isDatabase(q) ? q.transaction(fn) : fn(q);
}

function isDatabase(q: Queryable): q is Database {
  return typeof (q as Partial<Database>).transaction === 'function';
}

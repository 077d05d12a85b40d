/** The benchmarks' own databases on the local Postgres server: created, used, dropped. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The URL of database `name` on the server of `serverUrl`. */
export function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs fn with a client connected to the server's maintenance database (CREATE / DROP DATABASE). */
export async function onServer<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * A new database name for one run of benchmark `kind`: `ct_bench_<kind>_<pid>_<ms>_<random>`, so
 * two runs that start in the same millisecond (in one process or several) never collide.
 */
export function benchDatabaseName(kind: string): string {
  return `ct_bench_${kind}_${process.pid}_${Date.now()}_${randomBytes(4).toString('hex')}`;
}

/**
 * The name given to `--reuse`, checked: one that benchDatabaseName made for `kind` (or the
 * `ct_bench_<kind>_<digits>` of earlier versions), so nothing else is ever read or dropped.
 */
export function reusedDatabaseName(bench: string, kind: string, name: string | null): string | null {
  if (name === null) return null;
  if (!new RegExp(`^ct_bench_${kind}_(\\d+|\\d+_\\d+_[0-9a-f]{8})$`).test(name)) {
    throw new Error(`bench ${bench}: --reuse takes a database name ct_bench_${kind}_<pid>_<time>_<random> kept by an earlier --keep run`);
  }
  return name;
}

/** The benchmarks' own databases on the local Postgres server: created, used, dropped. */
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

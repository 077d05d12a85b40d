/**
 * Databases on the Citus cluster named by TEST_CITUS_URL (a coordinator, e.g. the one
 * scripts/citus-cluster.sh starts). Citus keeps its metadata per database, so each fresh database
 * is created on every node (citus.enable_create_database_propagation, Citus 12.1+), gets the
 * extension on every node, and the coordinator's own node list: the workers of the maintenance
 * database's pg_dist_node.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { distributeTables } from '../../src/db/citus-distribute.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import type { TestDatabase } from './databases.js';

export const CITUS_URL = process.env.TEST_CITUS_URL || undefined;
if (CITUS_URL && !/^postgres(ql)?:\/\//.test(CITUS_URL)) {
  // pg would read anything else as a path relative to postgres://base and fail on host "base"
  throw new Error(`TEST_CITUS_URL must be a postgres:// URL of a Citus coordinator, got ${JSON.stringify(CITUS_URL.replace(/:[^:@/]*@/, ':***@'))}`);
}

/** A Citus suite's title, which says why it is skipped when no coordinator is named. */
export function citusSuiteTitle(title: string): string {
  return CITUS_URL ? title : `${title} (skipped: set TEST_CITUS_URL to a Citus coordinator with workers)`;
}

export interface CitusDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, options: '-c client_min_messages=warning' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string, host?: string, port?: number): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  if (host) u.hostname = host;
  if (port) u.port = String(port);
  return u.toString();
}

export async function createCitusDatabase(baseUrl: string, prefix = 'ct_citus_test_'): Promise<CitusDatabase> {
  const name = `${prefix}${Date.now()}_${randomBytes(3).toString('hex')}`;
  const workers = await withClient(baseUrl, async (client) => {
    await client.query(`set citus.enable_create_database_propagation = on`);
    await client.query(`create database ${name}`);
    const rows = await client.query<{ host: string; port: number }>(
      `select nodename as host, nodeport as port from pg_dist_node where groupid <> 0 and noderole = 'primary' order by nodeid`,
    );
    return rows.rows;
  });
  for (const w of workers) {
    await withClient(withDatabase(baseUrl, name, w.host, w.port), (client) => client.query(`create extension if not exists citus`));
  }
  const url = withDatabase(baseUrl, name);
  const coordinator = new URL(baseUrl);
  await withClient(url, async (client) => {
    await client.query(`create extension if not exists citus`);
    await client.query(`select citus_set_coordinator_host($1, $2)`, [coordinator.hostname, Number(coordinator.port || 5432)]);
    for (const w of workers) await client.query(`select citus_add_node($1, $2)`, [w.host, w.port]);
  });
  return {
    url,
    name,
    drop: () =>
      withClient(baseUrl, async (client) => {
        await client.query(`set citus.enable_create_database_propagation = on`);
        await client.query(`drop database if exists ${name} with (force)`);
      }),
  };
}

export interface DistributedDatabase {
  db: Database;
  /** Closes the pool and drops the database on every node. */
  close(): Promise<void>;
}

/**
 * A fresh database on the coordinator `baseUrl` with the migrations applied, `seed` run while its
 * tables are still local (distributeTables keeps every row), then every table placed as the
 * distribute command places it; opened with a pool of 4.
 */
export async function openDistributedDatabase(baseUrl: string, seed?: (db: Database) => Promise<unknown>): Promise<DistributedDatabase> {
  const citus = await createCitusDatabase(baseUrl);
  const db = await openDatabase({ driver: 'pg', url: citus.url }, { poolSize: 4 });
  await migrateDatabase(db);
  if (seed) await seed(db);
  await distributeTables(db);
  return {
    db,
    close: async () => {
      await db.close();
      await citus.drop();
    },
  };
}

/**
 * The Citus cluster as one more target of the suites written for testDatabases(): each open()
 * gives a fresh distributed database (openDistributedDatabase), dropped on every node by its close().
 */
export function citusTestDatabase(): TestDatabase {
  return {
    name: 'citus',
    open: async () => {
      if (!CITUS_URL) throw new Error('citusTestDatabase: TEST_CITUS_URL is not set');
      const distributed = await openDistributedDatabase(CITUS_URL);
      return { ...distributed.db, close: distributed.close };
    },
  };
}

/**
 * The databases a database test runs against: PGlite in memory always, and real Postgres when
 * TEST_DATABASE_URL is set. Each open() gives a fresh, isolated database (on Postgres a new
 * `ct_test_<time>_<random>` database, dropped again by close()), migrated unless asked not to be.
 *
 *   describe.each(testDatabases())('$name', ({ open }) => { ... })
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { drizzle } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../src/db/migrate.js';
import { PGLITE_EXTENSIONS } from '../../src/db/pglite.js';

export interface TestDatabase {
  name: string;
  open(options?: { migrate?: boolean }): Promise<Database>;
}

const TEST_DB_PREFIX = 'ct_test_';
/** Databases of crashed runs older than this are dropped by the next run. */
const STALE_AFTER_MS = 60 * 60 * 1000;

export function testDatabases(): TestDatabase[] {
  const list: TestDatabase[] = [
    {
      name: 'pglite',
      open: async (options = {}) => {
        const dump = await pgliteDump(options.migrate !== false);
        return openDatabase({ driver: 'pglite', dataDir: 'memory://' }, { pgliteLoadDataDir: dump });
      },
    },
  ];
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    list.push({ name: 'postgres', open: (options = {}) => openFreshPostgres(url, options.migrate !== false) });
  }
  return list;
}

/**
 * PGlite's initdb takes ~2 s; loading a dump of a database takes ~0.5 s. So each test process
 * makes one fresh and one migrated database once, dumps them, and starts every PGlite from a dump.
 */
const dumps = new Map<boolean, Promise<Blob>>();
function pgliteDump(migrated: boolean): Promise<Blob> {
  let dump = dumps.get(migrated);
  if (!dump) {
    dump = (async () => {
      const client = await PGlite.create('memory://', { extensions: PGLITE_EXTENSIONS });
      try {
        if (migrated) await migratePglite(drizzle({ client }), { migrationsFolder: MIGRATIONS_FOLDER });
        return await client.dumpDataDir('none');
      } finally {
        await client.close();
      }
    })();
    dumps.set(migrated, dump);
  }
  return dump;
}

async function openFreshPostgres(baseUrl: string, migrate: boolean): Promise<Database> {
  const name = `${TEST_DB_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`;
  await withMaintenance(baseUrl, async (client) => {
    await dropStaleTestDatabases(client);
    await client.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ driver: 'pg', url: url.toString() }, { poolSize: 4 });
  if (migrate) await migrateDatabase(database);
  const close = database.close.bind(database);
  return {
    ...database,
    close: async () => {
      await close();
      await withMaintenance(baseUrl, async (client) => {
        // pool.end() resolves while its sockets may still be closing; let them go before FORCE.
        for (let i = 0; i < 40; i++) {
          const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [name]);
          if (rows[0]!.n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}

async function withMaintenance<T>(baseUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(baseUrl);
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function dropStaleTestDatabases(client: pg.Client): Promise<void> {
  const { rows } = await client.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE '${TEST_DB_PREFIX}%'`,
  );
  for (const { datname } of rows) {
    const createdAt = Number(/^ct_test_(\d+)_/.exec(datname)?.[1]);
    if (Number.isFinite(createdAt) && Date.now() - createdAt > STALE_AFTER_MS) {
      await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  }
}

/**
 * A fresh, empty Postgres database for a child process that needs its URL (migrated by that
 * process); drop() removes it again. Named like the others, so a crashed run's leftovers go too.
 */
export async function freshPostgresDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${TEST_DB_PREFIX}${Date.now()}_${randomBytes(4).toString('hex')}`;
  await withMaintenance(baseUrl, async (client) => {
    await dropStaleTestDatabases(client);
    await client.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => withMaintenance(baseUrl, async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

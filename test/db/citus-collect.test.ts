/**
 * One collection from the simulator into a database distributed by the distribute command's own
 * function (migrateDatabase + distributeTables) on the Citus coordinator named by TEST_CITUS_URL:
 * the run succeeds and stores as many rows in every table as the same collection from the same
 * simulator does on plain Postgres (TEST_DATABASE_URL) or else PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCollection } from '../../src/collect/index.js';
import { distributeTables } from '../../src/db/citus-distribute.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { CITUS_URL, createCitusDatabase, type CitusDatabase } from '../helpers/citus.js';
import { testDatabases } from '../helpers/databases.js';

async function collectOnce(database: Database) {
  const sim = await startTestSimulator();
  const config = testConfig();
  const client = testClient(sim, config);
  try {
    return await runCollection(testDeps(database, sim, client, config), { trigger: 'manual' });
  } finally {
    await client.close();
    await sim.close();
  }
}

/** Rows per table of the public schema, by name. */
async function rowCounts(database: Database): Promise<Record<string, number>> {
  const tables = await database.query<{ name: string }>(
    `select relname as name from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') and not relispartition order by 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await database.query<{ n: string }>(`select count(*) as n from "${name}"`);
    counts[name] = Number(row!.n);
  }
  return counts;
}

describe.skipIf(!CITUS_URL)('a collection on a distributed database (skipped: set TEST_CITUS_URL to a Citus coordinator with workers)', () => {
  let citus: CitusDatabase | undefined;
  beforeAll(async () => {
    citus = await createCitusDatabase(CITUS_URL!);
  }, 60_000);
  afterAll(async () => citus?.drop());

  it('succeeds and stores the same rows per table as on a plain database', async () => {
    const plainTarget = testDatabases().at(-1)!; // Postgres when TEST_DATABASE_URL is set, else PGlite
    const plain = await plainTarget.open();
    let expected: Record<string, number>;
    try {
      const summary = await collectOnce(plain);
      expect(summary.status, `${plainTarget.name}: ${JSON.stringify(summary)}`).toBe('succeeded');
      expected = await rowCounts(plain);
    } finally {
      await plain.close();
    }

    const database = await openDatabase({ driver: 'pg', url: citus!.url }, { poolSize: 4 });
    try {
      await migrateDatabase(database);
      await distributeTables(database);
      const summary = await collectOnce(database);
      const [run] = await database.query<{ errors: unknown }>(`select errors from collection_runs order by id desc limit 1`);
      expect(summary.status, JSON.stringify(run?.errors)).toBe('succeeded');
      expect(await rowCounts(database)).toEqual(expected);
    } finally {
      await database.close();
    }
  }, 300_000);
});

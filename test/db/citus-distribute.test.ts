/**
 * `npm run cli -- distribute` as a child process. On a Citus coordinator (TEST_CITUS_URL, e.g.
 * from scripts/citus-cluster.sh): a fresh database and one that already holds a collection from
 * the simulator are placed as src/db/distribution.ts says (checked in pg_dist_partition), a second
 * run changes nothing, and the sequences are past the rows; a database distributed under an
 * earlier release's schema takes the later migrations and has their tables placed by the next run.
 * On plain Postgres (TEST_DATABASE_URL)
 * the command refuses and changes nothing.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCollection } from '../../src/collect/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { distributeTables } from '../../src/db/citus-distribute.js';
import { DISTRIBUTED_TABLES, LOCAL_TABLES, REFERENCE_TABLES } from '../../src/db/distribution.js';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../src/db/migrate.js';
import { viewRowsSql } from '../../src/db/versions.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { CITUS_URL, citusSuiteTitle, createCitusDatabase, type CitusDatabase } from '../helpers/citus.js';
import { spawnCli } from '../helpers/cli.js';

interface Placement {
  table: string;
  method: string;
  replication: string;
  colocation: number;
  column: string | null;
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function distribute(url: string) {
  const cli = spawnCli(['distribute'], { DATABASE_URL: url, LOG_LEVEL: 'info' });
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}

const placements = (url: string) =>
  query<Placement & pg.QueryResultRow>(
    url,
    `select logicalrelid::regclass::text as table, partmethod::text as method, repmodel::text as replication, colocationid as colocation,
            case when partmethod = 'h' then column_to_column_name(logicalrelid, partkey) end as column
     from pg_dist_partition order by 1`,
  );

function expectPlacedAsPlanned(rows: Placement[]): void {
  const byTable = new Map(rows.map((r) => [r.table, r]));
  for (const table of REFERENCE_TABLES) expect(byTable.get(table), table).toMatchObject({ method: 'n', replication: 't' });
  for (const table of LOCAL_TABLES) expect(byTable.get(table), table).toBeUndefined();
  const groups = new Map<string, Set<number>>();
  for (const [table, column] of Object.entries(DISTRIBUTED_TABLES)) {
    expect(byTable.get(table), table).toMatchObject({ method: 'h', column });
    groups.set(column, (groups.get(column) ?? new Set()).add(byTable.get(table)!.colocation));
  }
  // One colocation group per distribution column type (scope_key text, snapshot_id integer), and two different ones.
  expect([...groups.values()].map((g) => g.size)).toEqual([1, 1]);
  expect(new Set([...groups.values()].map((g) => [...g][0])).size).toBe(2);
}

/** A database of its own on the cluster for the enclosing describe, dropped after it. */
function freshCitusDatabase(): { readonly url: string } {
  let db: CitusDatabase | undefined;
  beforeAll(async () => {
    db = await createCitusDatabase(CITUS_URL!);
  }, 60_000);
  afterAll(async () => db?.drop());
  return {
    get url() {
      return db!.url;
    },
  };
}

describe.skipIf(!CITUS_URL)(citusSuiteTitle('distribute on a Citus coordinator'), () => {
  describe('a fresh database', () => {
    const db = freshCitusDatabase();

    it('applies the migrations, places every table as planned, changes nothing the second time, places a table left out and refuses an unplanned one', async () => {
      const first = await distribute(db.url);
      expect(first.stderr).not.toMatch(/error/i);
      expect(first.code).toBe(0);
      const placed = Object.keys(DISTRIBUTED_TABLES).length + REFERENCE_TABLES.length;
      expect(first.stdout).toContain(`Placed ${placed} tables`);
      // The structured log names each table and what was done with it.
      expect(first.stdout).toMatch(/"table":"instances_versions".*"action":"distributed".*"column":"scope_key"/);
      const after = await placements(db.url);
      expectPlacedAsPlanned(after);

      const second = await distribute(db.url);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain('Nothing to change');
      expect(await placements(db.url)).toEqual(after);

      // A table placed by the plan but not on Citus (as after a release adds one) is placed by the next run alone.
      await query(db.url, `select undistribute_table('current_instances_stamp')`);
      const third = await distribute(db.url);
      expect(third.code).toBe(0);
      expect(third.stdout).toContain('Placed 1 tables');
      expectPlacedAsPlanned(await placements(db.url));

      // A table the plan does not place stops the command before it changes anything.
      await query(db.url, `create table unplaced_probe (id int primary key)`);
      await query(db.url, `select undistribute_table('current_instances_stamp')`);
      const refused = await distribute(db.url);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('tables without a placement in src/db/distribution.ts: unplaced_probe');
      expect((await placements(db.url)).find((p) => p.table === 'current_instances_stamp')).toBeUndefined();
    }, 240_000);
  });

  describe('a database that already holds a collection', () => {
    const db = freshCitusDatabase();

    it('keeps every row, places the tables and moves the sequences past the rows', async () => {
      const sim = await startTestSimulator();
      const config = testConfig();
      const client = testClient(sim, config);
      const database = await openDatabase({ driver: 'pg', url: db.url }, { poolSize: 4 });
      let before: { snapshots: string; versions: string; maxId: number; runs: string };
      try {
        await migrateDatabase(database);
        // Undistributed on the coordinator, collection works as on plain Postgres.
        const summary = await runCollection(testDeps(database, sim, client, config), { trigger: 'manual' });
        expect(summary.status).toBe('succeeded');
        [before] = (await database.query(
          `select (select count(*) from snapshots) as snapshots, (select count(*) from instances_versions) as versions,
                  (select max(id) from snapshots) as "maxId", (select count(*) from collection_runs) as runs`,
        )) as (typeof before)[];
      } finally {
        await database.close();
        await client.close();
        await sim.close();
      }
      expect(Number(before.snapshots)).toBeGreaterThan(1);
      expect(Number(before.versions)).toBeGreaterThan(0);

      const first = await distribute(db.url);
      expect(first.code).toBe(0);
      expectPlacedAsPlanned(await placements(db.url));
      const [after] = await query<typeof before & pg.QueryResultRow>(
        db.url,
        `select (select count(*) from snapshots) as snapshots, (select count(*) from instances_versions) as versions,
                (select max(id) from snapshots) as "maxId", (select count(*) from collection_runs) as runs`,
      );
      expect(after).toEqual(before);

      const second = await distribute(db.url);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain('Nothing to change');

      const [inserted] = await query<{ id: number }>(
        db.url,
        `insert into snapshots (kind, scope_key, complete) values ('instance', 'probe/${randomBytes(2).toString('hex')}', true) returning id`,
      );
      expect(inserted!.id).toBeGreaterThan(before.maxId);
      const [run] = await query<{ next: string; max: number }>(
        db.url,
        `select nextval(pg_get_serial_sequence('collection_runs', 'id'))::text as next, (select max(id) from collection_runs) as max`,
      );
      expect(Number(run!.next)).toBeGreaterThan(run!.max);
    }, 300_000);
  });
});

/** A copy of migrations/ without the migration `tag` and those after it: the schema of an earlier release. */
function migrationsBefore(tag: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'ct-migrations-'));
  cpSync(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalFile, 'utf8')) as { entries: Array<{ tag: string }> };
  const cut = journal.entries.findIndex((e) => e.tag === tag);
  if (cut < 0) throw new Error(`no migration ${tag}`);
  for (const entry of journal.entries.slice(cut)) rmSync(join(folder, `${entry.tag}.sql`));
  writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, cut) }));
  return folder;
}

describe.skipIf(!CITUS_URL)(citusSuiteTitle('distribute, then upgrade'), () => {
  describe('a database distributed before migration 0036 (unlogged staging)', () => {
    const db = freshCitusDatabase();

    it('applies the migration to the distributed tables, keeps every row, places the new tables and collects', async () => {
      const folder = migrationsBefore('0036_unlogged_staging');
      const rowsOf = (q: { query: Database['query'] }) =>
        // The view's rows read as reports read them (Citus cannot plan the view itself).
        q.query<{ snapshot_id: number; instance_id: string; name: string }>(
          `select r.snapshot_id, r.instance_id, r.name from ${viewRowsSql('instances', '(select id, kind, scope_key, taken_at, versioned from snapshots)', ['instance_id', 'name'])} r order by 1, 2`,
        );
      let before: Awaited<ReturnType<typeof rowsOf>>;
      const database = await openDatabase({ driver: 'pg', url: db.url }, { poolSize: 2 });
      try {
        await migrateDatabase(database, { migrationsFolder: folder });
        // A backfilled snapshot (rows kept, written through the view) and a folded one (versions).
        const [kept] = await database.query<{ id: number }>(
          `insert into snapshots (kind, scope_key, project_id, region_id, taken_at, complete) values ('instance', 'p1-r1', 1, 1, '2025-01-01T00:00:00Z', true) returning id`,
        );
        await database.execute(`insert into instances (snapshot_id, instance_id, name, raw) values ($1, 'i-1', 'kept-1', '{}'), ($1, 'i-2', 'kept-2', '{}')`, [kept!.id]);
        await database.execute(
          `insert into snapshots (kind, scope_key, project_id, region_id, taken_at, complete, versioned) values ('instance', 'p1-r1', 1, 1, '2025-01-02T00:00:00Z', true, true)`,
        );
        await database.execute(
          `insert into instances_versions (scope_key, instance_id, name, raw, valid_from) values ('p1-r1', 'i-1', 'folded-1', '{}', '2025-01-02T00:00:00Z'), ('p1-r1', 'i-3', 'folded-3', '{}', '2025-01-02T00:00:00Z')`,
        );
        await distributeTables(database);
        // Before 0036 the kept rows are in instances_staged.
        before = await database.query(
          `select t.snapshot_id, t.instance_id, t.name from instances_staged t
           union all
           select s.id, v.instance_id, v.name from snapshots s join instances_versions v on v.scope_key = s.scope_key and v.valid_from <= s.taken_at and coalesce(v.valid_to, 'infinity') > s.taken_at
            where s.versioned and s.kind = 'instance'
           order by 1, 2`,
        );
      } finally {
        await database.close();
        rmSync(folder, { recursive: true, force: true });
      }
      expect(before.map((r) => r.name)).toEqual(['kept-1', 'kept-2', 'folded-1', 'folded-3']);

      // The release's distribute: applies 0036 on the distributed tables, then places what it created.
      const upgraded = await distribute(db.url);
      expect(upgraded.stderr).not.toMatch(/error/i);
      expect(upgraded.code).toBe(0);
      expectPlacedAsPlanned(await placements(db.url));
      const [staging] = await query<{ persistence: string }>(db.url, `select relpersistence as persistence from pg_class where relname = 'instances_staged'`);
      expect(staging!.persistence).toBe('u');

      const sim = await startTestSimulator();
      const config = testConfig();
      const client = testClient(sim, config);
      const after = await openDatabase({ driver: 'pg', url: db.url }, { poolSize: 4 });
      try {
        expect(await rowsOf(after)).toEqual(before);
        const summary = await runCollection(testDeps(after, sim, client, config), { trigger: 'manual' });
        expect(summary.status).toBe('succeeded');
        const [collected] = await after.query<{ n: number }>(
          `select count(*)::int as n from snapshots where complete and versioned and kind = 'instance' and taken_at > '2025-01-03'`,
        );
        expect(collected!.n).toBeGreaterThan(0);
        // The earlier rows read as before, beside the new collection's.
        expect((await rowsOf(after)).filter((r) => before.some((b) => b.snapshot_id === r.snapshot_id))).toEqual(before);
      } finally {
        await after.close();
        await client.close();
        await sim.close();
      }
    }, 300_000);
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)('distribute on plain Postgres', () => {
  const name = `ct_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const base = process.env.TEST_DATABASE_URL ?? '';
  let url: string;
  beforeAll(async () => {
    const u = new URL(base);
    u.pathname = `/${name}`;
    url = u.toString();
    await query(base, `create database ${name}`);
  });
  afterAll(async () => {
    await query(base, `drop database if exists ${name} with (force)`);
  });

  it('refuses with a clear message and a non-zero exit, and changes nothing', async () => {
    const result = await distribute(url);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is not a Citus coordinator: the citus extension is not created in this database');
    expect(result.stderr).toContain('nothing was changed');
    const tables = await query(url, `select relname from pg_class where relnamespace = 'public'::regnamespace and relkind = 'r'`);
    expect(tables).toEqual([]);
  }, 60_000);
});

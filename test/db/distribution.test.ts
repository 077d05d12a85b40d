/**
 * The schema stays ready for Citus (docs/scaling.md): the catalog of a migrated database is
 * checked against the placement plan in src/db/distribution.ts. Citus refuses to distribute a
 * table whose primary key or unique constraint leaves out the distribution column, and refuses
 * foreign keys between a distributed table and a local one; this test fails the day a migration
 * would make either true, or adds a table without placing it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { DISTRIBUTED_TABLES, LOCAL_TABLES, placementOf, REFERENCE_TABLES } from '../../src/db/distribution.js';
import { testDatabases } from '../helpers/databases.js';

interface UniqueKey {
  table: string;
  name: string;
  columns: string[];
}

interface ForeignKey {
  table: string;
  name: string;
  columns: string[];
  target: string;
  targetColumns: string[];
}

describe.each(testDatabases())('Citus-ready schema on $name', ({ open }) => {
  let db: Database;
  let tables: string[];
  beforeAll(async () => {
    db = await open();
    tables = (
      await db.query<{ name: string }>(
        `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition and c.relname not like '__drizzle%'
         order by 1`,
      )
    ).map((r) => r.name);
  }, 120_000);
  afterAll(async () => db?.close());

  /** Primary keys, unique constraints and unique indexes (a unique index is a unique key to Citus). */
  const uniqueKeys = () =>
    db.query<UniqueKey & Record<string, unknown>>(
      `select t.relname as table, i.relname as name,
         array(select a.attname::text from unnest(x.indkey) with ordinality k(attnum, ord)
               join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.attnum order by k.ord) as columns
       from pg_index x join pg_class t on t.oid = x.indrelid join pg_class i on i.oid = x.indexrelid
       join pg_namespace n on n.oid = t.relnamespace
       where n.nspname = 'public' and x.indisunique`,
    );

  const foreignKeys = () =>
    db.query<ForeignKey & Record<string, unknown>>(
      `select s.relname as table, c.conname as name, t.relname as target,
         array(select a.attname::text from unnest(c.conkey) with ordinality k(attnum, ord)
               join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum order by k.ord) as columns,
         array(select a.attname::text from unnest(c.confkey) with ordinality k(attnum, ord)
               join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.attnum order by k.ord) as "targetColumns"
       from pg_constraint c join pg_class s on s.oid = c.conrelid join pg_class t on t.oid = c.confrelid
       join pg_namespace n on n.oid = s.relnamespace
       where n.nspname = 'public' and c.contype = 'f'`,
    );

  it('places every table exactly once, and names no table that does not exist', () => {
    const unplaced = tables.filter((t) => placementOf(t) === null);
    expect(unplaced, 'tables without a placement in src/db/distribution.ts').toEqual([]);
    const planned = [...Object.keys(DISTRIBUTED_TABLES), ...REFERENCE_TABLES, ...LOCAL_TABLES];
    expect(new Set(planned).size).toBe(planned.length);
    expect(planned.filter((t) => !tables.includes(t)), 'planned tables missing from the schema').toEqual([]);
  });

  it('keeps the distribution column in every primary key, unique constraint and unique index of a distributed table', async () => {
    const keys = await uniqueKeys();
    const distributedKeys = keys.filter((k) => k.table in DISTRIBUTED_TABLES);
    // Every distributed table has at least its primary key (checked, not assumed).
    expect(new Set(distributedKeys.map((k) => k.table)).size).toBe(Object.keys(DISTRIBUTED_TABLES).length);
    const lacking = distributedKeys.filter((k) => !k.columns.includes(DISTRIBUTED_TABLES[k.table]!)).map((k) => `${k.table}.${k.name} (${k.columns.join(', ')})`);
    expect(lacking).toEqual([]);
  });

  it('has no foreign key between a distributed and a local table, and only colocated ones between distributed tables', async () => {
    const problems: string[] = [];
    for (const fk of await foreignKeys()) {
      const from = placementOf(fk.table);
      const to = placementOf(fk.target);
      const what = `${fk.table}.${fk.name} -> ${fk.target}`;
      if ((from === 'distributed' && to === 'local') || (from === 'local' && to === 'distributed')) problems.push(`${what}: between a distributed and a local table`);
      if (from === 'reference' && to !== 'reference') problems.push(`${what}: a reference table may only point to reference tables`);
      if (from === 'distributed' && to === 'distributed') {
        const column = DISTRIBUTED_TABLES[fk.table]!;
        const at = fk.columns.indexOf(column);
        if (at < 0 || fk.targetColumns[at] !== DISTRIBUTED_TABLES[fk.target]) problems.push(`${what}: not on the distribution columns`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('would catch a unique key without the distribution column (the check can fail)', async () => {
    await db.query(`create table instances_versions_probe (like instances_versions)`);
    try {
      await db.query(`create unique index instances_versions_probe_uq on instances_versions_probe (instance_id, valid_from)`);
      const keys = await uniqueKeys();
      const probe = keys.find((k) => k.name === 'instances_versions_probe_uq');
      expect(probe?.columns).toEqual(['instance_id', 'valid_from']);
      expect(probe!.columns.includes(DISTRIBUTED_TABLES.instances_versions!)).toBe(false);
    } finally {
      await db.query(`drop table instances_versions_probe`);
    }
  });
});

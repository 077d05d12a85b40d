/**
 * Statistics after a run (src/db/analyse.ts): a table never analysed, and one whose rows changed
 * past autovacuum's threshold, is analysed, on PGlite (no autovacuum) and Postgres; one that did
 * not change enough since is left alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyseChangedTables } from '../../src/db/analyse.js';
import type { Database } from '../../src/db/connection.js';
import { testDatabases } from '../helpers/databases.js';

describe.each(testDatabases())('$name', ({ open }) => {
  let db: Database;
  beforeAll(async () => {
    db = await open();
    await analyseChangedTables(db);
  });
  afterAll(async () => db.close());

  const statistics = async (table: string) =>
    (await db.query<{ n: number }>(`select count(*)::int as n from pg_stats where schemaname = 'public' and tablename = $1`, [table]))[0]!.n;

  it('analyses a table never analysed, then again once 50 rows and a tenth of it changed', async () => {
    // beforeAll analysed every table once (never analysed before).
    expect(await analyseChangedTables(db)).toEqual([]);
    await db.execute(
      `insert into resource_presence (kind, scope_key, resource_id, first_seen_at)
       select 'instance', 'p1-r1', 'i-' || n, now() from generate_series(1, 40) n`,
    );
    // 40 changed rows: under the threshold, however long the counts take to arrive.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await analyseChangedTables(db)).toEqual([]);
    expect(await statistics('resource_presence')).toBe(0);
    await db.execute(
      `insert into resource_presence (kind, scope_key, resource_id, first_seen_at)
       select 'instance', 'p1-r1', 'j-' || n, now() from generate_series(1, 200) n`,
    );
    await expect.poll(() => analyseChangedTables(db), { timeout: 10_000, interval: 250 }).toContain('resource_presence');
    expect(await statistics('resource_presence')).toBeGreaterThan(0);
    expect(await analyseChangedTables(db)).toEqual([]);
  });
});

/**
 * Migration in place (issue 15): a database at the 0007 schema holding the golden history's data
 * (captured with the per-snapshot storage) is migrated to versions; every report then answers
 * exactly the golden JSON, every snapshot holds exactly its rows, and nothing was lost. On PGlite
 * and on Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { recomputeRollups } from '../../src/collect/recompute.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { testDatabases } from '../helpers/databases.js';
import { captureReports, captureSnapshotRows, goldenConfig, openGolden0007, readFixture } from './golden.js';

describe.each(testDatabases())('migration of the golden history to versions on $name', ({ open }) => {
  let db: Database;
  let before: Awaited<ReturnType<typeof captureSnapshotRows>>;
  let unsortedBefore: number;
  const data = readFixture<Record<string, string[]>>('data-0007.json');

  beforeAll(async () => {
    db = await openGolden0007(open);
    before = await captureSnapshotRows(db);
    unsortedBefore = await unsortedGroups(db);
    await migrateDatabase(db);
  }, 300_000);
  afterAll(async () => {
    await db?.close();
  });

  it('keeps exactly the rows of every complete snapshot', async () => {
    const golden = before;
    const rows = await captureSnapshotRows(db);
    expect(Object.keys(rows).sort()).toEqual(Object.keys(golden).sort());
    for (const key of Object.keys(golden)) expect(rows[key], key).toEqual(golden[key]);
  });

  it('puts every instance\'s security groups in order (migration 0022): the 0007 data had them in page order', async () => {
    expect(unsortedBefore).toBeGreaterThan(0);
    expect(await unsortedGroups(db)).toBe(0);
  });

  it('folds every complete snapshot into versions and leaves nothing staged', async () => {
    const [s] = await db.query<{ complete: string; versioned: string }>(
      `select count(*) filter (where complete) as complete, count(*) filter (where versioned) as versioned from snapshots`,
    );
    expect(s!.versioned).toBe(s!.complete);
    const [staged] = await db.query<{ n: string }>(`select (select count(*) from instances_staged) + (select count(*) from image_tags_staged) as n`);
    expect(staged!.n).toBe('0');
  });

  it('keeps every other table as it was', async () => {
    for (const table of ['collection_runs', 'snapshots', 'unread_instance_ports', 'resource_presence', 'cost_rollups']) {
      const [c] = await db.query<{ n: string }>(`select count(*) as n from ${table}`);
      expect(Number(c!.n), table).toBe(data[table]!.length);
    }
  });

  for (const step of [5] as const) {
    it(`answers every report exactly as the golden fixture (step ${step}, the data's last), once recompute-rollups has counted the GPUs`, async () => {
      // Release 0007 counted no GPUs: its rollups' GPU columns stay unknown (never zero) until
      // `recompute-rollups`, the documented upgrade step, rebuilds the rollups of kept snapshots.
      const summary = await recomputeRollups(db, goldenConfig());
      expect(summary.failures).toEqual([]);
      expect(summary.retaggedRows).toBe(0);
      const golden = readFixture<Record<string, unknown>>(`reports-step${step}.json`);
      const reports = await captureReports(db, goldenConfig(), step);
      expect(Object.keys(reports)).toEqual(Object.keys(golden));
      for (const path of Object.keys(golden)) expect(reports[path], path).toEqual(golden[path]);
    });
  }
});

/** Instance rows (of every snapshot) whose security group ids are not in sorted order. */
async function unsortedGroups(db: Database): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from instances where security_group_ids <> array(select g from unnest(security_group_ids) g order by g)`,
  );
  return row!.n;
}

/**
 * Retention on versions (issue 15): thinning deletes snapshot rows only, the kept snapshots keep
 * exactly their rows, and the versions no remaining snapshot sees are deleted. On the golden
 * history (six hourly collections on 2025-06-01), on PGlite and Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneHistory } from '../../src/collect/index.js';
import type { Database } from '../../src/db/connection.js';
import { VERSIONED_TABLES } from '../../src/db/versions.js';
import { silentLogger } from '../../src/logger.js';
import { testConfig } from '../collect/helpers.js';
import { testDatabases } from '../helpers/databases.js';
import { buildGoldenHistory, captureSnapshotRows, type GoldenHistory } from './golden.js';

describe.each(testDatabases())('retention on versions ($name)', ({ open }) => {
  let db: Database;
  let history: GoldenHistory;
  let before: Awaited<ReturnType<typeof captureSnapshotRows>>;

  beforeAll(async () => {
    db = await open();
    history = await buildGoldenHistory(db);
    before = await captureSnapshotRows(db);
  }, 300_000);
  afterAll(async () => {
    await history?.close();
    await db?.close();
  });

  const unseenVersions = async () => {
    let n = 0;
    for (const t of VERSIONED_TABLES) {
      const [row] = await db.query<{ n: string }>(
        `select count(*) as n from ${t.versions} v
          where not exists (select 1 from snapshots s where s.versioned and s.kind = $1 and s.scope_key = v.scope_key
                              and s.taken_at >= v.valid_from and s.taken_at < coalesce(v.valid_to, 'infinity'::timestamptz))`,
        [t.kind],
      );
      n += Number(row!.n);
    }
    return n;
  };

  it('thins 2025-06-01 to its last snapshot per (kind, scope); those keep exactly their rows; unseen versions go', async () => {
    // Hourly detail for 1 day: on 06-03 the whole of 06-01 is thinned (retention 30 days keeps it).
    const config = testConfig({ retention_days: 30, retention_hourly_days: 1 });
    const result = await pruneHistory({ db, config, logger: silentLogger() }, { now: new Date('2025-06-03T06:00:00Z') });
    expect(result.snapshotsDeleted).toBeGreaterThan(0);
    const after = await captureSnapshotRows(db);
    // One snapshot left per (kind, scope): its rows exactly as before thinning.
    const kinds = new Set(Object.keys(before).map((k) => k.split(' ').slice(1).join(' ')));
    expect(Object.keys(after).length).toBe(kinds.size);
    for (const key of Object.keys(after)) expect(after[key], key).toEqual(before[key]);
    expect(await unseenVersions()).toBe(0);
  });

  it('deletes every snapshot past retention and the versions with them', async () => {
    const config = testConfig({ retention_days: 1, retention_hourly_days: 1 });
    await pruneHistory({ db, config, logger: silentLogger() }, { now: new Date('2025-06-04T00:00:00Z') });
    const [s] = await db.query<{ n: string }>(`select count(*) as n from snapshots`);
    expect(s!.n).toBe('0');
    for (const t of VERSIONED_TABLES) {
      const [v] = await db.query<{ n: string }>(`select count(*) as n from ${t.versions}`);
      expect(v!.n, t.versions).toBe('0');
    }
  });
});

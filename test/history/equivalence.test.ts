/**
 * Equivalence (issue 15): the demo collected through the golden steps (see golden.ts) answers
 * every report, every diff between snapshots and the rows of every snapshot exactly as the
 * fixtures captured with the storage of release 0007. On PGlite and on Postgres.
 *
 * UPDATE_HISTORY_GOLDEN=1 rewrites the fixtures instead (only ever from the old storage).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { testDatabases } from '../helpers/databases.js';
import { request } from 'undici';
import { startReportsApp } from '../reports/helpers.js';
import { buildGoldenHistory, captureReports, captureSnapshotRows, dumpData, goldenConfig, hoursAfterT0, normalise, openGolden0007, readFixture, writeFixture, type GoldenHistory } from './golden.js';

const UPDATE = process.env.UPDATE_HISTORY_GOLDEN === '1';
/** Steps after which every report is captured: an older moment and the last one. */
export const CAPTURED_STEPS = [2, 5] as const;

describe.each(testDatabases())('history equivalence on $name', ({ name, open }) => {
  let db: Database;
  let history: GoldenHistory;
  const reports: Record<number, Record<string, unknown>> = {};
  let snapshotRows: Awaited<ReturnType<typeof captureSnapshotRows>>;

  beforeAll(async () => {
    db = await open();
    history = await buildGoldenHistory(db, async (step) => {
      if ((CAPTURED_STEPS as readonly number[]).includes(step)) reports[step] = await captureReports(db, goldenConfig(), step);
    });
    snapshotRows = await captureSnapshotRows(db);
    if (UPDATE && name === 'pglite') {
      for (const step of CAPTURED_STEPS) writeFixture(`reports-step${step}.json`, reports[step]);
      writeFixture('data-0007.json', await dumpData(db));
    }
  }, 300_000);
  afterAll(async () => {
    await history?.close();
    await db?.close();
  });

  for (const step of CAPTURED_STEPS) {
    it(`answers every report as of step ${step} exactly as the golden fixture`, () => {
      const golden = readFixture<Record<string, unknown>>(`reports-step${step}.json`);
      expect(Object.keys(reports[step]!)).toEqual(Object.keys(golden));
      for (const path of Object.keys(golden)) expect(reports[step]![path], path).toEqual(golden[path]);
    });
  }

  it('answers the inventory as of an earlier collection (at=) as the inventory answered then', async () => {
    const golden = readFixture<Record<string, { rows: Record<string, unknown>[] }>>('reports-step2.json');
    const app = await startReportsApp(() => ({ db, config: goldenConfig(), now: hoursAfterT0(5) }));
    try {
      for (const kind of ['instances', 'clusters', 'servers', 'ports', 'keypairs', 'storage-keys', 'image-tags', 'free-features']) {
        const then = golden[`/api/reports/inventory?kind=${kind}&limit=10000`]!.rows;
        const res = await request(`${app.base}/api/reports/inventory?kind=${kind}&limit=10000&at=${hoursAfterT0(2).toISOString()}`);
        expect(res.statusCode, kind).toBe(200);
        const body = (await res.body.json()) as { rows: Record<string, unknown>[]; notes: string[] };
        // Presence (first and last seen) is about the resource's whole life, read now; the stop
        // link is offered only on the current inventory. Everything collected is as it was.
        const asCollected = (rows: Record<string, unknown>[]) =>
          rows.map(({ first_seen: _f, last_seen: _l, stop_href: _s, ...rest }) => normalise(rest));
        expect(asCollected(body.rows), kind).toEqual(asCollected(then));
        expect(body.notes[0]).toContain(`As of ${hoursAfterT0(2).toISOString()}`);
      }
      // ...while the latest inventory differs from step 2's (step 4 put the retagged instance's team back).
      const latest = (await (await request(`${app.base}/api/reports/inventory?kind=instances&limit=10000`)).body.json()) as { rows: Record<string, unknown>[] };
      const teams = (rows: Record<string, unknown>[]) => rows.map((r) => (r.tags as Record<string, string> | null)?.team ?? null);
      expect(teams(latest.rows)).not.toEqual(teams(golden['/api/reports/inventory?kind=instances&limit=10000']!.rows));
      const before = await request(`${app.base}/api/reports/inventory?kind=instances&at=2025-05-01`);
      expect(((await before.body.json()) as { rows: unknown[]; notes: string[] }).rows).toEqual([]);
      const bad = await request(`${app.base}/api/reports/inventory?kind=instances&at=yesterday`);
      expect(bad.statusCode).toBe(400);
      expect(await bad.body.text()).toContain('at must be an ISO 8601 time');
    } finally {
      await app.close();
    }
  });

  it('stores each unchanged resource once: every complete snapshot folded, nothing left staged', async () => {
    const [snaps] = await db.query<{ complete: string; versioned: string }>(
      `select count(*) filter (where complete) as complete, count(*) filter (where versioned) as versioned from snapshots`,
    );
    expect(snaps!.versioned).toBe(snaps!.complete);
    for (const table of ['instances', 'gpu_clusters', 'instance_ports', 'image_tags']) {
      const [c] = await db.query<{ staged: string; versions: string; rows: string }>(
        `select (select count(*) from ${table}_staged) + (select count(*) from ${table}_kept) as staged, (select count(*) from ${table}_versions) as versions, (select count(*) from ${table}) as rows`,
      );
      expect(c!.staged, table).toBe('0');
      // Six collections: far fewer versions than rows (a version per change, not per collection).
      expect(Number(c!.versions) * 3, table).toBeLessThan(Number(c!.rows));
    }
  });

  it('holds exactly the golden rows in every complete snapshot (the 0007 data, loaded into the 0007 schema)', async () => {
    const old = await openGolden0007(open);
    const golden = await captureSnapshotRows(old).finally(() => old.close());
    expect(Object.keys(snapshotRows).sort()).toEqual(Object.keys(golden).sort());
    for (const key of Object.keys(golden)) expect(snapshotRows[key], key).toEqual(golden[key]);
  });
});

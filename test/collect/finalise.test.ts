/**
 * The finalising transaction of a snapshot (collect/snapshot-writer.ts) on what an unchanged
 * collection no longer rewrites: presence with an implicit last seen, rollups copied from the
 * previous snapshot, and staged rows without a foreign key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSnapshot, type SnapshotWriter } from '../../src/collect/snapshot-writer.js';
import { pruneHistory } from '../../src/collect/retention.js';
import type { Database } from '../../src/db/connection.js';
import { deleteSnapshots } from '../../src/db/delete-snapshots.js';
import { reclaimStagingSpace } from '../../src/db/versions.js';
import { computeCostRollups, writeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instancePorts, instances, type SnapshotKind } from '../../src/db/schema.js';
import { silentLogger } from '../../src/logger.js';
import { testDatabases } from '../helpers/databases.js';
import { testConfig } from './helpers.js';

const SCOPE = 'p1-r1';
const at = (hour: number) => new Date(Date.UTC(2025, 0, 10, hour));

type Instance = { id: string; name?: string; flavor?: string; status?: string };

describe.each(testDatabases())('finalising snapshots ($name)', ({ name, open }) => {
  let db: Database;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(async () => {
    await db?.close();
  });

  async function writeSnapshot(kind: SnapshotKind, scopeKey: string, takenAt: Date, write: (writer: SnapshotWriter) => Promise<unknown>): Promise<number> {
    const writer = await openSnapshot(db, { runId: null, kind, scopeKey, projectId: 1, regionId: 1, takenAt });
    await write(writer);
    await writer.finalise();
    return writer.id;
  }

  function collectInstances(scopeKey: string, takenAt: Date, list: Instance[]): Promise<number> {
    return writeSnapshot('instance', scopeKey, takenAt, (writer) =>
      writer.insert(
        instances,
        list.map((i) => ({
          snapshotId: writer.id,
          instanceId: i.id,
          name: i.name ?? `vm-${i.id}`,
          status: i.status ?? 'ACTIVE',
          flavorName: i.flavor ?? 'g1',
          tags: { team: 'ml' },
          raw: { id: i.id },
        })),
      ),
    );
  }

  async function presence(kind: string, scopeKey: string): Promise<Record<string, unknown>> {
    const rows = await db.query<{ resource_id: string; name: string; first_seen_at: Date; last_seen_at: Date; gone_at: Date | null; first_snapshot_id: number; last_snapshot_id: number }>(
      `SELECT resource_id, name, first_seen_at, last_seen_at, gone_at, first_snapshot_id, last_snapshot_id
         FROM resource_presence_seen WHERE kind = $1 AND scope_key = $2 ORDER BY resource_id`,
      [kind, scopeKey],
    );
    return Object.fromEntries(rows.map((r) => [r.resource_id, { ...r, resource_id: undefined }]));
  }

  const seen = (name: string, first: Date, last: Date, gone: Date | null, firstId: number, lastId: number) => ({
    name,
    first_seen_at: first,
    last_seen_at: last,
    gone_at: gone,
    first_snapshot_id: firstId,
    last_snapshot_id: lastId,
    resource_id: undefined,
  });

  it('keeps first and last seen through disappearing, unchanged, returning, renamed and backfilled snapshots', async () => {
    const scope = 'p1-r2';
    const s1 = await collectInstances(scope, at(1), [{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    const s2 = await collectInstances(scope, at(2), [{ id: 'a' }, { id: 'b' }]);
    expect(await presence('instance', scope)).toEqual({
      a: seen('vm-a', at(1), at(2), null, s1, s2),
      b: seen('vm-b', at(1), at(2), null, s1, s2),
      c: seen('vm-c', at(1), at(1), at(2), s1, s1),
    });
    // Unchanged: nothing but the scope's last seen is written.
    const s3 = await collectInstances(scope, at(3), [{ id: 'a' }, { id: 'b' }]);
    expect(await presence('instance', scope)).toEqual({
      a: seen('vm-a', at(1), at(3), null, s1, s3),
      b: seen('vm-b', at(1), at(3), null, s1, s3),
      c: seen('vm-c', at(1), at(1), at(2), s1, s1),
    });
    const [stored] = await db.query<{ implicit: number }>(
      `SELECT count(*)::int AS implicit FROM resource_presence WHERE kind = 'instance' AND scope_key = $1 AND last_seen_at IS NULL`,
      [scope],
    );
    expect(stored!.implicit).toBe(2);
    // c comes back, b goes.
    const s4 = await collectInstances(scope, at(4), [{ id: 'a' }, { id: 'c' }]);
    expect(await presence('instance', scope)).toEqual({
      a: seen('vm-a', at(1), at(4), null, s1, s4),
      b: seen('vm-b', at(1), at(3), at(4), s1, s3),
      c: seen('vm-c', at(1), at(4), null, s1, s4),
    });
    // A backfilled older snapshot only widens first seen, and records what only it saw.
    const s0 = await collectInstances(scope, at(0), [{ id: 'a' }, { id: 'd' }]);
    expect(await presence('instance', scope)).toEqual({
      a: seen('vm-a', at(0), at(4), null, s0, s4),
      b: seen('vm-b', at(1), at(3), at(4), s1, s3),
      c: seen('vm-c', at(1), at(4), null, s1, s4),
      d: seen('vm-d', at(0), at(0), null, s0, s0),
    });
    // Renamed a; c and d missing.
    const s5 = await collectInstances(scope, at(5), [{ id: 'a', name: 'renamed' }]);
    expect(await presence('instance', scope)).toEqual({
      a: seen('renamed', at(0), at(5), null, s0, s5),
      b: seen('vm-b', at(1), at(3), at(4), s1, s3),
      c: seen('vm-c', at(1), at(4), at(5), s1, s4),
      d: seen('vm-d', at(0), at(0), at(5), s0, s0),
    });
    // An empty complete snapshot: everything gone, last seen kept.
    await collectInstances(scope, at(6), []);
    expect(await presence('instance', scope)).toMatchObject({ a: { last_seen_at: at(5), gone_at: at(6) } });
  });

  it('keeps the last seen of ports carried over unread, neither advancing nor gone', async () => {
    const scope = 'p1-r3';
    const ports = (list: { port: string; readAt?: Date }[]) => (writer: SnapshotWriter) =>
      writer.insert(
        instancePorts,
        list.map((p) => ({ snapshotId: writer.id, instanceId: 'i-1', portId: p.port, name: p.port, raw: {}, readAt: p.readAt ?? null })),
      );
    const s1 = await writeSnapshot('port', scope, at(1), ports([{ port: 'x' }, { port: 'y' }]));
    // y's instance could not be read: y carried with its read time, twice.
    await writeSnapshot('port', scope, at(2), ports([{ port: 'x' }, { port: 'y', readAt: at(1) }]));
    const s3 = await writeSnapshot('port', scope, at(3), ports([{ port: 'x' }, { port: 'y', readAt: at(1) }]));
    expect(await presence('port', scope)).toEqual({
      x: seen('x', at(1), at(3), null, s1, s3),
      y: seen('y', at(1), at(1), null, s1, s1),
    });
    const s4 = await writeSnapshot('port', scope, at(4), ports([{ port: 'x' }, { port: 'y' }]));
    expect(await presence('port', scope)).toEqual({
      x: seen('x', at(1), at(4), null, s1, s4),
      y: seen('y', at(1), at(4), null, s1, s4),
    });
  });

  describe('cost rollups of a snapshot repeating the previous one', () => {
    const flavorsAt = (takenAt: Date, price: string) =>
      writeSnapshot('flavor', SCOPE, takenAt, (writer) =>
        writer.insert(gpuFlavors, [
          { snapshotId: writer.id, flavorId: 'f1', flavorName: 'g1', currencyCode: 'EUR', pricePerHour: price, hardware: { gpu: '8 x H100' }, raw: {} },
          { snapshotId: writer.id, flavorId: 'f2', flavorName: 'g2', currencyCode: 'EUR', pricePerHour: '1.50', hardware: { gpu: null }, raw: {} },
        ]),
      );
    const fleet: Instance[] = [{ id: 'i1' }, { id: 'i2', flavor: 'g2' }, { id: 'i3', status: 'SHUTOFF' }, { id: 'i4', flavor: 'unknown' }];
    const rollups = (id: number) =>
      db.query(
        `SELECT dimension, group_value, currency, price_per_hour, price_per_month, resource_count, unpriced_count, gpu_count, gpu_price_per_hour, gpu_unknown_count, taken_at, scope_key
           FROM cost_rollups WHERE snapshot_id = $1 ORDER BY dimension, group_value, currency`,
        [id],
      );
    /** The rollups as writeCostRollups left them, then as computing them gives. */
    async function storedAndComputed(id: number): Promise<[unknown[], unknown[]]> {
      const stored = await rollups(id);
      await computeCostRollups(db, id);
      return [stored, await rollups(id)];
    }

    it('copies them when the rows and the flavor content are the same, equal to computing them', async () => {
      await flavorsAt(at(1), '10.00');
      const s1 = await collectInstances(SCOPE, at(1), fleet);
      // A new flavor snapshot with the same content: still the same prices.
      await flavorsAt(at(2), '10.00');
      const s2 = await collectInstances(SCOPE, at(2), fleet);
      expect(await db.transaction((tx) => writeCostRollups(tx, s2, s1))).toBe('copied');
      const [stored, computed] = await storedAndComputed(s2);
      expect(stored.length).toBeGreaterThan(10);
      expect(stored).toEqual(computed);
      expect(stored).toContainEqual(expect.objectContaining({ dimension: 'kind', currency: 'EUR', taken_at: at(2), scope_key: SCOPE }));
    });

    it('computes them when a flavor was repriced, or the rows changed', async () => {
      const [prev] = await db.query<{ id: number }>(`SELECT id FROM snapshots WHERE kind = 'instance' AND scope_key = $1 ORDER BY taken_at DESC LIMIT 1`, [SCOPE]);
      const f3 = await flavorsAt(at(3), '10.0');
      // Same value, another scale: another content (a new version), as received.
      expect(await db.query(`SELECT price_per_hour FROM gpu_flavors WHERE snapshot_id = $1 AND flavor_id = 'f1'`, [f3])).toEqual([{ price_per_hour: '10.0' }]);
      const s3 = await collectInstances(SCOPE, at(3), fleet);
      expect(await db.transaction((tx) => writeCostRollups(tx, s3, prev!.id))).toBe('computed');
      const [stored, computed] = await storedAndComputed(s3);
      expect(stored).toEqual(computed);
      // 10.0 x 1 running g1 instance: the price's own scale, not the previous snapshot's 10.00.
      expect(stored).toContainEqual(expect.objectContaining({ dimension: 'flavor', group_value: 'g1', price_per_hour: '10.0' }));
      expect(await db.transaction((tx) => writeCostRollups(tx, s3, null))).toBe('computed');
    });
  });

  describe('the unlogged staging buffer', () => {
    const rowsIn = async (table: string, id: number) =>
      (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE snapshot_id = $1`, [id]))[0]!.n;
    const pagesOf = async (table: string) => (await db.query<{ n: string }>(`SELECT pg_relation_size($1) AS n`, [table]))[0]!.n;

    it('is given back at once when every snapshot is finalised, and never while one is being written', async () => {
      await collectInstances('p7-r1', at(1), [{ id: 'a' }, { id: 'b' }]);
      const open = await openSnapshot(db, { runId: null, kind: 'instance', scopeKey: 'p7-r2', projectId: 7, regionId: 2, takenAt: at(1) });
      await open.insert(instances, [{ snapshotId: open.id, instanceId: 'c', raw: {} }]);
      // A snapshot being written: its rows stay, whatever the finalised ones left.
      expect(await reclaimStagingSpace(db, 'instance')).toEqual([]);
      expect(await rowsIn('instances_staged', open.id)).toBe(1);
      await open.finalise();
      expect(await reclaimStagingSpace(db, 'instance')).toEqual(['instances_staged']);
      expect(await pagesOf('instances_staged')).toBe('0');
      // Both snapshots read as written: the folded rows are versions.
      const rows = await db.query<{ instance_id: string }>(
        `SELECT instance_id FROM instances WHERE snapshot_id IN (SELECT id FROM snapshots WHERE scope_key IN ('p7-r1', 'p7-r2')) ORDER BY 1`,
      );
      expect(rows.map((r) => r.instance_id)).toEqual(['a', 'b', 'c']);
    });

    it.skipIf(name === 'pglite')('leaves a table a writer holds for the next reclaim, without waiting for it', async () => {
      await db.transaction(async (tx) => {
        await tx.execute('LOCK TABLE instances_staged IN ROW EXCLUSIVE MODE');
        expect(await reclaimStagingSpace(db, 'instance')).toEqual([]);
      });
      expect(await reclaimStagingSpace(db, 'instance')).toEqual(['instances_staged']);
    });

    it('moves a backdated snapshot to the logged kept rows, which the view and a later fold read', async () => {
      await collectInstances('p7-r3', at(5), [{ id: 'x' }]);
      const older = await collectInstances('p7-r3', at(4), [{ id: 'x' }, { id: 'y', name: 'old' }]);
      expect(await rowsIn('instances_staged', older)).toBe(0);
      expect(await rowsIn('instances_kept', older)).toBe(2);
      const [snapshot] = await db.query<{ versioned: boolean }>('SELECT versioned FROM snapshots WHERE id = $1', [older]);
      expect(snapshot!.versioned).toBe(false);
      const rows = await db.query<{ instance_id: string; name: string }>('SELECT instance_id, name FROM instances WHERE snapshot_id = $1 ORDER BY 1', [older]);
      expect(rows).toEqual([
        { instance_id: 'x', name: 'vm-x' },
        { instance_id: 'y', name: 'old' },
      ]);
      // Rows written through the view are kept rows too; folding the snapshot takes them along.
      const writer = await openSnapshot(db, { runId: null, kind: 'instance', scopeKey: 'p7-r3', projectId: 7, regionId: 3, takenAt: at(6) });
      await db.execute(`INSERT INTO instances (snapshot_id, instance_id, name, raw) VALUES ($1, 'z', 'through the view', '{}')`, [writer.id]);
      expect(await rowsIn('instances_kept', writer.id)).toBe(1);
      await writer.finalise();
      expect(await rowsIn('instances_kept', writer.id)).toBe(0);
      const folded = await db.query<{ instance_id: string; versioned: boolean }>(
        'SELECT i.instance_id, s.versioned FROM instances i JOIN snapshots s ON s.id = i.snapshot_id WHERE i.snapshot_id = $1',
        [writer.id],
      );
      expect(folded).toEqual([{ instance_id: 'z', versioned: true }]);
    });
  });

  describe('staged rows without a foreign key', () => {
    const stagedCount = async (id: number) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM instances_staged WHERE snapshot_id = $1', [id]))[0]!.n;

    it('go with their snapshot when it is deleted', async () => {
      const writer = await openSnapshot(db, { runId: null, kind: 'instance', scopeKey: 'p1-r9', projectId: 1, regionId: 1, takenAt: at(1) });
      await writer.insert(instances, [{ snapshotId: writer.id, instanceId: 'i1', raw: {} }]);
      expect(await stagedCount(writer.id)).toBe(1);
      expect(await db.transaction((tx) => deleteSnapshots(tx, 's.id = $1', [writer.id]))).toBe(1);
      expect(await stagedCount(writer.id)).toBe(0);
    });

    it('go with their snapshot when it is deleted, kept rows too', async () => {
      await collectInstances('p7-r4', at(9), [{ id: 'a' }]);
      const older = await collectInstances('p7-r4', at(8), [{ id: 'a' }, { id: 'b' }]);
      expect(await db.transaction((tx) => deleteSnapshots(tx, 's.id = $1', [older]))).toBe(1);
      expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM instances_kept WHERE snapshot_id = $1', [older]))[0]!.n).toBe(0);
    });

    it('written after their snapshot was deleted, are removed by discard and by retention', async () => {
      const writer = await openSnapshot(db, { runId: null, kind: 'instance', scopeKey: 'p1-r9', projectId: 1, regionId: 1, takenAt: at(2) });
      await db.execute('DELETE FROM snapshots WHERE id = $1', [writer.id]);
      await writer.insert(instances, [{ snapshotId: writer.id, instanceId: 'i1', raw: {} }]);
      await expect(writer.finalise()).rejects.toThrow(/cannot be completed/);
      await writer.discard();
      expect(await stagedCount(writer.id)).toBe(0);

      const late = await openSnapshot(db, { runId: null, kind: 'instance', scopeKey: 'p1-r9', projectId: 1, regionId: 1, takenAt: at(3) });
      await db.execute('DELETE FROM snapshots WHERE id = $1', [late.id]);
      await late.insert(instances, [{ snapshotId: late.id, instanceId: 'i1', raw: {} }]);
      await pruneHistory({ db, config: testConfig(), logger: silentLogger() }, { now: at(4) });
      expect(await stagedCount(late.id)).toBe(0);
    });
  });
});

import { and, desc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { auditLog, collectionRuns, costRollups, gpuClusters, gpuClusterServers, instances, resourcePresence, scopeKeyOf, snapshots, UNTAGGED, gpuClusterServersKept, gpuClustersKept, instancesKept } from '../../src/db/schema.js';
import { foldSnapshot } from '../../src/db/versions.js';
import { testDatabases } from '../helpers/databases.js';

describe.each(testDatabases())('schema on $name', ({ open }) => {
  let database: Database;
  let runId: number;

  beforeAll(async () => {
    database = await open();
    const [run] = await database.db
      .insert(collectionRuns)
      .values({ trigger: 'startup', collectors: ['clusters', 'instances'], runnerId: 'host:1' })
      .returning();
    runId = run!.id;
  });
  afterAll(async () => {
    await database?.close();
  });

  async function snapshot(kind: 'instance' | 'cluster', scopeKey: string, takenAt: string, complete: boolean, run: number | null = null) {
    const [row] = await database.db
      .insert(snapshots)
      .values({ runId: run, kind, scopeKey, takenAt: new Date(takenAt), complete })
      .returning({ id: snapshots.id });
    return row!.id;
  }

  it('gives a new run sensible defaults', async () => {
    const [run] = await database.db.select().from(collectionRuns).where(eq(collectionRuns.id, runId));
    expect(run).toMatchObject({ status: 'running', counts: {}, errors: [], finishedAt: null, collectors: ['clusters', 'instances'] });
    expect(run!.startedAt).toBeInstanceOf(Date);
  });

  it('rejects unknown statuses, triggers and kinds', async () => {
    await expect(database.query(`UPDATE collection_runs SET status = 'done' WHERE id = $1`, [runId])).rejects.toThrow(
      /collection_runs_status_check/,
    );
    await expect(database.query(`INSERT INTO snapshots (kind, scope_key) VALUES ('vm', 'x')`)).rejects.toThrow(/snapshots_kind_check/);
  });

  it('finds the latest complete snapshot per kind and scope, ignoring incomplete newer ones', async () => {
    const p1 = scopeKeyOf(1, 1);
    const p2 = scopeKeyOf(2, 1);
    await snapshot('instance', p1, '2024-05-01T00:00:00Z', true);
    const latestP1 = await snapshot('instance', p1, '2024-05-01T01:00:00Z', true);
    await snapshot('instance', p1, '2024-05-01T02:00:00Z', false);
    const latestP2 = await snapshot('instance', p2, '2024-05-01T00:00:00Z', true);
    const clusterP1 = await snapshot('cluster', p1, '2024-05-01T00:30:00Z', true);

    const latest = await database.query<{ kind: string; scope_key: string; id: number }>(
      `SELECT DISTINCT ON (kind, scope_key) kind, scope_key, id FROM snapshots
        WHERE complete ORDER BY kind, scope_key, taken_at DESC`,
    );
    expect(latest).toEqual([
      { kind: 'cluster', scope_key: 'p1-r1', id: clusterP1 },
      { kind: 'instance', scope_key: 'p1-r1', id: latestP1 },
      { kind: 'instance', scope_key: 'p2-r1', id: latestP2 },
    ]);

    // The same question through drizzle, for one scope.
    const [one] = await database.db
      .select({ id: snapshots.id })
      .from(snapshots)
      .where(and(eq(snapshots.kind, 'instance'), eq(snapshots.scopeKey, p1), eq(snapshots.complete, true)))
      .orderBy(desc(snapshots.takenAt))
      .limit(1);
    expect(one!.id).toBe(latestP1);

    const plan = await explain(`SELECT id FROM snapshots WHERE complete AND kind = 'instance' AND scope_key = 'p1-r1' ORDER BY taken_at DESC LIMIT 1`);
    expect(plan).toContain('snapshots_latest_complete_idx');
  });

  it('uses the GIN index for a tag filter', async () => {
    const snap = await snapshot('instance', 'p9-r9', '2024-05-02T00:00:00Z', true);
    await bulkInsert(
      database,
      instancesKept,
      Array.from({ length: 200 }, (_, i) => ({
        snapshotId: snap,
        instanceId: `i-${i}`,
        tags: (i % 10 === 0 ? { team: 'ml', 'cost.center': 'cc-1' } : { team: 'web' }) as Record<string, string>,
        raw: {},
      })),
    );
    // Folded into versions as a collection's finalising transaction does (db/versions.ts).
    await database.transaction((tx) => foldSnapshot(tx, { id: snap, kind: 'instance', scopeKey: 'p9-r9', takenAt: new Date('2024-05-02T00:00:00Z') }));
    // Searching all history by tag: the versions (the view reads them per snapshot, through its scope's range).
    const plan = await explain(`SELECT instance_id FROM instances_versions WHERE tags @> '{"team": "ml"}'`);
    expect(plan).toContain('instances_versions_tags_idx');
    const [row] = await database.query<{ n: number }>(`SELECT count(*)::int AS n FROM instances WHERE tags @> '{"team": "ml"}'`);
    expect(row!.n).toBe(20);
  });

  it('keeps one rollup row per group, the untagged and unpriced groups included', async () => {
    const snap = await snapshot('instance', 'p3-r1', '2024-05-03T00:00:00Z', true);
    const base = { snapshotId: snap, takenAt: new Date('2024-05-03T00:00:00Z'), kind: 'instance' as const, scopeKey: 'p3-r1', dimension: 'tag:team' };
    await bulkInsert(database, costRollups, [
      { ...base, groupValue: 'ml', currency: 'EUR', pricePerHour: '0.1', resourceCount: 1 },
      { ...base, groupValue: 'ml', currency: 'USD', pricePerHour: '0.2', resourceCount: 1 },
      { ...base, groupValue: UNTAGGED, currency: 'EUR', pricePerHour: '0.2', resourceCount: 3 },
      { ...base, groupValue: UNTAGGED, currency: null, resourceCount: 2, unpricedCount: 2 },
    ]);
    await expect(
      bulkInsert(database, costRollups, [{ ...base, groupValue: UNTAGGED, currency: null, resourceCount: 1, unpricedCount: 1 }]),
    ).rejects.toThrow(/cost_rollups_group_uq/);

    const totals = await database.query<{ currency: string | null; hour: string; unpriced: number }>(
      `SELECT currency, sum(price_per_hour)::text AS hour, sum(unpriced_count)::int AS unpriced
         FROM cost_rollups WHERE snapshot_id = $1 GROUP BY currency ORDER BY currency NULLS LAST`,
      [snap],
    );
    expect(totals).toEqual([
      { currency: 'EUR', hour: '0.3', unpriced: 0 },
      { currency: 'USD', hour: '0.2', unpriced: 0 },
      { currency: null, hour: '0', unpriced: 2 },
    ]);
  });

  it('deletes a snapshot with all its rows, keeps presence, and unlinks pruned runs', async () => {
    const [run] = await database.db.insert(collectionRuns).values({ trigger: 'schedule', collectors: ['clusters'], runnerId: 'x' }).returning();
    const snap = await snapshot('cluster', 'p4-r1', '2024-05-04T00:00:00Z', true, run!.id);
    await bulkInsert(database, gpuClustersKept, [{ snapshotId: snap, clusterId: 'c1', serverCount: 2, raw: {} }]);
    await bulkInsert(database, gpuClusterServersKept, [
      { snapshotId: snap, clusterId: 'c1', serverId: 's1', raw: {} },
      { snapshotId: snap, clusterId: 'c1', serverId: 's2', raw: {} },
    ]);
    await database.db.insert(resourcePresence).values({
      kind: 'cluster',
      scopeKey: 'p4-r1',
      resourceId: 'c1',
      firstSeenAt: new Date('2024-05-04T00:00:00Z'),
      lastSeenAt: new Date('2024-05-04T00:00:00Z'),
      lastSnapshotId: snap,
    });

    await database.db.delete(collectionRuns).where(eq(collectionRuns.id, run!.id));
    const [unlinked] = await database.db.select({ runId: snapshots.runId }).from(snapshots).where(eq(snapshots.id, snap));
    expect(unlinked!.runId).toBeNull();

    await database.db.delete(snapshots).where(eq(snapshots.id, snap));
    const left = await database.query<{ clusters: number; servers: number; presence: number }>(
      `SELECT (SELECT count(*)::int FROM gpu_clusters WHERE snapshot_id = $1) AS clusters,
              (SELECT count(*)::int FROM gpu_cluster_servers WHERE snapshot_id = $1) AS servers,
              (SELECT count(*)::int FROM resource_presence WHERE scope_key = 'p4-r1') AS presence`,
      [snap],
    );
    expect(left).toEqual([{ clusters: 0, servers: 0, presence: 1 }]);
  });

  it('allows one snapshot per kind and scope in a run', async () => {
    await snapshot('instance', 'p5-r1', '2024-05-05T00:00:00Z', true, runId);
    await expect(snapshot('instance', 'p5-r1', '2024-05-05T00:01:00Z', true, runId)).rejects.toThrow();
    await snapshot('cluster', 'p5-r1', '2024-05-05T00:00:00Z', true, runId);
  });

  it('keeps the audit log append-only', async () => {
    const [entry] = await database.db
      .insert(auditLog)
      .values({ actor: 'alice', role: 'operator', action: 'stop_instance', instanceId: 'i-1', result: 'succeeded', taskIds: ['t1'] })
      .returning();
    expect(entry).toMatchObject({ id: expect.any(Number), dryRun: false, taskIds: ['t1'], at: expect.any(Date) });

    expect(await failure(database.db.update(auditLog).set({ result: 'failed' }).where(eq(auditLog.id, entry!.id)))).toMatch(
      /append-only: UPDATE refused/,
    );
    expect(await failure(database.db.delete(auditLog))).toMatch(/append-only: DELETE refused/);
    await expect(database.query('TRUNCATE audit_log')).rejects.toThrow(/append-only: TRUNCATE refused/);
    const [count] = await database.db.select({ n: sql<number>`count(*)::int` }).from(auditLog);
    expect(count!.n).toBe(1);
  });

  /** Messages of an error and its causes (drizzle wraps driver errors in "Failed query: ..."). */
  async function failure(promise: Promise<unknown>): Promise<string> {
    const err = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const messages: string[] = [];
    for (let e: unknown = err; e instanceof Error; e = e.cause) messages.push(e.message);
    return messages.join(' <- ');
  }

  /** The plan with sequential scans discouraged, so the test does not depend on table statistics. */
  async function explain(query: string): Promise<string> {
    return database.transaction(async (tx) => {
      await tx.query('SET LOCAL enable_seqscan = off');
      const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query}`);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
  }
});

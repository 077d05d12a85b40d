import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../../src/cloud/index.js';
import type { Config } from '../../../src/config/index.js';
import type { Database } from '../../../src/db/connection.js';
import { refreshCostDaily } from '../../../src/costing/derive/closed-days.js';
import { maxGapHoursForSchedules } from '../../../src/costing/gap-caps.js';
import { pruneHistory, runCollection } from '../../../src/collect/index.js';
import type { Simulator } from '../../../src/simulator/index.js';
import { testDatabases, type TestDatabase } from '../../helpers/databases.js';
import { snapshotRowsSql, versionedTable, viewRowsSql } from '../../../src/db/versions.js';
import { latestSnapshots, scopeKey, startTestSimulator, testClient, testConfig, testDeps } from '../helpers.js';

export function historySuite(databases: TestDatabase[] = testDatabases()): void {
  describe('history', () => {
    const INSTANCE_COLUMNS = 'instance_id, name, status, vm_state, flavor_name, created_at, tags, tags_original, security_group_ids';

    describe.each(databases)('a second collection after changes ($name)', ({ open }) => {
      let sim: Simulator;
      let config: Config;
      let client: CloudClient;
      let db: Database;
      /** A snapshot's rows of a view, read as the product reads them (snapshotRowsSql): Citus cannot plan the views. */
      const rowsOf = (view: string, columns: string, snapshotId: number) =>
        db.query<Record<string, unknown>>(`${snapshotRowsSql(versionedTable(view), columns, '$1')} ORDER BY 1`, [snapshotId]);
      let first: Map<string, number>;
      let second: Map<string, number>;
      const changed = { stopped: '', retagged: '', cluster: '', keypair: '', scope: '' };
      let firstInstanceRows: unknown[];

      beforeAll(async () => {
        sim = await startTestSimulator({ seed: 11 });
        config = testConfig();
        client = testClient(sim, config);
        db = await open();
        const deps = testDeps(db, sim, client, config);
        const run1 = await runCollection(deps);
        expect(run1.status).toBe('succeeded');
        first = await latestSnapshots(db);

        const [s] = sim.state.scopes();
        const { project_id: p, region_id: r } = s!;
        changed.scope = scopeKey(p, r);
        const instances = sim.state.instances(p, r);
        const running = instances.find((i) => i.status === 'ACTIVE')!;
        const tagged = instances.find((i) => i !== running && i.tags.some((t) => t.key === 'team'))!;
        changed.stopped = running.id;
        changed.retagged = tagged.id;
        changed.keypair = sim.state.keypairs(p, r)[0]!.name;
        firstInstanceRows = await rowsOf('instances', INSTANCE_COLUMNS, first.get(`instance/${changed.scope}`)!);

        sim.state.stopInstance(p, r, running.id);
        sim.state.setInstanceTag(tagged.id, 'team', 'finance');
        changed.cluster = sim.state.addCluster(p, r, { name: 'added-in-test', servers_count: 2, tags: { team: 'ml' } }).id;
        sim.state.deleteKeypair(p, r, changed.keypair);

        const run2 = await runCollection(deps);
        expect(run2.status).toBe('succeeded');
        second = await latestSnapshots(db);
      });
      afterAll(async () => {
        await db?.close();
        await client?.close();
        await sim?.close();
      });

      const diff = async (table: string, columns: string, a: number, b: number) =>
        db.query(`${snapshotRowsSql(versionedTable(table), columns, '$1')} EXCEPT ${snapshotRowsSql(versionedTable(table), columns, '$2')}`, [a, b]);
      const ids = (kind: string, scope: string) => [first.get(`${kind}/${scope}`)!, second.get(`${kind}/${scope}`)!] as const;

      it('writes new snapshots for every kind and scope', () => {
        expect(first.size).toBe(second.size);
        for (const [key, id] of first) expect(second.get(key), key).toBeGreaterThan(id);
      });

      it('records exactly the stopped instance and the changed tag', async () => {
        const [a, b] = ids('instance', changed.scope);
        const added = await diff('instances', 'instance_id, status, vm_state, tags', b, a);
        const removed = await diff('instances', 'instance_id, status, vm_state, tags', a, b);
        expect(added.map((r) => r['instance_id']).sort()).toEqual([changed.stopped, changed.retagged].sort());
        expect(removed.map((r) => r['instance_id']).sort()).toEqual([changed.stopped, changed.retagged].sort());
        const stopped = added.find((r) => r['instance_id'] === changed.stopped)!;
        expect(stopped).toMatchObject({ status: 'SHUTOFF', vm_state: 'stopped' });
        const retagged = added.find((r) => r['instance_id'] === changed.retagged)!;
        expect((retagged['tags'] as Record<string, string>)['team']).toBe('finance');
        // Everything else of every other scope is identical.
        for (const [key] of first) {
          if (!key.startsWith('instance/') || key.endsWith(changed.scope)) continue;
          const [x, y] = ids('instance', key.slice('instance/'.length));
          expect(await diff('instances', INSTANCE_COLUMNS, x, y)).toEqual([]);
          expect(await diff('instances', INSTANCE_COLUMNS, y, x)).toEqual([]);
        }
      });

      it('records exactly the added cluster and the deleted keypair', async () => {
        const [c1, c2] = ids('cluster', changed.scope);
        expect((await diff('gpu_clusters', 'cluster_id, cluster_name', c2, c1)).map((r) => r['cluster_id'])).toEqual([changed.cluster]);
        expect(await diff('gpu_clusters', 'cluster_id, cluster_name', c1, c2)).toEqual([]);
        const servers = (await rowsOf('gpu_cluster_servers', 'server_id, cluster_id', c2)).filter((r) => r['cluster_id'] === changed.cluster);
        expect(servers).toHaveLength(2);
        const [k1, k2] = ids('keypair', changed.scope);
        expect((await diff('keypairs', 'name', k1, k2)).map((r) => r['name'])).toEqual([changed.keypair]);
        expect(await diff('keypairs', 'name', k2, k1)).toEqual([]);
      });

      it('leaves the first snapshots intact', async () => {
        const again = await rowsOf('instances', INSTANCE_COLUMNS, first.get(`instance/${changed.scope}`)!);
        expect(again).toEqual(firstInstanceRows);
        const snapshots = await db.query<{ complete: boolean; row_count: number }>(`SELECT s.complete, s.row_count FROM snapshots s WHERE s.id = $1`, [
          first.get(`instance/${changed.scope}`),
        ]);
        expect(snapshots[0]).toEqual({ complete: true, row_count: firstInstanceRows.length });
      });

      it('keeps first seen, last seen and gone right', async () => {
        const takenAt = async (id: number) => (await db.query<{ taken_at: Date }>('SELECT taken_at FROM snapshots WHERE id = $1', [id]))[0]!.taken_at;
        const presence = async (kind: string, id: string) =>
          (
            await db.query<{ first_seen_at: Date; last_seen_at: Date; gone_at: Date | null; first_snapshot_id: number; last_snapshot_id: number }>(
              'SELECT first_seen_at, last_seen_at, gone_at, first_snapshot_id, last_snapshot_id FROM resource_presence_seen WHERE kind = $1 AND scope_key = $2 AND resource_id = $3',
              [kind, changed.scope, id],
            )
          )[0]!;
        const [k1, k2] = ids('keypair', changed.scope);
        const gone = await presence('keypair', changed.keypair);
        expect(gone.gone_at).toEqual(await takenAt(k2));
        expect(gone.last_seen_at).toEqual(await takenAt(k1));
        const [c1, c2] = ids('cluster', changed.scope);
        const added = await presence('cluster', changed.cluster);
        expect(added).toMatchObject({ gone_at: null, first_snapshot_id: c2, last_snapshot_id: c2 });
        expect(added.first_seen_at).toEqual(await takenAt(c2));
        const [i1, i2] = ids('instance', changed.scope);
        const stopped = await presence('instance', changed.stopped);
        expect(stopped).toMatchObject({ gone_at: null, first_snapshot_id: i1, last_snapshot_id: i2 });
        expect(stopped.first_seen_at).toEqual(await takenAt(i1));
        expect(stopped.last_seen_at).toEqual(await takenAt(i2));
        expect(c1).toBeLessThan(c2);
      });
    });

    describe.each(databases)('pruning history ($name)', ({ open }) => {
      const now = new Date('2025-06-01T12:00:00Z');
      const at = (days: number, hour: number) => new Date(Date.UTC(2025, 5, 1 - days, hour));
      let sim: Simulator;
      let client: CloudClient;
      let db: Database;
      const config = testConfig({ retention_days: 30, retention_hourly_days: 3 });

      beforeAll(async () => {
        sim = await startTestSimulator({ seed: 5, size: 10 });
        client = testClient(sim, config);
        db = await open();
        const deps = testDeps(db, sim, client, config);
        for (const when of [at(40, 10), at(40, 11), at(10, 10), at(10, 11), at(1, 10)]) {
          const summary = await runCollection(deps, { now: when, collectors: ['flavors', 'instances', 'keypairs'] });
          expect(summary.status).toBe('succeeded');
        }
      });
      afterAll(async () => {
        await db?.close();
        await client?.close();
        await sim?.close();
      });

      const snapshotDays = async () =>
        db.query<{ day: string; kind: string; n: number }>(
          `SELECT to_char(taken_at, 'YYYY-MM-DD') AS day, kind, count(*)::int AS n FROM snapshots GROUP BY 1, 2 ORDER BY 1, 2`,
        );
      const daily = async (day: string) =>
        db.query(
          `SELECT day, kind, scope_key, dimension, group_value, currency, price_seconds, resource_seconds FROM cost_daily WHERE day = $1
            ORDER BY kind, scope_key, dimension, group_value, currency`,
          [day],
        );

      it('deletes expired snapshots, thins old hourly ones to the day\'s last, and keeps daily cost', async () => {
        const scopes = sim.state.scopes().length;
        // What the daily aggregates are with every hourly snapshot present.
        await refreshCostDaily(db, { fromDay: '2025-04-22', toDay: '2025-05-22' }, { now });
        const fullOld = await daily('2025-04-22');
        const fullThinned = await daily('2025-05-22');
        expect(fullOld.length).toBeGreaterThan(0);
        expect(fullThinned.length).toBeGreaterThan(0);
        await db.execute('DELETE FROM cost_daily');

        const result = await pruneHistory({ db, config, logger: testDeps(db, sim, client, config).logger }, { now, batchSize: 3 });
        expect(result.snapshotsDeleted).toBe(2 * 3 * scopes + 3 * scopes);
        expect(result.daysSealed).toEqual(['2025-04-22', '2025-05-22']);
        expect(await snapshotDays()).toEqual([
          { day: '2025-05-22', kind: 'flavor', n: scopes },
          { day: '2025-05-22', kind: 'instance', n: scopes },
          { day: '2025-05-22', kind: 'keypair', n: scopes },
          { day: '2025-05-31', kind: 'flavor', n: scopes },
          { day: '2025-05-31', kind: 'instance', n: scopes },
          { day: '2025-05-31', kind: 'keypair', n: scopes },
        ]);
        const kept = await db.query<{ taken_at: Date }>(`SELECT DISTINCT taken_at FROM snapshots WHERE taken_at < $1`, [at(5, 0)]);
        expect(kept.every((r) => r.taken_at.getUTCHours() === 11)).toBe(true);
        const older = '(SELECT id, kind, scope_key, taken_at, versioned FROM snapshots WHERE taken_at < $1)';
        expect(await db.query(`SELECT 1 FROM ${viewRowsSql('instances', older, ['instance_id'])} i`, [at(30, 0)])).toEqual([]);

        // The daily cost of both days was computed from their full detail and is not recomputed later.
        expect(await daily('2025-04-22')).toEqual(fullOld);
        expect(await daily('2025-05-22')).toEqual(fullThinned);
        await refreshCostDaily(db, { fromDay: '2025-04-22', toDay: '2025-05-22' }, { now });
        expect(await daily('2025-05-22')).toEqual(fullThinned);

        // Presence outlives the pruned snapshots.
        const presence = await db.query<{ first_seen_at: Date }>(`SELECT min(first_seen_at) AS first_seen_at FROM resource_presence WHERE kind = 'instance'`);
        expect(presence[0]!.first_seen_at.getTime()).toBeLessThan(at(39, 0).getTime());

        // A second prune at the same time has nothing left to do.
        expect(await pruneHistory({ db, config, logger: testDeps(db, sim, client, config).logger }, { now })).toMatchObject({ snapshotsDeleted: 0, daysSealed: [] });
      });
    });

    describe.each(databases)('sealing days collected every 6 hours ($name)', ({ open }) => {
      const now = new Date('2025-06-01T12:00:00Z');
      const day = '2025-05-22';
      const config = testConfig({ retention_days: 30, retention_hourly_days: 3, schedules: { instances: '0 */6 * * *', flavors: '0 */6 * * *' } });
      let sim: Simulator;
      let client: CloudClient;
      let db: Database;

      beforeAll(async () => {
        sim = await startTestSimulator({ seed: 6, size: 10 });
        client = testClient(sim, config);
        db = await open();
        const deps = testDeps(db, sim, client, config);
        for (const hour of [0, 6, 12, 18]) {
          const summary = await runCollection(deps, { now: new Date(`${day}T${String(hour).padStart(2, '0')}:00:00Z`), collectors: ['flavors', 'instances'] });
          expect(summary.status).toBe('succeeded');
        }
        await runCollection(deps, { now: new Date('2025-05-31T12:00:00Z'), collectors: ['flavors', 'instances'] });
      });
      afterAll(async () => {
        await db?.close();
        await client?.close();
        await sim?.close();
      });

      const daily = () =>
        db.query(`SELECT kind, scope_key, dimension, group_value, currency, price_seconds, resource_seconds FROM cost_daily WHERE day = $1 ORDER BY 1, 2, 3, 4, 5`, [day]);

      it('seals a day with the gaps the schedules allow, as the reports integrate it', async () => {
        // What the reports show for the day while its detail exists: 6-hour gaps held in full.
        await refreshCostDaily(db, { fromDay: day, toDay: day }, { now, maxGapHours: maxGapHoursForSchedules(config.schedules) });
        const asReported = await daily();
        // With the default caps (hourly schedules) each 6-hour gap would count 2 hours only.
        await refreshCostDaily(db, { fromDay: day, toDay: day }, { now });
        const withDefaultCaps = await daily();
        expect(withDefaultCaps).not.toEqual(asReported);
        await db.execute('DELETE FROM cost_daily');

        const result = await pruneHistory({ db, config, logger: testDeps(db, sim, client, config).logger }, { now });
        expect(result.daysSealed).toEqual([day]);
        expect(await daily()).toEqual(asReported);
        // Its totals over scopes (what reports without a project or region filter read) are written
        // by the same transaction, stamped with the sealing, and add up to its rows.
        expect(
          await db.query(`SELECT to_char(t.day, 'YYYY-MM-DD') AS day FROM cost_daily_totals_days t JOIN cost_daily_sealed_days s ON s.day = t.day AND s.sealed_at = t.source_at`),
        ).toEqual([{ day }]);
        const perCurrency = (table: string) =>
          db.query(`SELECT currency, trim_scale(sum(price_seconds))::text AS price_seconds FROM ${table} WHERE day = $1 AND dimension = 'kind' GROUP BY currency ORDER BY currency`, [day]);
        expect((await perCurrency('cost_daily_totals')).length).toBeGreaterThan(0);
        expect(await perCurrency('cost_daily_totals')).toEqual(await perCurrency('cost_daily'));
      });
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../../src/cloud/index.js';
import type { Config } from '../../../src/config/index.js';
import { normaliseTagKey } from '../../../src/tags/normalise.js';
import type { Database } from '../../../src/db/connection.js';
import { runCollection, type RunSummary } from '../../../src/collect/index.js';
import type { Simulator } from '../../../src/simulator/index.js';
import { testDatabases } from '../../helpers/databases.js';
import { latestSnapshots, scopeKey, startTestSimulator, testClient, testConfig, testDeps } from '../helpers.js';

export function fullCollectionSuite(): void {
  describe('a full collection', () => {
    let sim: Simulator;
    let config: Config;
    let client: CloudClient;

    beforeAll(async () => {
      sim = await startTestSimulator();
      config = testConfig();
      client = testClient(sim, config);
    });
    afterAll(async () => {
      await client.close();
      await sim.close();
    });

    describe.each(testDatabases())('a full collection from the simulator ($name)', ({ open }) => {
      let db: Database;
      let summary: RunSummary;
      let latest: Map<string, number>;

      beforeAll(async () => {
        db = await open();
        summary = await runCollection(testDeps(db, sim, client, config), { trigger: 'manual' });
        latest = await latestSnapshots(db);
      });
      afterAll(async () => {
        await db?.close();
      });

      const scopes = () => sim.state.scopes();
      const snap = (kind: string, key: string) => {
        const id = latest.get(`${kind}/${key}`);
        if (id === undefined) throw new Error(`no complete ${kind} snapshot for ${key}`);
        return id;
      };

      it('succeeds and records the run with counts per kind', async () => {
        expect(summary.errors).toEqual([]);
        expect(summary.status).toBe('succeeded');
        const [run] = await db.query<{ status: string; trigger: string; counts: Record<string, number>; errors: unknown[]; finished_at: Date | null }>(
          'SELECT status, trigger, counts, errors, finished_at FROM collection_runs WHERE id = $1',
          [summary.runId],
        );
        expect(run).toMatchObject({ status: 'succeeded', trigger: 'manual', errors: [] });
        expect(run!.finished_at).toBeInstanceOf(Date);
        expect(run!.counts).toEqual(summary.counts);
        const instanceTotal = scopes().reduce((n, s) => n + sim.state.instances(s.project_id, s.region_id).length, 0);
        expect(run!.counts['instance']).toBe(instanceTotal);
        expect(run!.counts['storage_key']).toBe(sim.state.storageKeys().length);
        expect(run!.counts['free_feature']).toBe(sim.state.freeFeatures().length);
        const incomplete = await db.query('SELECT id FROM snapshots WHERE NOT complete');
        expect(incomplete).toEqual([]);
      });

      it('stores every instance once per scope, with its values', async () => {
        for (const s of scopes()) {
          const expected = sim.state.instances(s.project_id, s.region_id);
          const rows = await db.query<{ instance_id: string; name: string; status: string; flavor_name: string; created_at: Date; security_group_ids: string[] }>(
            'SELECT instance_id, name, status, flavor_name, created_at, security_group_ids FROM instances WHERE snapshot_id = $1',
            [snap('instance', scopeKey(s.project_id, s.region_id))],
          );
          expect(rows.map((r) => r.instance_id).sort()).toEqual(expected.map((i) => i.id).sort());
          const byId = new Map(rows.map((r) => [r.instance_id, r]));
          for (const instance of expected) {
            const row = byId.get(instance.id)!;
            expect(row.name).toBe(instance.name);
            expect(row.status).toBe(instance.status);
            expect(row.flavor_name).toBe(instance.flavorName);
            expect(row.created_at.toISOString()).toBe(instance.createdAt.toISOString());
            expect([...row.security_group_ids].sort()).toEqual([...instance.securityGroupIds].sort());
          }
        }
      });

      it('stores an instance listed through two security groups once, with both group ids', async () => {
        const s = scopes().find((x) => sim.state.instances(x.project_id, x.region_id).some((i) => i.securityGroupIds.length >= 2))!;
        const shared = sim.state.instances(s.project_id, s.region_id).filter((i) => i.securityGroupIds.length >= 2);
        expect(shared.length).toBeGreaterThan(0);
        for (const instance of shared) {
          const rows = await db.query<{ security_group_ids: string[] }>(
            'SELECT security_group_ids FROM instances WHERE snapshot_id = $1 AND instance_id = $2',
            [snap('instance', scopeKey(s.project_id, s.region_id)), instance.id],
          );
          expect(rows).toHaveLength(1);
          expect([...rows[0]!.security_group_ids].sort()).toEqual([...instance.securityGroupIds].sort());
        }
      });

      it('groups instances by the normalised team tag exactly as the simulator has them', async () => {
        const expected = new Map<string, number>();
        for (const s of scopes()) {
          for (const instance of sim.state.instances(s.project_id, s.region_id)) {
            const team = instance.tags.find((t) => normaliseTagKey(t.key, config) === 'team')?.value ?? '(untagged)';
            expected.set(team, (expected.get(team) ?? 0) + 1);
          }
        }
        const ids = [...latest].filter(([k]) => k.startsWith('instance/')).map(([, id]) => id);
        const rows = await db.query<{ team: string; n: string }>(
          `SELECT coalesce(tags->>'team', '(untagged)') AS team, count(*)::text AS n FROM instances
            WHERE snapshot_id = ANY($1::int[]) GROUP BY 1`,
          [ids],
        );
        expect(new Map(rows.map((r) => [r.team, Number(r.n)]))).toEqual(expected);
        // `Team` and `équipe` were folded into `team`; the list as received is kept.
        const folded = await db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM instances WHERE snapshot_id = ANY($1::int[])
              AND tags ? 'team' AND EXISTS (SELECT 1 FROM jsonb_array_elements(tags_original) t WHERE t->>'key' IN ('Team', 'équipe'))`,
          [ids],
        );
        expect(Number(folded[0]!.n)).toBeGreaterThan(0);
        const readOnly = await db.query<{ n: string }>(
          `SELECT count(*)::text AS n FROM instances WHERE snapshot_id = ANY($1::int[]) AND 'created-by' = ANY(tags_read_only)`,
          [ids],
        );
        expect(Number(readOnly[0]!.n)).toBeGreaterThan(0);
      });

      it('stores clusters of every page with their servers', async () => {
        for (const s of scopes()) {
          const key = scopeKey(s.project_id, s.region_id);
          const expected = sim.state.clusters(s.project_id, s.region_id);
          const clusters = await db.query<{ cluster_id: string; cluster_name: string; server_count: number; image_id: string }>(
            'SELECT cluster_id, cluster_name, server_count, image_id FROM gpu_clusters WHERE snapshot_id = $1',
            [snap('cluster', key)],
          );
          expect(clusters.map((c) => c.cluster_id).sort()).toEqual(expected.map((c) => c.id).sort());
          const servers = await db.query<{ cluster_id: string; server_id: string; status: string }>(
            'SELECT cluster_id, server_id, status FROM gpu_cluster_servers WHERE snapshot_id = $1',
            [snap('cluster', key)],
          );
          expect(servers.map((r) => `${r.cluster_id}/${r.server_id}/${r.status}`).sort()).toEqual(
            expected.flatMap((c) => c.servers.map((v) => `${c.id}/${v.id}/${v.status}`)).sort(),
          );
          for (const c of expected) {
            expect(clusters.find((r) => r.cluster_id === c.id)).toMatchObject({ cluster_name: c.name, server_count: c.servers.length, image_id: c.imageId });
          }
        }
      });

      it('stores flavors with exact prices and capacity, the disabled one marked', async () => {
        for (const s of scopes()) {
          const rows = await db.query<{ flavor_name: string; disabled: boolean; capacity: number | null; price_matches: boolean | null; currency_code: string; price_per_hour: string | null }>(
            `SELECT flavor_name, disabled, capacity, currency_code, price_per_hour,
                    price_per_hour = $2::numeric AS price_matches
               FROM gpu_flavors WHERE snapshot_id = $1 AND flavor_name = $3`,
            [snap('flavor', scopeKey(s.project_id, s.region_id)), null, 'x'],
          );
          expect(rows).toEqual([]);
          for (const f of sim.state.flavors(s.project_id, s.region_id)) {
            const [row] = await db.query<{ disabled: boolean; capacity: number | null; currency_code: string; price_per_hour: string | null; exact: boolean | null }>(
              `SELECT disabled, capacity, currency_code, price_per_hour, price_per_hour = $3::numeric AS exact
                 FROM gpu_flavors WHERE snapshot_id = $1 AND flavor_name = $2`,
              [snap('flavor', scopeKey(s.project_id, s.region_id)), f.name, f.pricePerHour],
            );
            expect(row, f.name).toBeDefined();
            expect(row!.disabled).toBe(f.disabled);
            expect(row!.capacity).toBe(f.capacity);
            expect(row!.currency_code).toBe(f.currency);
            if (f.pricePerHour === null) expect(row!.price_per_hour).toBeNull();
            else expect(row!.exact).toBe(true);
          }
          const disabled = await db.query<{ flavor_name: string }>(
            'SELECT flavor_name FROM gpu_flavors WHERE snapshot_id = $1 AND disabled',
            [snap('flavor', scopeKey(s.project_id, s.region_id))],
          );
          expect(disabled.map((r) => r.flavor_name)).toEqual(['bm1-ai-large-v100-32-8']);
        }
      });

      it('stores the price of every configured Kubernetes cluster exactly', async () => {
        for (const s of scopes()) {
          const key = scopeKey(s.project_id, s.region_id);
          for (const k of sim.state.k8sClusters(s.project_id, s.region_id)) {
            const api = await client.getK8sClusterPrice(s.project_id, s.region_id, k.name);
            const [row] = await db.query<{ hour: boolean; month: boolean; currency_code: string; breakdown: { instances: unknown[] } }>(
              `SELECT price_per_hour = $3::numeric AS hour, price_per_month = $4::numeric AS month, currency_code, breakdown
                 FROM k8s_cluster_prices WHERE snapshot_id = $1 AND cluster_name = $2`,
              [snap('k8s_price', key), k.name, api.total_price.price_per_hour, api.total_price.price_per_month],
            );
            expect(row).toMatchObject({ hour: true, month: true, currency_code: k.currency });
            expect(row!.breakdown.instances).toHaveLength(api.instances.length);
          }
        }
      });

      it('stores keypairs by name, storage keys of every page, free features, ports and image tags', async () => {
        for (const s of scopes()) {
          const key = scopeKey(s.project_id, s.region_id);
          const keypairs = await db.query<{ name: string; keypair_id: string; fingerprint: string }>(
            'SELECT name, keypair_id, fingerprint FROM keypairs WHERE snapshot_id = $1',
            [snap('keypair', key)],
          );
          expect(keypairs.map((k) => `${k.name}/${k.keypair_id}/${k.fingerprint}`).sort()).toEqual(
            sim.state.keypairs(s.project_id, s.region_id).map((k) => `${k.name}/${k.id}/${k.fingerprint}`).sort(),
          );

          const instances = sim.state.instances(s.project_id, s.region_id);
          const ports = await db.query<{ instance_id: string; port_id: string; name: string }>(
            'SELECT instance_id, port_id, name FROM instance_ports WHERE snapshot_id = $1',
            [snap('port', key)],
          );
          expect(new Set(ports.map((p) => p.instance_id))).toEqual(new Set(instances.map((i) => i.id)));
          const sample = instances[0]!;
          const api = await client.listInstancePorts(s.project_id, s.region_id, sample.id);
          expect(ports.filter((p) => p.instance_id === sample.id).map((p) => p.port_id).sort()).toEqual(api.results.map((p) => p.id).sort());

          const tags = await db.query<{ image_id: string; key: string; value: string; read_only: boolean }>(
            'SELECT image_id, key, value, read_only FROM image_tags WHERE snapshot_id = $1',
            [snap('image_tag', key)],
          );
          expect(tags.map((t) => `${t.image_id}/${t.key}=${t.value}/${t.read_only}`).sort()).toEqual(
            sim.state.images().flatMap((i) => i.tags.map((t) => `${i.id}/${t.key}=${t.value}/${t.read_only}`)).sort(),
          );
        }
        const storageKeys = await db.query<{ key_id: string; name: string; created_at: Date }>(
          'SELECT key_id, name, created_at FROM storage_ssh_keys WHERE snapshot_id = $1 ORDER BY key_id::bigint',
          [snap('storage_key', 'global')],
        );
        expect(storageKeys.map((k) => `${k.key_id}/${k.name}/${k.created_at.toISOString()}`)).toEqual(
          sim.state.storageKeys().map((k) => `${k.id}/${k.name}/${k.createdAt.toISOString()}`),
        );
        const features = await db.query<{ activation_id: string; feature_name: string; created_at: Date }>(
          'SELECT activation_id, feature_name, created_at FROM free_features WHERE snapshot_id = $1',
          [snap('free_feature', 'global')],
        );
        expect(features.map((f) => `${f.activation_id}/${f.feature_name}/${f.created_at.toISOString()}`).sort()).toEqual(
          sim.state.freeFeatures().map((f) => `${f.id}/${f.name}/${f.createdAt.toISOString()}`).sort(),
        );
      });

      it('keeps no secret in the stored raw JSON, only that it was there', async () => {
        const withPassword = scopes()
          .flatMap((s) => sim.state.clusters(s.project_id, s.region_id))
          .filter((c) => c.password !== null || c.userData !== null);
        expect(withPassword.length).toBeGreaterThan(0);
        for (const c of withPassword) {
          const [row] = await db.query<{ raw: Record<string, unknown> }>(
            'SELECT raw FROM gpu_clusters WHERE cluster_id = $1 ORDER BY snapshot_id DESC LIMIT 1',
            [c.id],
          );
          if (c.password !== null) expect(row!.raw['password']).toBe('[redacted]');
          if (c.userData !== null) expect(row!.raw['user_data']).toBe('[redacted]');
          for (const secret of [c.password, c.userData].filter((x): x is string => x !== null)) {
            const leaks = await db.query(`SELECT 1 FROM gpu_clusters WHERE strpos(raw::text, $1) > 0`, [secret]);
            expect(leaks).toEqual([]);
          }
        }
        const privateKeys = scopes()
          .flatMap((s) => sim.state.keypairs(s.project_id, s.region_id))
          .filter((k) => k.privateKey !== null);
        expect(privateKeys.length).toBeGreaterThan(0);
        for (const k of privateKeys) {
          const rows = await db.query<{ raw: Record<string, unknown> }>(
            'SELECT raw FROM keypairs WHERE name = $1 AND project_id = $2 AND region_id = $3',
            [k.name, k.projectId, k.regionId],
          );
          expect(rows.length).toBeGreaterThan(0);
          for (const row of rows) expect(row.raw['private_key']).toBe('[redacted]');
          expect(await db.query('SELECT 1 FROM keypairs WHERE strpos(raw::text, $1) > 0', [k.privateKey!.slice(40, 80)])).toEqual([]);
        }
      });

      it('records first and last seen for every resource and writes cost rollups for priced snapshots', async () => {
        const taken = await db.query<{ taken_at: Date }>('SELECT taken_at FROM snapshots WHERE id = $1', [
          snap('instance', scopeKey(scopes()[0]!.project_id, scopes()[0]!.region_id)),
        ]);
        const presence = await db.query<{ first_seen_at: Date; last_seen_at: Date; gone_at: Date | null }>(
          `SELECT first_seen_at, last_seen_at, gone_at FROM resource_presence_seen WHERE kind = 'instance' AND scope_key = $1`,
          [scopeKey(scopes()[0]!.project_id, scopes()[0]!.region_id)],
        );
        expect(presence).toHaveLength(sim.state.instances(scopes()[0]!.project_id, scopes()[0]!.region_id).length);
        for (const p of presence) {
          expect(p.gone_at).toBeNull();
          expect(p.first_seen_at.getTime()).toBe(taken[0]!.taken_at.getTime());
          expect(p.last_seen_at.getTime()).toBe(taken[0]!.taken_at.getTime());
        }
        const kinds = await db.query<{ kind: string }>(
          `SELECT DISTINCT kind FROM presence_kinds_probe`.replace(
            'presence_kinds_probe',
            `(SELECT kind FROM resource_presence) k`,
          ),
        );
        expect(kinds.map((k) => k.kind).sort()).toEqual(
          ['cluster', 'cluster_server', 'flavor', 'free_feature', 'image_tag', 'instance', 'k8s_price', 'keypair', 'port', 'storage_key'],
        );
        const rollups = await db.query<{ kind: string }>(
          'SELECT DISTINCT s.kind FROM cost_rollups r JOIN snapshots s ON s.id = r.snapshot_id WHERE s.run_id = $1',
          [summary.runId],
        );
        expect(rollups.map((r) => r.kind).sort()).toEqual(['cluster', 'instance', 'k8s_price']);
      });
    });
  });
}

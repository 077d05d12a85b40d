import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../../src/cloud/index.js';
import type { Database } from '../../../src/db/connection.js';
import { runCollection } from '../../../src/collect/index.js';
import type { Simulator } from '../../../src/simulator/index.js';
import { testDatabases } from '../../helpers/databases.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../helpers.js';

export function legacySuite(): void {
  describe('legacy variants', () => {
    /** Columns that must come out the same from the spec's shapes and from the legacy variants. */
    const SAME_COLUMNS: Record<string, string> = {
      instances:
        'instance_id, name, status, vm_state, task_state, flavor_id, flavor_name, vcpus, ram, project_id, region_id, region, created_at, ssh_key_name, security_group_ids, security_group_names, volume_count, tags, tags_read_only, tags_original',
      gpu_clusters:
        'cluster_id, cluster_name, cluster_status, task_status, flavor_name, image_id, image_name, project_id, region_id, region, created_at, ssh_key_name, server_count, tags, tags_read_only, tags_original',
      gpu_cluster_servers:
        'cluster_id, server_id, name, status, vm_state, flavor_id, flavor_name, resource_class, project_id, region_id, region, created_at, ssh_key_name, tags, tags_read_only, tags_original',
      gpu_flavors:
        'flavor_id, flavor_name, disabled, capacity, currency_code, price_per_hour::text, price_per_month::text, price_status, resource_class, hardware, project_id, region_id',
      k8s_cluster_prices:
        'cluster_name, currency_code, price_per_hour::text, price_per_month::text, price_without_discount_per_month::text, discount_percent::text, tax_percent::text, price_status, breakdown, project_id, region_id',
      // Keypairs by name: legacy answers carry the name as the id and no state, sharing or creation time.
      keypairs: 'name, fingerprint, project_id, region_id',
      storage_ssh_keys: 'key_id, name, created_at',
      free_features: 'activation_id, client_id, feature_id, feature_name, feature_service, is_free, created_at',
      image_tags: 'image_id, key, value, read_only, project_id, region_id',
      instance_ports: 'instance_id, port_id, name, security_groups, project_id, region_id',
    };

    describe.each(testDatabases())('legacy answers give the same rows as the spec ($name)', ({ open }) => {
      const sims: Simulator[] = [];
      const clients: CloudClient[] = [];
      const dbs: Database[] = [];

      beforeAll(async () => {
        const config = testConfig();
        for (const legacy of [false, true]) {
          const sim = await startTestSimulator({ seed: 31, legacy });
          const client = testClient(sim, config);
          const db = await open();
          sims.push(sim);
          clients.push(client);
          dbs.push(db);
        }
        const summaries = await Promise.all(dbs.map((db, i) => runCollection(testDeps(db, sims[i]!, clients[i]!, config))));
        for (const s of summaries) expect(s.errors).toEqual([]);
        expect(summaries[1]!.counts).toEqual(summaries[0]!.counts);
      });
      afterAll(async () => {
        await Promise.all([...dbs.map((d) => d.close()), ...clients.map((c) => c.close()), ...sims.map((s) => s.close())]);
      });

      it.each(Object.keys(SAME_COLUMNS))('%s', async (table) => {
        const columns = SAME_COLUMNS[table]!;
        const read = (db: Database) => db.query(`SELECT ${columns} FROM ${table} ORDER BY ${columns.replace(/::text/g, '')}`);
        const [spec, legacy] = await Promise.all(dbs.map(read));
        expect(spec!.length).toBeGreaterThan(0);
        expect(legacy).toEqual(spec);
      });

      it('keeps the legacy field names in raw', async () => {
        const [row] = await dbs[1]!.query<{ raw: Record<string, unknown> }>('SELECT raw FROM instances LIMIT 1');
        expect(row!.raw).toHaveProperty('instance_id');
        expect(row!.raw).toHaveProperty('metadata_detailed');
        const [keypair] = await dbs[1]!.query<{ keypair_id: string; name: string; raw: Record<string, unknown> }>('SELECT keypair_id, name, raw FROM keypairs LIMIT 1');
        expect(keypair!.keypair_id).toBe(keypair!.name);
        expect(keypair!.raw).toHaveProperty('sshkey_id', keypair!.name);
      });
    });
  });
}

/**
 * Offset paging over a list that changes while it is read repeats records: a record created
 * ahead of the offset already read shifts the rest by one, so the next page starts with the
 * last record of the previous one. Snapshot rows are written with COPY, which cannot skip a key
 * already stored, so the collectors must drop the repeats themselves. The client here asks the
 * simulator (over real HTTP) for pages shifted back by one record, which is exactly what such a
 * listing looks like.
 *
 * Likewise an instance is listed once per security group it is in, and must be stored once with
 * every group's id, whatever its record says about its groups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { runCollection, type RunSummary } from '../../src/collect/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

const CLUSTER_PAGE = 3;

/** The client, with every page after the first starting one record early (clusters: in pages of 3). */
function shiftingClient(client: CloudClient): CloudClient {
  const shifted: Partial<CloudClient> = {
    listStorageKeys: (query = {}) => client.listStorageKeys({ ...query, offset: Math.max(0, Number(query.offset ?? 0) - 1) }),
    async *gpuClusterPages(projectId, regionId) {
      let last: Awaited<ReturnType<CloudClient['listGpuClusters']>>['results'][number] | undefined;
      for await (const page of client.gpuClusterPages(projectId, regionId, { pageSize: CLUSTER_PAGE })) {
        yield { ...page, results: last ? [last, ...page.results] : page.results };
        last = page.results.at(-1);
      }
    },
  };
  return withOverrides(client, shifted);
}

/** The client with some of its methods replaced. */
function withOverrides(client: CloudClient, overrides: Partial<CloudClient>): CloudClient {
  return new Proxy(client, {
    get: (target, property, receiver) =>
      property in overrides ? overrides[property as keyof CloudClient] : (Reflect.get(target, property, receiver) as unknown),
  });
}

describe.each(testDatabases())('records repeated by shifting pages ($name)', ({ open }) => {
  let sim: Simulator;
  let config: Config;
  let client: CloudClient;
  let db: Database;
  let summary: RunSummary;

  beforeAll(async () => {
    // Enough storage keys for three pages of the largest page size the API allows.
    sim = await startTestSimulator({ size: 2_100 });
    config = testConfig();
    client = testClient(sim, config);
    db = await open();
    const deps = testDeps(db, sim, shiftingClient(client), config);
    summary = await runCollection(deps, { collectors: ['storage_keys', 'clusters'] });
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  it('stores every storage key once', async () => {
    expect(summary.status).toBe('succeeded');
    const keys = sim.state.storageKeys();
    expect(keys.length).toBeGreaterThan(2_000);
    const stored = await db.query<{ key_id: string }>(
      `SELECT key_id FROM storage_ssh_keys WHERE snapshot_id = (SELECT id FROM snapshots WHERE kind = 'storage_key' AND complete)`,
    );
    expect(stored.map((r) => r.key_id).sort()).toEqual(keys.map((k) => String(k.id)).sort());
    expect(summary.counts['storage_key']).toBe(keys.length);
  });

  it('stores every cluster once, with each of its servers once', async () => {
    const manifest = sim.manifest();
    let clusters = 0;
    let servers = 0;
    for (const scope of manifest.scopes) {
      const simClusters = sim.state.clusters(scope.project_id, scope.region_id);
      clusters += simClusters.length;
      servers += simClusters.reduce((n, c) => n + c.servers.length, 0);
      const stored = await db.query<{ cluster_id: string; servers: number; server_count: number }>(
        `SELECT c.cluster_id, c.server_count,
                (SELECT count(*)::int FROM gpu_cluster_servers s WHERE s.snapshot_id = c.snapshot_id AND s.cluster_id = c.cluster_id) AS servers
           FROM gpu_clusters c JOIN snapshots n ON n.id = c.snapshot_id
          WHERE n.kind = 'cluster' AND n.complete AND n.scope_key = $1 ORDER BY c.cluster_id`,
        [`p${scope.project_id}-r${scope.region_id}`],
      );
      expect(stored).toEqual(
        simClusters
          .map((c) => ({ cluster_id: c.id, servers: c.servers.length, server_count: c.servers.length }))
          .sort((a, b) => (a.cluster_id < b.cluster_id ? -1 : 1)),
      );
    }
    const largest = Math.max(...manifest.scopes.map((scope) => sim.state.clusters(scope.project_id, scope.region_id).length));
    expect(largest).toBeGreaterThan(CLUSTER_PAGE * 2);
    expect(summary.counts['cluster']).toBe(clusters);
    expect(summary.counts['cluster_server']).toBe(servers);
  });
});

/** The client, with each listed instance's record naming only its first security group. */
function oneGroupRecordsClient(client: CloudClient): CloudClient {
  return withOverrides(client, {
    listInstancesBySecurityGroup: async (...args) => {
      const list = await client.listInstancesBySecurityGroup(...args);
      for (const instance of list.results) instance.security_groups = instance.security_groups.slice(0, 1);
      return list;
    },
  });
}

describe.each(testDatabases())('an instance listed through a group its record does not name ($name)', ({ open }) => {
  let sim: Simulator;
  let client: CloudClient;
  let db: Database;
  let summary: RunSummary;

  beforeAll(async () => {
    sim = await startTestSimulator();
    const config = testConfig();
    client = testClient(sim, config);
    db = await open();
    summary = await runCollection(testDeps(db, sim, oneGroupRecordsClient(client), config), { collectors: ['instances'] });
  });
  afterAll(async () => {
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  it('is stored once, with the ids of every group it was listed through, sorted whatever order the pages came in', async () => {
    expect(summary.status).toBe('succeeded');
    let shared = 0;
    for (const scope of sim.manifest().scopes) {
      const expected = sim.state
        .instances(scope.project_id, scope.region_id)
        .map((i) => ({ instance_id: i.id, groups: [...i.securityGroupIds].sort() }))
        .sort((a, b) => (a.instance_id < b.instance_id ? -1 : 1));
      shared += expected.filter((i) => i.groups.length > 1).length;
      const stored = await db.query<{ instance_id: string; security_group_ids: string[] }>(
        `SELECT i.instance_id, i.security_group_ids FROM instances i JOIN snapshots n ON n.id = i.snapshot_id
          WHERE n.kind = 'instance' AND n.complete AND n.scope_key = $1 ORDER BY i.instance_id`,
        [`p${scope.project_id}-r${scope.region_id}`],
      );
      expect(stored.map((r) => ({ instance_id: r.instance_id, groups: r.security_group_ids }))).toEqual(expected);
    }
    expect(shared).toBeGreaterThan(0);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawOf, type CloudClient } from '../../src/cloud/index.js';
import { parseApiTimestamp, type Cluster, type Instance, type Tag } from '../../src/cloud/schemas/index.js';
import { startHarness, type SimHarness } from './helpers/sim.js';

/**
 * The same company (same seed and `now`) served in spec mode and in legacy mode must read as the
 * same normalised records: legacy names, nulls, timestamp formats and prices as strings are all
 * absorbed by the client's tolerant parsing.
 */

const NOW = new Date('2024-05-15T12:00:00Z');
let spec: SimHarness;
let legacy: SimHarness;

beforeAll(async () => {
  [spec, legacy] = await Promise.all([
    startHarness({ seed: 7, now: NOW }),
    startHarness({ seed: 7, now: NOW, legacy: true }),
  ]);
});
afterAll(async () => {
  await Promise.all([spec.close(), legacy.close()]);
});

const instant = (text: string | null) => parseApiTimestamp(text)?.getTime() ?? null;
const tagsOf = (tags: Tag[]) =>
  tags.map((t) => `${t.key}=${t.value ?? ''}${t.read_only ? ' (ro)' : ''}`).sort();
/** Decimal text without trailing zeros, so "720", "720.0" and 720 compare equal. */
const money = (d: string | null) => (d === null ? null : d.includes('.') ? d.replace(/\.?0+$/, '') : d);

function normInstance(i: Instance) {
  return { id: i.id, name: i.name, created_at: instant(i.created_at), tags: tagsOf(i.tags), status: i.status };
}
function normCluster(c: Cluster) {
  return {
    id: c.cluster_id,
    name: c.cluster_name,
    flavor: c.flavor,
    created_at: instant(c.created_at),
    tags: tagsOf(c.tags),
    servers: c.servers.map((s) => s.id).sort(),
  };
}

async function company(client: CloudClient, manifest: ReturnType<SimHarness['sim']['manifest']>) {
  const out: Record<string, unknown> = {};
  for (const scope of manifest.scopes) {
    const { project_id: p, region_id: r } = scope;
    const key = `${p}/${r}`;
    const clusters: Cluster[] = [];
    for await (const page of client.gpuClusterPages(p, r, { pageSize: 50 })) clusters.push(...page.results);
    const instances: Record<string, unknown[]> = {};
    for (const group of scope.security_groups) {
      instances[group] = (await client.listInstancesBySecurityGroup(p, r, group)).results.map(normInstance);
    }
    const flavors = (await client.listGpuFlavors(p, r, { include_prices: true, include_capacity: true })).results.map((f) => ({
      name: f.flavor_name,
      disabled: f.disabled,
      capacity: f.capacity,
      price_per_hour: money(f.price_per_hour),
      price_per_month: money(f.price_per_month),
      currency: f.currency_code,
    }));
    const keypairNames = (await client.listKeypairs(p, r)).results.map((k) => k.name).sort();
    const prices: Record<string, unknown> = {};
    for (const name of scope.k8s_clusters) {
      const price = await client.getK8sClusterPrice(p, r, name);
      prices[name] = { hour: money(price.total_price.price_per_hour), month: money(price.total_price.price_per_month) };
    }
    out[key] = { clusters: clusters.map(normCluster), instances, flavors, keypairNames, prices };
  }
  const features = [];
  for (const id of manifest.free_feature_ids) {
    const f = await client.getFreeFeature(id);
    features.push({ id: f.id, name: f.feature?.name, created: instant(f.create_date) });
  }
  const keys = [];
  for await (const page of client.storageKeyPages({ pageSize: 1000 })) {
    keys.push(...page.results.map((k) => ({ id: k.id, name: k.name, created: instant(k.created_at) })));
  }
  const imageTags: Record<string, unknown> = {};
  const first = manifest.scopes[0]!;
  for (const id of manifest.image_ids) {
    imageTags[id] = tagsOf((await client.getImageTags(first.project_id, first.region_id, id)).results);
  }
  return { scopes: out, features, keys, imageTags };
}

describe('legacy mode', () => {
  it('serves the same layout', () => {
    expect(legacy.sim.manifest()).toEqual(spec.sim.manifest());
  });

  it('yields the same normalised records as spec mode', async () => {
    const manifest = spec.sim.manifest();
    const [a, b] = await Promise.all([company(spec.client, manifest), company(legacy.client, manifest)]);
    expect(b).toEqual(a);
  });

  it('really serves legacy shapes, kept in the raw JSON', async () => {
    const scope = legacy.sim.manifest().scopes.find((s) => s.security_groups.length > 0)!;
    const { results } = await legacy.client.listInstancesBySecurityGroup(scope.project_id, scope.region_id, scope.security_groups[0]!);
    const raw = rawOf(results[0]!)!;
    expect(raw).toHaveProperty('instance_id', results[0]!.id);
    expect(raw['id']).toBeUndefined();
    const keypairs = await legacy.client.listKeypairs(scope.project_id, scope.region_id);
    expect(rawOf(keypairs.results[0]!)).toHaveProperty('sshkey_name');
  });

  it('stop answers a single object in legacy mode, read as a one-record list', async () => {
    const scope = legacy.sim.manifest().scopes.find((s) => s.security_groups.length > 0)!;
    const { results } = await legacy.client.listInstancesBySecurityGroup(scope.project_id, scope.region_id, scope.security_groups[0]!);
    const stopped = await legacy.client.stopInstance(scope.project_id, scope.region_id, results[0]!.id);
    expect(stopped.results).toHaveLength(1);
    expect(stopped.results[0]).toMatchObject({ id: results[0]!.id, status: 'SHUTOFF' });
  });
});

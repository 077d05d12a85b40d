import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudApiError, CloudTaskError, rawOf, type CloudClient } from '../../src/cloud/index.js';
import { parseApiTimestamp, taskState, type GpuFlavor } from '../../src/cloud/schemas/index.js';
import type { SimManifest } from '../../src/simulator/index.js';
import { startHarness, type SimHarness } from './helpers/sim.js';

/** Every endpoint's success path, the client against the simulator over real HTTP. */

let h: SimHarness;
let client: CloudClient;
let manifest: SimManifest;
let P: number;
let R: number;

const DECIMAL = /^-?\d+(\.\d+)?$/;

beforeAll(async () => {
  h = await startHarness();
  client = h.client;
  manifest = h.sim.manifest();
  const scope = manifest.scopes.find((s) => s.security_groups.length > 0 && s.k8s_clusters.length > 0) ?? manifest.scopes[0]!;
  P = scope.project_id;
  R = scope.region_id;
});
afterAll(async () => {
  await h.close();
});

async function allClusterNames(project_id: number, region_id: number): Promise<string[]> {
  const names: string[] = [];
  for await (const page of client.gpuClusterPages(project_id, region_id, { pageSize: 3 })) {
    names.push(...page.results.map((c) => c.cluster_name ?? ''));
  }
  return names;
}

async function usableFlavor(): Promise<GpuFlavor> {
  const { results } = await client.listGpuFlavors(P, R, { include_capacity: true });
  const flavor = results.find((f) => f.disabled !== true);
  if (!flavor) throw new Error('the demo scope has no enabled flavor');
  return flavor;
}

describe('bare metal GPU clusters and flavors', () => {
  it('lists clusters with their servers, tags and timestamps', async () => {
    const list = await client.listGpuClusters(P, R);
    expect(list.count).toBeGreaterThanOrEqual(list.results.length);
    const cluster = list.results.find((c) => c.servers.length > 0);
    expect(cluster).toBeDefined();
    expect(cluster!.cluster_id).toMatch(/\S/);
    expect(parseApiTimestamp(cluster!.created_at)).toBeInstanceOf(Date);
    expect(cluster!.servers[0]!.id).toMatch(/\S/);
    expect(rawOf(cluster!)).toHaveProperty('cluster_id', cluster!.cluster_id);
  });

  it('lists flavors with prices as exact decimal text and capacity on request', async () => {
    const withPrices = await client.listGpuFlavors(P, R, { include_prices: true, include_capacity: true });
    expect(withPrices.results.length).toBeGreaterThan(0);
    const priced = withPrices.results.filter((f) => f.price_per_hour !== null);
    expect(priced.length).toBeGreaterThan(0);
    for (const f of priced) expect(f.price_per_hour).toMatch(DECIMAL);
    expect(withPrices.results.some((f) => typeof f.capacity === 'number')).toBe(true);
  });

  it('creates a cluster, waits for its task to FINISH, then finds it listed', async () => {
    const flavor = await usableFlavor();
    const name = `it-cluster-${Date.now() % 100_000}`;
    const { tasks } = await client.createGpuCluster(P, R, {
      flavor: flavor.flavor_name!,
      image_id: manifest.image_ids[0]!,
      interfaces: [{ type: 'external' }],
      name,
      instances_count: 2,
      tags: { team: 'ml', 'cost-center': 'cc-42' },
    });
    expect(tasks.length).toBeGreaterThan(0);
    const final = await client.waitForTasks(tasks);
    expect(final.map((t) => taskState(t))).toEqual(tasks.map(() => 'FINISHED'));
    expect(await allClusterNames(P, R)).toContain(name);
  });

  it('a cluster with an unknown flavor ends in a CloudTaskError carrying the task', async () => {
    const { tasks } = await client.createGpuCluster(P, R, {
      flavor: 'no-such-flavor-1',
      image_id: manifest.image_ids[0]!,
      interfaces: [{ type: 'external' }],
      name: 'doomed-cluster',
    });
    const err = await client.waitForTasks(tasks).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudTaskError);
    const e = err as CloudTaskError;
    expect(e.tasks.map((t) => taskState(t))).toContain('ERROR');
    const failed = e.tasks.find((t) => taskState(t) === 'ERROR')!;
    expect(failed.error).toBeTruthy();
    expect(e.message).toContain(failed.error!);
    expect(await allClusterNames(P, R)).not.toContain('doomed-cluster');
  });

  it('creates a virtual GPU cluster', async () => {
    const flavor = await usableFlavor();
    const { tasks } = await client.createVirtualGpuCluster(P, R, {
      flavor: flavor.flavor_name!,
      name: 'virtual-it-1',
      servers_count: 1,
      servers_settings: {
        interfaces: [{ type: 'external' }],
        volumes: [{ boot_index: 0, name: 'root', size: 50, source: 'image', type: 'ssd_hiiops' }],
      },
      tags: { team: 'ml' },
    });
    const final = await client.waitForTasks(tasks);
    expect(final.every((t) => taskState(t) === 'FINISHED')).toBe(true);
  });
});

describe('instances', () => {
  it('lists instances by security group, with flavor, tags and ports', async () => {
    const group = manifest.scopes.find((s) => s.project_id === P && s.region_id === R)!.security_groups[0]!;
    const list = await client.listInstancesBySecurityGroup(P, R, group);
    expect(list.results.length).toBeGreaterThan(0);
    const instance = list.results[0]!;
    expect(instance.id).toMatch(/\S/);
    expect(Array.isArray(instance.tags)).toBe(true);
    expect(parseApiTimestamp(instance.created_at)).toBeInstanceOf(Date);
    const ports = await client.listInstancePorts(P, R, instance.id);
    expect(ports.results.length).toBeGreaterThan(0);
    expect(ports.results[0]!.id).toMatch(/\S/);
  });

  it('stops an instance, and it stays stopped in later reads', async () => {
    const group = manifest.scopes.find((s) => s.project_id === P && s.region_id === R)!.security_groups[0]!;
    const before = await client.listInstancesBySecurityGroup(P, R, group);
    const running = before.results.find((i) => i.status === 'ACTIVE');
    expect(running).toBeDefined();
    const stopped = await client.stopInstance(P, R, running!.id);
    expect(stopped.results.find((i) => i.id === running!.id)).toMatchObject({ status: 'SHUTOFF', vm_state: 'stopped' });
    const after = await client.listInstancesBySecurityGroup(P, R, group);
    expect(after.results.find((i) => i.id === running!.id)).toMatchObject({ status: 'SHUTOFF', vm_state: 'stopped' });
    // Stopping again is a no-op that answers the same state.
    const again = await client.stopInstance(P, R, running!.id);
    expect(again.results.find((i) => i.id === running!.id)).toMatchObject({ status: 'SHUTOFF' });
  });

  it('answers 404 for an unknown instance as a CloudApiError', async () => {
    const err = await client.listInstancePorts(P, R, 'no-such-instance').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudApiError);
    expect((err as CloudApiError).status).toBe(404);
  });
});

describe('load balancing', () => {
  it('creates a pool and a load balancer, both tasks finish', async () => {
    const pool = await client.createLbPool(P, R, {
      name: 'pool-it',
      lb_algorithm: 'LEAST_CONNECTIONS',
      protocol: 'TCP',
      healthmonitor: { type: 'TCP', delay: 5, max_retries: 3, timeout: 3 },
      members: [{ address: '10.0.0.5', protocol_port: 8080, weight: 1 }],
    });
    const lb = await client.createLoadBalancer(P, R, {
      name: 'lb-it',
      flavor: 'lb1-1-2',
      listeners: [{ name: 'http-it', protocol: 'HTTP', protocol_port: 80 }],
      tags: { team: 'web' },
    });
    const final = await client.waitForTasks([...pool.tasks, ...lb.tasks]);
    expect(final.every((t) => taskState(t) === 'FINISHED')).toBe(true);
  });

  it('renames a listener and answers its record', async () => {
    const listenerId = h.sim.state.loadBalancers(P, R).flatMap((lb) => lb.listeners)[0]?.id;
    expect(listenerId).toBeDefined();
    const listener = await client.updateLbListener(P, R, listenerId!, { name: 'renamed-listener' });
    expect(listener).toMatchObject({ id: listenerId, name: 'renamed-listener' });
    expect(h.sim.state.listener(P, R, listenerId!)?.name).toBe('renamed-listener');
  });
});

describe('pricing, inference, functions', () => {
  it('prices a managed Kubernetes cluster', async () => {
    const name = manifest.scopes.find((s) => s.project_id === P && s.region_id === R)!.k8s_clusters[0]!;
    const price = await client.getK8sClusterPrice(P, R, name);
    expect(price.total_price.price_per_hour).toMatch(DECIMAL);
    expect(price.total_price.currency_code).toMatch(/^[A-Z]{3}$/);
    expect(price.instances.length).toBeGreaterThan(0);
    expect(rawOf(price)).toHaveProperty('total_price');
  });

  it('creates an inference deployment', async () => {
    const { tasks } = await client.createInferenceDeployment(P, {
      application_name: 'mistral-7b-instruct', // one of the simulator's catalog
      components_configuration: { model: { exposed: true, flavor: 'inference-16vcpu-232gib-1xh100-80gb', scale: { min: 1, max: 2 } } },
      name: 'infer-it',
      regions: [R],
    });
    const final = await client.waitForTasks(tasks);
    expect(final.every((t) => taskState(t) === 'FINISHED')).toBe(true);
    expect(h.sim.state.inferenceDeployments(P).map((d) => d.name)).toContain('infer-it');
  });

  it('deletes a function, and it is gone afterwards', async () => {
    const namespace = h.sim.state.faasNamespaces(P, R).find((ns) => ns.functions.size > 0);
    expect(namespace).toBeDefined();
    const fn = [...namespace!.functions][0]!;
    const { tasks } = await client.deleteFunction(P, R, namespace!.name, fn);
    await client.waitForTasks(tasks);
    expect(h.sim.state.faasNamespaces(P, R).find((ns) => ns.name === namespace!.name)!.functions.has(fn)).toBe(false);
  });
});

describe('images, keys, free features, tasks', () => {
  it('reads image tags', async () => {
    const tags = await client.getImageTags(P, R, manifest.image_ids[0]!);
    expect(Array.isArray(tags.results)).toBe(true);
    for (const tag of tags.results) expect(typeof tag.read_only).toBe('boolean');
  });

  it('lists keypairs without private keys in the raw JSON', async () => {
    const { results } = await client.listKeypairs(P, R);
    expect(results.length).toBeGreaterThan(0);
    for (const k of results) {
      expect(k.name).toMatch(/\S/);
      const raw = rawOf(k)!;
      expect(raw['private_key'] === null || raw['private_key'] === undefined || raw['private_key'] === '[redacted]').toBe(true);
    }
  });

  it('creates, finds and deletes a storage key', async () => {
    const created = await client.createStorageKey({ key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIT it@test', name: 'it-key-unique' });
    expect(created.name).toBe('it-key-unique');
    const found = await client.listStorageKeys({ name: 'it-key-unique' });
    expect(found.data.map((k) => k.id)).toContain(created.id);
    await client.deleteStorageKey(created.id);
    const after = await client.listStorageKeys({ name: 'it-key-unique' });
    expect(after.data.map((k) => k.id)).not.toContain(created.id);
  });

  it('walks more than 1,000 storage keys across pages', async () => {
    const ids = new Set<number>();
    let pages = 0;
    let total: number | null = null;
    for await (const page of client.storageKeyPages({ pageSize: 300 })) {
      pages++;
      total = page.total;
      for (const key of page.results) ids.add(key.id);
    }
    expect(ids.size).toBeGreaterThan(1000);
    expect(pages).toBeGreaterThan(3);
    if (total !== null) expect(ids.size).toBe(total);
    expect(ids.size).toBe(h.sim.state.storageKeys().length);
  });

  it('walks cluster pages one at a time until the count', async () => {
    const expected = h.sim.state.clusters(P, R).length;
    h.sim.clearRequestLog();
    let n = 0;
    for await (const page of client.gpuClusterPages(P, R, { pageSize: 2 })) n += page.results.length;
    expect(n).toBe(expected);
    expect(h.sim.requestLog.length).toBe(Math.max(1, Math.ceil(expected / 2)));
  });

  it('reads an activated free feature', async () => {
    const id = manifest.free_feature_ids[0]!;
    const feature = await client.getFreeFeature(id);
    expect(feature.id).toBe(id);
    expect(parseApiTimestamp(feature.create_date)).toBeInstanceOf(Date);
  });

  it('reads a task by id', async () => {
    const { tasks } = await client.createLbPool(P, R, { name: 'pool-task', lb_algorithm: 'SOURCE_IP', protocol: 'UDP' });
    const task = await client.getTask(tasks[0]!);
    expect(task.id).toBe(tasks[0]);
    expect(['NEW', 'RUNNING', 'FINISHED']).toContain(taskState(task));
  });
});

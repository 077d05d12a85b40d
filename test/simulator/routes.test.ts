import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClusterListSchema,
  FreeFeatureRecordSchema,
  GpuFlavorListSchema,
  ImageTagListSchema,
  InstanceListSchema,
  InstancePortListSchema,
  KeypairListSchema,
  ListenerRecordSchema,
  PricingResultSchema,
  StopInstanceResponseSchema,
  TaskListSchema,
  TaskSchema,
} from '../../src/cloud/schemas/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { multiplyDecimal } from '../../src/simulator/decimal.js';
import { call, firstScope, get, start, waitForTask } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(() => sim.close());

const base = () => {
  const s = firstScope(sim);
  return { p: s.project_id, r: s.region_id, s };
};

describe('simulator routes (spec mode): every success path parses with the shared schemas', () => {
  it('serves the manifest and health without auth', async () => {
    const manifest = await get(sim, '/_sim/manifest', { auth: null });
    expect(manifest.status).toBe(200);
    expect(manifest.json).toEqual(sim.manifest());
    expect(manifest.json.scopes.length).toBeGreaterThanOrEqual(5);
    expect(manifest.json.image_ids.length).toBeGreaterThanOrEqual(3);
    expect(manifest.json.free_feature_ids.length).toBeGreaterThanOrEqual(4);
    const health = await get(sim, '/_sim/health', { auth: null });
    expect(health.status).toBe(200);
    expect(health.json.status).toBe('ok');
    expect(health.headers['content-type']).toMatch(/application\/json/);
  });

  it('lists the instances of a security group', async () => {
    const { p, r, s } = base();
    const answer = await get(sim, `/cloud/v1/securitygroups/${p}/${r}/${s.security_groups[0]}/instances`);
    expect(answer.status).toBe(200);
    const list = InstanceListSchema.parse(answer.json);
    expect(list.count).toBe(list.results.length);
    expect(list.results.length).toBeGreaterThan(0);
    const expected = sim.state.securityGroup(s.security_groups[0]!)!.instances.map((i) => i.id);
    expect(list.results.map((i) => i.id)).toEqual(expected);
    for (const instance of list.results) {
      expect(instance.project_id).toBe(p);
      expect(instance.region_id).toBe(r);
      expect(instance.volumes.length).toBeGreaterThan(0);
      expect(['ACTIVE', 'SHUTOFF']).toContain(instance.status);
      expect(instance.vm_state).toBe(instance.status === 'ACTIVE' ? 'active' : 'stopped');
      expect(instance.flavor?.flavor_name).toBeTruthy();
    }
  });

  it('serves the instances of every group of every scope, some in two groups', async () => {
    const seen = new Map<string, number>();
    for (const scope of sim.manifest().scopes) {
      for (const group of scope.security_groups) {
        const answer = await get(sim, `/cloud/v1/securitygroups/${scope.project_id}/${scope.region_id}/${group}/instances`);
        for (const i of InstanceListSchema.parse(answer.json).results) seen.set(i.id, (seen.get(i.id) ?? 0) + 1);
      }
    }
    expect(seen.size).toBe(60);
    expect([...seen.values()].some((n) => n === 2)).toBe(true);
  });

  it('stops an instance: SHUTOFF in the answer and in every later read, again without error', async () => {
    const { p, r, s } = base();
    const group = sim.state.securityGroup(s.security_groups[0]!)!;
    const target = group.instances.find((i) => i.status === 'ACTIVE')!;
    const answer = await call(sim, 'POST', `/cloud/v1/instances/${p}/${r}/${target.id}/stop`);
    expect(answer.status).toBe(200);
    expect(answer.json.count).toBe(1);
    const stopped = StopInstanceResponseSchema.parse(answer.json).results[0]!;
    expect(stopped.id).toBe(target.id);
    expect(stopped.status).toBe('SHUTOFF');
    expect(stopped.vm_state).toBe('stopped');
    const later = InstanceListSchema.parse(
      (await get(sim, `/cloud/v1/securitygroups/${p}/${r}/${group.id}/instances`)).json,
    ).results.find((i) => i.id === target.id)!;
    expect(later.status).toBe('SHUTOFF');
    const again = await call(sim, 'POST', `/cloud/v1/instances/${p}/${r}/${target.id}/stop`);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(answer.json);
  });

  it('lists the ports of an instance, deterministically, with its security groups', async () => {
    const { p, r } = base();
    const instance = sim.state.instances(p, r)[0]!;
    const answer = await get(sim, `/cloud/v1/instances/${p}/${r}/${instance.id}/ports`);
    expect(answer.status).toBe(200);
    const ports = InstancePortListSchema.parse(answer.json);
    expect(ports.count).toBeGreaterThanOrEqual(1);
    expect(ports.count).toBeLessThanOrEqual(2);
    expect(ports.results[0]!.security_groups.map((g) => g.id)).toEqual(instance.securityGroupIds);
    expect((await get(sim, `/cloud/v1/instances/${p}/${r}/${instance.id}/ports`)).json).toEqual(answer.json);
  });

  it('lists bare metal clusters with servers, pages with limit/offset and counts the total', async () => {
    const { p, r } = base();
    const all = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
    expect(all.count).toBe(all.results.length);
    expect(all.count).toBeGreaterThanOrEqual(2);
    for (const cluster of all.results) {
      expect(cluster.servers.length).toBeGreaterThanOrEqual(1);
      expect(cluster.servers.length).toBeLessThanOrEqual(4);
      expect(cluster.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);
      for (const server of cluster.servers) {
        expect(server.flavor?.resource_class).toBeTruthy();
        expect(server.status).toBe('ACTIVE');
        expect(Object.keys(server.flavor?.hardware_description ?? {}).sort()).toEqual(['cpu', 'disk', 'gpu', 'license', 'network', 'ram']);
      }
      expect(sim.manifest().image_ids).toContain(cluster.image_id);
    }
    expect(all.results.some((c) => c.task_status === 'CLUSTER_CLEAN_UP')).toBe(true);
    expect(all.results.some((c) => c.user_data !== null || c.password !== null)).toBe(true);
    // Raw servers carry no volumes.
    const raw = (await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json;
    expect('volumes' in raw.results[0].servers[0]).toBe(false);

    const page = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}?limit=1&offset=1`)).json);
    expect(page.count).toBe(all.count);
    expect(page.results.map((c) => c.cluster_id)).toEqual([all.results[1]!.cluster_id]);
    const beyond = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}?offset=100`)).json);
    expect(beyond.results).toEqual([]);
    expect(beyond.count).toBe(all.count);
  });

  it('lists GPU flavors per the query flags', async () => {
    const { p, r } = base();
    const plain = await get(sim, `/cloud/v1/ai/flavors/${p}/${r}`);
    const plainList = GpuFlavorListSchema.parse(plain.json);
    expect(plainList.results.every((f) => f.disabled === false)).toBe(true);
    expect(plain.json.results.every((f: object) => !('price_per_hour' in f) && !('capacity' in f))).toBe(true);

    const full = GpuFlavorListSchema.parse(
      (await get(sim, `/cloud/v1/ai/flavors/${p}/${r}?disabled=true&include_prices=true&include_capacity=true`)).json,
    );
    expect(full.count).toBe(plainList.count! + 1);
    const disabled = full.results.filter((f) => f.disabled);
    expect(disabled).toHaveLength(1);
    expect(disabled[0]!.capacity).toBe(0);
    const hidden = full.results.filter((f) => f.price_status === 'hide');
    expect(hidden).toHaveLength(1);
    expect(hidden[0]!.price_per_hour).toBeNull();
    for (const f of full.results.filter((x) => x.price_status === 'show')) {
      expect(f.currency_code).toBe('EUR');
      expect(f.price_per_month).toBe(multiplyDecimal(f.price_per_hour!, 730));
      expect(Number.isInteger(f.capacity)).toBe(true);
    }
    expect(full.results.some((f) => f.flavor_name === 'bm3-ai-1xlarge-h100-80-8')).toBe(true);
    const usd = GpuFlavorListSchema.parse((await get(sim, `/cloud/v1/ai/flavors/380102/120?include_prices=true`)).json);
    expect(usd.results.every((f) => f.currency_code === 'USD')).toBe(true);
  });

  it('lists keypairs', async () => {
    const { p, r } = base();
    const list = KeypairListSchema.parse((await get(sim, `/cloud/v1/keypairs/${p}/${r}`)).json);
    expect(list.count).toBeGreaterThanOrEqual(3);
    for (const k of list.results) {
      expect(k.state).toBe('ACTIVE');
      expect(k.project_id).toBe(p);
      expect(k.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    }
    expect(list.results.some((k) => k.private_key === null)).toBe(true);
  });

  it('answers image tags for a known image', async () => {
    const { p, r } = base();
    const imageId = sim.manifest().image_ids[0]!;
    const list = ImageTagListSchema.parse((await get(sim, `/cloud/v1/images/${p}/${r}/${imageId}/metadata`)).json);
    expect(list.count).toBeGreaterThanOrEqual(4);
    expect(list.results.some((t) => t.read_only)).toBe(true);
    expect(list.results.find((t) => t.key === 'os_distro')?.value).toBeTruthy();
  });

  it('prices a Kubernetes cluster with an exact total', async () => {
    const { p, r, s } = base();
    const answer = await get(sim, `/cloud/v2/pricing/${p}/${r}/k8s/clusters/${s.k8s_clusters[0]}`);
    expect(answer.status).toBe(200);
    const pricing = PricingResultSchema.parse(answer.json);
    expect(pricing.instances.length).toBeGreaterThan(0);
    const items = [...pricing.instances, ...pricing.publicips, ...pricing.volumes];
    const sumMicro = items.reduce((sum, i) => sum + Math.round(Number(i.price_per_hour) * 10_000), 0);
    expect(Math.round(Number(pricing.total_price.price_per_hour) * 10_000)).toBe(sumMicro);
    expect(pricing.total_price.currency_code).toBe('EUR');
    expect(pricing.total_price.price_status).toBe('show');
  });

  it('answers an activated free feature', async () => {
    const id = sim.manifest().free_feature_ids[0]!;
    const feature = FreeFeatureRecordSchema.parse((await get(sim, `/cdn/admin/free_features/${id}`)).json);
    expect(feature.id).toBe(id);
    expect(feature.feature?.is_free).toBe(true);
    expect(feature.create_date).toMatch(/Z$/);
  });

  it('renames a listener on all three paths', async () => {
    const { p, r } = base();
    const listener = sim.state.loadBalancers(p, r)[0]!.listeners[0]!;
    for (const [i, prefix] of ['/v2', '/cloud/v2', '/cloud/v1'].entries()) {
      const answer = await call(sim, 'PATCH', `${prefix}/lblisteners/${p}/${r}/${listener.id}`, { body: { name: `renamed-${i}` } });
      expect(answer.status).toBe(200);
      const record = ListenerRecordSchema.parse(answer.json);
      expect(record.id).toBe(listener.id);
      expect(record.name).toBe(`renamed-${i}`);
    }
    expect(sim.state.listener(p, r, listener.id)?.name).toBe('renamed-2');
  });

  it('starts every asynchronous operation as a task list, readable on both task paths', async () => {
    const { p, r, s } = base();
    const lb = sim.state.loadBalancers(p, r)[0]!;
    const namespace = sim.state.faasNamespaces(p, r)[0]!;
    const fn = [...namespace.functions][0]!;
    const starts = await Promise.all([
      call(sim, 'POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, {
        body: {
          flavor: 'bm3-ai-1xlarge-h100-80-8',
          image_id: sim.manifest().image_ids[0],
          interfaces: [{ type: 'external' }],
          name: 'routes-test-cluster',
        },
      }),
      call(sim, 'POST', `/cloud/v3/gpu/virtual/${p}/${r}/clusters`, {
        body: {
          flavor: 'g3-ai-16-232-1600-l40s-48-1',
          name: 'routes-vc',
          servers_count: 2,
          servers_settings: { interfaces: [{ type: 'external' }], volumes: [{ boot_index: 0, name: 'root', size: 100, source: 'image', type: 'ssd_hiiops' }] },
        },
      }),
      call(sim, 'POST', `/cloud/v1/lbpools/${p}/${r}`, {
        body: { lb_algorithm: 'ROUND_ROBIN', name: 'routes-pool', protocol: 'HTTP', load_balancer_id: lb.id },
      }),
      call(sim, 'POST', `/cloud/v1/loadbalancers/${p}/${r}`, { body: { name: 'routes-lb', flavor: 'lb1-1-2' } }),
      call(sim, 'POST', `/cloud/v3/inference/applications/${p}/deployments`, {
        body: {
          application_name: 'whisper-large-v3',
          components_configuration: { model: { exposed: true, flavor: 'inference-1xl40s', scale: { min: 1, max: 2 } } },
          name: 'routes-whisper',
          regions: [r],
        },
      }),
      call(sim, 'DELETE', `/cloud/v1/faas/namespaces/${p}/${r}/${namespace.name}/functions/${fn}`),
    ]);
    for (const answer of starts) {
      expect(answer.status).toBe(200);
      const { tasks } = TaskListSchema.parse(answer.json);
      expect(tasks).toHaveLength(1);
      const running = TaskSchema.parse((await get(sim, `/cloud/v1/tasks/${tasks[0]}`)).json);
      expect(['RUNNING', 'FINISHED']).toContain(running.status);
      expect(running.state).toBeNull();
      const done = TaskSchema.parse(await waitForTask(sim, tasks[0]!));
      expect(done.status).toBe('FINISHED');
      expect(done.error).toBeNull();
      expect(done.finished_on).not.toBeNull();
    }
    expect(sim.state.clusters(p, r).some((c) => c.name === 'routes-test-cluster')).toBe(true);
    expect(sim.state.virtualClusters(p, r).map((c) => c.name)).toContain('routes-vc');
    expect(sim.state.pools(p, r).map((c) => c.name)).toContain('routes-pool');
    expect(sim.state.loadBalancers(p, r).map((c) => c.name)).toContain('routes-lb');
    expect(sim.state.inferenceDeployments(p).map((d) => d.name)).toContain('routes-whisper');
    expect(sim.state.faasNamespaces(p, r)[0]!.functions.has(fn)).toBe(false);
    expect(s.security_groups.length).toBeGreaterThanOrEqual(2);
  });
});

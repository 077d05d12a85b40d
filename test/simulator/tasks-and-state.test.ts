import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ClusterListSchema, InstanceListSchema, TaskSchema } from '../../src/cloud/schemas/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { call, firstScope, get, start, waitForTask } from './helpers.js';

/** Long enough that the RUNNING state can be observed even on a loaded machine. */
const TASK_DELAY_MS = 500;
let sim: Simulator;
beforeAll(async () => {
  sim = await start({ taskDelayMs: TASK_DELAY_MS });
});
afterAll(() => sim.close());

const scope = () => {
  const s = firstScope(sim);
  return { p: s.project_id, r: s.region_id };
};

function clusterBody(name: string, extra: Record<string, unknown> = {}) {
  return {
    flavor: 'bm3-ai-1xlarge-h100-80-8',
    image_id: sim.manifest().image_ids[1],
    interfaces: [{ type: 'external' }],
    name,
    ...extra,
  };
}

async function startTask(method: string, path: string, body?: unknown): Promise<string> {
  const answer = await call(sim, method, path, body === undefined ? {} : { body });
  expect(answer.status, answer.text).toBe(200);
  return answer.json.tasks[0];
}

describe('simulator tasks', () => {
  it('a cluster create is RUNNING, then FINISHED, and the cluster is listed with its servers ACTIVE', async () => {
    const { p, r } = scope();
    const before = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
    const taskId = await startTask('POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, {
      ...clusterBody('tasks-new-cluster', { instances_count: 3, tags: { team: 'ml', 'k8s.io/role': 'training' } }),
      security_groups: [{ id: firstScope(sim).security_groups[1] }],
    });
    const running = TaskSchema.parse((await get(sim, `/v1/tasks/${taskId}`)).json);
    expect(running.status).toBe('RUNNING');
    expect(running.finished_on).toBeNull();
    const notYet = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
    expect(notYet.count).toBe(before.count);

    const done = TaskSchema.parse(await waitForTask(sim, taskId));
    expect(done.status).toBe('FINISHED');
    const after = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
    expect(after.count).toBe(before.count! + 1);
    const created = after.results.find((c) => c.cluster_name === 'tasks-new-cluster')!;
    expect(created.cluster_id).toBe((done.created_resources as { ai_clusters: string[] }).ai_clusters[0]);
    expect(created.servers).toHaveLength(3);
    expect(created.servers.every((s) => s.status === 'ACTIVE' && s.flavor?.flavor_name === 'bm3-ai-1xlarge-h100-80-8')).toBe(true);
    expect(created.tags).toEqual([
      { key: 'team', value: 'ml', read_only: false },
      { key: 'k8s.io/role', value: 'training', read_only: false },
    ]);
    expect(created.creator_task_id).toBe(taskId);
    expect(after.results.at(-1)?.cluster_id).toBe(created.cluster_id);
  });

  it('ends in ERROR with an error text when the input must fail, and nothing is created', async () => {
    const { p, r } = scope();
    const existing = sim.state.clusters(p, r)[0]!.name;
    const failing: Array<[string, string, unknown, RegExp]> = [
      ['POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody('tasks-bad-flavor', { flavor: 'bm9-nope' }), /flavor 'bm9-nope'/],
      ['POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody('tasks-disabled', { flavor: 'bm1-ai-large-v100-32-8' }), /disabled/],
      ['POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody(existing), /already exists/],
      ['POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody('tasks-bad-key', { ssh_key_name: 'nobody' }), /keypair 'nobody'/],
      [
        'POST',
        `/cloud/v3/inference/applications/${p}/deployments`,
        {
          application_name: 'gpt-17',
          components_configuration: { m: { exposed: false, flavor: 'f', scale: { min: 0, max: 1 } } },
          name: 'nope',
          regions: [r],
        },
        /application 'gpt-17'/,
      ],
      [
        'POST',
        `/cloud/v1/lbpools/${p}/${r}`,
        { lb_algorithm: 'SOURCE_IP', name: 'orphan', protocol: 'TCP', load_balancer_id: '0b7e6f5a-4d8f-4b6c-9a1d-2c8b7e6f5a4d' },
        /load balancer .* not found/,
      ],
      ['POST', `/cloud/v1/loadbalancers/${p}/${r}`, { name: 'lb-x', flavor: 'lb9-huge' }, /flavor 'lb9-huge'/],
      [
        'POST',
        `/cloud/v3/gpu/virtual/${p}/${r}/clusters`,
        { flavor: 'g9-none', name: 'vc-none', servers_count: 1, servers_settings: { interfaces: [], volumes: [] } },
        /flavor 'g9-none'/,
      ],
    ];
    const clustersBefore = sim.state.clusters(p, r).length;
    for (const [method, path, body, message] of failing) {
      const taskId = await startTask(method, path, body);
      const done = TaskSchema.parse(await waitForTask(sim, taskId));
      expect(done.status, path).toBe('ERROR');
      expect(done.error).toMatch(message);
    }
    expect(sim.state.clusters(p, r).length).toBe(clustersBefore);
    expect(sim.state.inferenceDeployments(p).map((d) => d.name)).not.toContain('nope');
  });

  it('a second create of a name still in flight fails', async () => {
    const { p, r } = scope();
    const first = await startTask('POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody('tasks-twice'));
    const second = await startTask('POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody('tasks-twice'));
    expect((await waitForTask(sim, first)).status).toBe('FINISHED');
    expect((await waitForTask(sim, second)).status).toBe('ERROR');
    expect(sim.state.clusters(p, r).filter((c) => c.name === 'tasks-twice')).toHaveLength(1);
  });

  it('a function delete removes the function; deleting it again answers 404', async () => {
    const { p, r } = scope();
    const namespace = sim.state.faasNamespaces(p, r)[0]!;
    const fn = [...namespace.functions].at(-1)!;
    const path = `/cloud/v1/faas/namespaces/${p}/${r}/${namespace.name}/functions/${fn}`;
    const taskId = await startTask('DELETE', path);
    expect(namespace.functions.has(fn)).toBe(true);
    expect((await waitForTask(sim, taskId)).status).toBe('FINISHED');
    expect(namespace.functions.has(fn)).toBe(false);
    expect((await call(sim, 'DELETE', path)).status).toBe(404);
  });

  it('a created load balancer has its listeners, which can then be renamed', async () => {
    const { p, r } = scope();
    const taskId = await startTask('POST', `/cloud/v1/loadbalancers/${p}/${r}`, {
      name: 'tasks-lb',
      listeners: [{ name: 'api-8443', protocol: 'TCP', protocol_port: 8443 }],
      tags: { team: 'platform' },
    });
    expect((await waitForTask(sim, taskId)).status).toBe('FINISHED');
    const lb = sim.state.loadBalancers(p, r).find((l) => l.name === 'tasks-lb')!;
    expect(lb.listeners.map((l) => [l.name, l.protocolPort])).toEqual([['api-8443', 8443]]);
    const renamed = await call(sim, 'PATCH', `/v2/lblisteners/${p}/${r}/${lb.listeners[0]!.id}`, { body: { name: 'api-tls' } });
    expect(renamed.json.name).toBe('api-tls');
    expect(renamed.json.loadbalancer_id).toBe(lb.id);
  });

  it('effects appear in reads even when nobody polls the task', async () => {
    const { p, r } = scope();
    await startTask('POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, clusterBody('tasks-unpolled'));
    await vi.waitFor(
      async () => {
        const list = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
        expect(list.results.map((c) => c.cluster_name)).toContain('tasks-unpolled');
      },
      { timeout: TASK_DELAY_MS + 5_000, interval: 50 },
    );
  });
});

describe('simulator state that changes', () => {
  it('a stopped cluster server stays stopped in the cluster list', async () => {
    const { p, r } = scope();
    const server = sim.state.clusters(p, r)[0]!.servers[0]!;
    const answer = await call(sim, 'POST', `/cloud/v1/instances/${p}/${r}/${server.id}/stop`);
    expect(answer.status).toBe(200);
    expect(answer.json.results[0].status).toBe('SHUTOFF');
    expect('volumes' in answer.json.results[0]).toBe(false);
    const list = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
    const again = list.results.flatMap((c) => c.servers).find((s) => s.id === server.id)!;
    expect(again.status).toBe('SHUTOFF');
    expect(again.vm_state).toBe('stopped');
  });

  it('an instance of another scope cannot be stopped through this scope', async () => {
    const { p, r } = scope();
    const other = sim.manifest().scopes[1]!;
    const foreign = sim.state.instances(other.project_id, other.region_id)[0]!;
    expect((await call(sim, 'POST', `/cloud/v1/instances/${p}/${r}/${foreign.id}/stop`)).status).toBe(404);
    expect(foreign.status === 'SHUTOFF' || foreign.status === 'ACTIVE').toBe(true);
  });

  it('the SimState helpers change what the API answers', async () => {
    const { p, r } = scope();
    const group = firstScope(sim).security_groups[0]!;
    const instance = sim.state.securityGroup(group)!.instances[0]!;
    sim.state.setInstanceTag(instance.id, 'team', 'finance');
    sim.state.setInstanceTag(instance.id, 'brand-new', 'yes');
    sim.state.setInstanceTag(instance.id, 'owner', null);
    const listed = InstanceListSchema.parse((await get(sim, `/cloud/v1/securitygroups/${p}/${r}/${group}/instances`)).json).results.find(
      (i) => i.id === instance.id,
    )!;
    expect(listed.tags.find((t) => t.key === 'team')?.value).toBe('finance');
    expect(listed.tags.find((t) => t.key === 'brand-new')?.value).toBe('yes');
    expect(listed.tags.some((t) => t.key === 'owner')).toBe(false);

    const keyName = sim.state.keypairs(p, r)[0]!.name;
    sim.state.deleteKeypair(p, r, keyName);
    const keys = (await get(sim, `/cloud/v1/keypairs/${p}/${r}`)).json.results.map((k: { name: string }) => k.name);
    expect(keys).not.toContain(keyName);
    expect(() => sim.state.deleteKeypair(p, r, keyName)).toThrow(/no keypair/);

    sim.state.setFlavorPrice(p, r, 'g3-ai-16-232-1600-l40s-48-1', '1.234');
    sim.state.setFlavorPrice(p, r, 'bm3-ai-1xlarge-h100-80-8', null);
    const flavors = (await get(sim, `/cloud/v1/ai/flavors/${p}/${r}?include_prices=true`)).json.results;
    const l40s = flavors.find((f: { flavor_name: string }) => f.flavor_name === 'g3-ai-16-232-1600-l40s-48-1');
    expect([l40s.price_per_hour, l40s.price_per_month]).toEqual([1.234, 900.82]);
    const h100 = flavors.find((f: { flavor_name: string }) => f.flavor_name === 'bm3-ai-1xlarge-h100-80-8');
    expect([h100.price_status, h100.price_per_hour]).toEqual(['hide', null]);
    expect(() => sim.state.setFlavorPrice(p, r, 'g3-ai-16-232-1600-l40s-48-1', '1,5')).toThrow(/decimal/);

    const added = sim.state.addCluster(p, r, { name: 'helper-added', servers_count: 2, tags: { team: 'ops' } });
    const clusters = ClusterListSchema.parse((await get(sim, `/cloud/v2/ai/clusters/${p}/${r}`)).json);
    const found = clusters.results.find((c) => c.cluster_id === added.id)!;
    expect(found.servers).toHaveLength(2);
    expect(sim.state.instance(found.servers[0]!.id)).toBeDefined();
    expect(sim.state.getTask('nope')).toBeUndefined();
  });
});

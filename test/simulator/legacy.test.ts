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
  parseApiTimestamp,
  PricingResultSchema,
  StopInstanceResponseSchema,
  StorageKeyListSchema,
  TaskSchema,
  taskState,
} from '../../src/cloud/schemas/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { call, firstScope, get, start, waitForTask } from './helpers.js';

let spec: Simulator;
let legacy: Simulator;
beforeAll(async () => {
  [spec, legacy] = await Promise.all([start({ seed: 7 }), start({ seed: 7, legacy: true })]);
});
afterAll(() => Promise.all([spec.close(), legacy.close()]));

const both = async (path: string) => {
  const [a, b] = await Promise.all([get(spec, path), get(legacy, path)]);
  expect(a.status, path).toBe(200);
  expect(b.status, path).toBe(200);
  return { spec: a.json, legacy: b.json };
};

const time = (text: string | null) => parseApiTimestamp(text)?.getTime() ?? null;

describe('simulator legacy mode', () => {
  it('serves legacy instance names that still parse to the same ids, names, tags and times', async () => {
    const { project_id: p, region_id: r, security_groups } = firstScope(spec);
    const seen = new Set<string>();
    for (const group of security_groups) {
      const raw = await both(`/cloud/v1/securitygroups/${p}/${r}/${group}/instances`);
      expect(raw.legacy.links).toBeInstanceOf(Array);
      for (const item of raw.legacy.results) {
        expect(item).toHaveProperty('instance_id');
        expect(item).toHaveProperty('instance_name');
        expect(item).toHaveProperty('instance_created');
        expect(item).toHaveProperty('metadata');
        expect(item).toHaveProperty('metadata_detailed');
        expect(item).not.toHaveProperty('id');
        expect(item).not.toHaveProperty('tags');
        expect(item.flavor.os_type).toBeNull();
        expect(typeof item.project_id).toBe('string');
        seen.add(/^\d{4}-\d\d-\d\d \d/.test(item.instance_created) ? 'space' : /\+0000$/.test(item.instance_created) ? 'offset' : /Z$/.test(item.instance_created) ? 'zulu' : 'naive');
      }
      const a = InstanceListSchema.parse(raw.spec).results;
      const b = InstanceListSchema.parse(raw.legacy).results;
      expect(b.map((i) => [i.id, i.name, i.tags, i.ssh_key_name, i.status, i.flavor?.flavor_name, i.project_id, i.flavor?.ram])).toEqual(
        a.map((i) => [i.id, i.name, i.tags, i.ssh_key_name, i.status, i.flavor?.flavor_name, i.project_id, i.flavor?.ram]),
      );
      expect(b.map((i) => time(i.created_at))).toEqual(a.map((i) => time(i.created_at)));
      expect(b.map((i) => i.volumes.map((v) => v.delete_on_termination))).toEqual(a.map((i) => i.volumes.map((v) => v.delete_on_termination)));
    }
    expect(seen).toEqual(new Set(['space', 'offset', 'zulu', 'naive']));
  });

  it('puts cluster servers under poplar_servers with the same ids', async () => {
    const { project_id: p, region_id: r } = firstScope(spec);
    const raw = await both(`/cloud/v2/ai/clusters/${p}/${r}`);
    expect(raw.legacy.results[0]).toHaveProperty('poplar_servers');
    expect(raw.legacy.results[0]).not.toHaveProperty('servers');
    expect(raw.legacy.results[0].interfaces).toBeNull();
    const a = ClusterListSchema.parse(raw.spec).results;
    const b = ClusterListSchema.parse(raw.legacy).results;
    expect(b.map((c) => [c.cluster_id, c.cluster_name, c.tags, c.ssh_key_name, c.servers.map((s) => s.id)])).toEqual(
      a.map((c) => [c.cluster_id, c.cluster_name, c.tags, c.ssh_key_name, c.servers.map((s) => s.id)]),
    );
    expect(b.map((c) => time(c.created_at))).toEqual(a.map((c) => time(c.created_at)));
  });

  it('serves sshkey_* keypairs whose id is the name', async () => {
    const { project_id: p, region_id: r } = firstScope(spec);
    const raw = await both(`/cloud/v1/keypairs/${p}/${r}`);
    for (const k of raw.legacy.results) {
      expect(k.sshkey_id).toBe(k.sshkey_name);
      expect(k).not.toHaveProperty('state');
      expect(k).not.toHaveProperty('created_at');
      expect(k).not.toHaveProperty('shared_in_project');
    }
    const a = KeypairListSchema.parse(raw.spec).results;
    const b = KeypairListSchema.parse(raw.legacy).results;
    expect(b.map((k) => k.name)).toEqual(a.map((k) => k.name));
    expect(b.map((k) => k.id)).toEqual(a.map((k) => k.name));
  });

  it('sends some prices, capacities and booleans as strings that parse to the same values', async () => {
    const { project_id: p, region_id: r } = firstScope(spec);
    const raw = await both(`/cloud/v1/ai/flavors/${p}/${r}?include_prices=true&include_capacity=true&disabled=true`);
    expect(raw.legacy.results.some((f: { price_per_hour: unknown }) => typeof f.price_per_hour === 'string')).toBe(true);
    expect(GpuFlavorListSchema.parse(raw.legacy).results).toEqual(GpuFlavorListSchema.parse(raw.spec).results.map((f) => ({ ...f, architecture: null, os_type: null })));

    const { k8s_clusters } = firstScope(spec);
    const pricing = await both(`/cloud/v2/pricing/${p}/${r}/k8s/clusters/${k8s_clusters[0]}`);
    const a = PricingResultSchema.parse(pricing.spec);
    const b = PricingResultSchema.parse(pricing.legacy);
    expect(b.total_price.price_per_month).toBe(a.total_price.price_per_month);
    expect(b.instances.map((i) => i.price_per_hour)).toEqual(a.instances.map((i) => i.price_per_hour));
  });

  it('keeps the other records readable: ports, image tags, free features, storage keys, listeners', async () => {
    const { project_id: p, region_id: r } = firstScope(spec);
    const instance = spec.state.instances(p, r)[0]!;
    const ports = await both(`/cloud/v1/instances/${p}/${r}/${instance.id}/ports`);
    expect(InstancePortListSchema.parse(ports.legacy).results.map((x) => x.id)).toEqual(InstancePortListSchema.parse(ports.spec).results.map((x) => x.id));
    const image = spec.manifest().image_ids[0]!;
    const tags = await both(`/cloud/v1/images/${p}/${r}/${image}/metadata`);
    expect(typeof tags.legacy.results[0].read_only).toBe('string');
    expect(ImageTagListSchema.parse(tags.legacy).results).toEqual(ImageTagListSchema.parse(tags.spec).results);
    const featureId = spec.manifest().free_feature_ids[0]!;
    const feature = await both(`/cdn/admin/free_features/${featureId}`);
    const fa = FreeFeatureRecordSchema.parse(feature.spec);
    const fb = FreeFeatureRecordSchema.parse(feature.legacy);
    expect([fb.id, fb.feature_id, time(fb.create_date)]).toEqual([fa.id, fa.feature_id, time(fa.create_date)]);
    const keys = await both('/storage/provisioning/v2/key?limit=20');
    const ka = StorageKeyListSchema.parse(keys.spec).data;
    const kb = StorageKeyListSchema.parse(keys.legacy).data;
    expect(kb.map((k) => [k.id, k.name, time(k.created_at)])).toEqual(ka.map((k) => [k.id, k.name, time(k.created_at)]));
    const listener = legacy.state.loadBalancers(p, r)[0]!.listeners[0]!;
    const renamed = await call(legacy, 'PATCH', `/v2/lblisteners/${p}/${r}/${listener.id}`, { body: { name: 'legacy-name' } });
    expect(typeof renamed.json.protocol_port).toBe('string');
    expect(ListenerRecordSchema.parse(renamed.json).protocol_port).toBe(listener.protocolPort);
  });

  it('answers creates with 201, tasks with state, and stop with a single object', async () => {
    const { project_id: p, region_id: r } = firstScope(legacy);
    const created = await call(legacy, 'POST', `/cloud/v1/ai/clusters/gpu/${p}/${r}`, {
      body: { flavor: 'bm3-ai-1xlarge-h100-80-8', image_id: legacy.manifest().image_ids[0], interfaces: [{ type: 'external' }], name: 'legacy-cluster' },
    });
    expect(created.status).toBe(201);
    const taskId = created.json.tasks[0];
    const done = await waitForTask(legacy, taskId, 'state');
    expect(done).not.toHaveProperty('status');
    const task = TaskSchema.parse(done);
    expect(taskState(task)).toBe('FINISHED');

    const keyCreate = await call(legacy, 'PUT', '/storage/provisioning/v1/key', { body: { name: 'legacy-key', key: 'ssh-ed25519 AAAA x' } });
    expect(keyCreate.status).toBe(201);

    const instance = legacy.state.instances(p, r).find((i) => i.status === 'ACTIVE')!;
    const stop = await call(legacy, 'POST', `/cloud/v1/instances/${p}/${r}/${instance.id}/stop`);
    expect(stop.status).toBe(200);
    expect(stop.json).not.toHaveProperty('results');
    expect(stop.json.instance_id).toBe(instance.id);
    const parsed = StopInstanceResponseSchema.parse(stop.json);
    expect(parsed.results.map((i) => [i.id, i.status, i.vm_state])).toEqual([[instance.id, 'SHUTOFF', 'stopped']]);
  });

  it('can be switched on and off at run time', async () => {
    const { project_id: p, region_id: r } = firstScope(spec);
    spec.setOptions({ legacy: true });
    expect((await get(spec, `/cloud/v1/keypairs/${p}/${r}`)).json.results[0]).toHaveProperty('sshkey_id');
    spec.setOptions({ legacy: false });
    expect((await get(spec, `/cloud/v1/keypairs/${p}/${r}`)).json.results[0]).toHaveProperty('id');
  });
});

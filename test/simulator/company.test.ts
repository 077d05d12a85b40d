import { afterAll, describe, expect, it } from 'vitest';
import { InstanceListSchema, InstanceRecordSchema } from '../../src/cloud/schemas/index.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { get, NOW, start } from './helpers.js';

const opened: Simulator[] = [];
afterAll(() => Promise.all(opened.map((s) => s.close())));
async function open(options: Parameters<typeof start>[0]): Promise<Simulator> {
  const sim = await start(options);
  opened.push(sim);
  return sim;
}

async function firstRecords(sim: Simulator) {
  const s = sim.manifest().scopes[0]!;
  const instances = await get(sim, `/cloud/v1/securitygroups/${s.project_id}/${s.region_id}/${s.security_groups[0]}/instances`);
  const clusters = await get(sim, `/cloud/v2/ai/clusters/${s.project_id}/${s.region_id}?limit=2`);
  const keys = await get(sim, '/storage/provisioning/v2/key?limit=5');
  const flavors = await get(sim, `/cloud/v1/ai/flavors/${s.project_id}/${s.region_id}?include_prices=true&include_capacity=true`);
  return [instances.json, clusters.json, keys.json, flavors.json];
}

describe('the demo company', () => {
  it('is the same for the same seed, and different for another', async () => {
    const [a, b, c] = await Promise.all([open({ seed: 11 }), open({ seed: 11 }), open({ seed: 12 })]);
    expect(b.manifest()).toEqual(a.manifest());
    expect(await firstRecords(b)).toEqual(await firstRecords(a));
    expect(c.manifest().scopes[0]!.security_groups).not.toEqual(a.manifest().scopes[0]!.security_groups);
    // The fixed layout: three projects, three regions, five scopes, ids that do not depend on the seed.
    expect(c.manifest().scopes.map((s) => [s.project_id, s.region_id])).toEqual(a.manifest().scopes.map((s) => [s.project_id, s.region_id]));
    expect(new Set(a.state.scopes().map((s) => s.project_id)).size).toBe(3);
    expect(new Set(a.state.scopes().map((s) => s.region_id)).size).toBe(3);
    expect(new Set(a.state.scopes().map((s) => s.currency_code))).toEqual(new Set(['EUR', 'USD']));
    expect(a.state.scopes().map((s) => s.region_name)).toContain('Luxembourg-2');
  });

  it('has the tag hygiene problems, untagged, idle, stopped and unpriced instances a cost tool must handle', async () => {
    const sim = await open({ seed: 42, size: 400 });
    const all = sim.state.scopes().flatMap((s) => sim.state.instances(s.project_id, s.region_id));
    expect(all).toHaveLength(400);
    const keys = new Set(all.flatMap((i) => i.tags.map((t) => t.key)));
    for (const key of ['team', 'Team', 'équipe', 'env', 'cost-center', 'owner', 'billing.code', 'k8s.io/cluster-name', 'created-by', 'expires']) {
      expect(keys, key).toContain(key);
    }
    const teamValues = new Set(all.flatMap((i) => i.tags.filter((t) => t.key.toLowerCase() === 'team').map((t) => t.value)));
    expect(teamValues).toContain('ml');
    expect(teamValues).toContain('ML');
    const untagged = all.filter((i) => i.tags.length === 0).length / all.length;
    expect(untagged).toBeGreaterThan(0.08);
    expect(untagged).toBeLessThan(0.22);
    expect(all.some((i) => i.tags.some((t) => t.key === 'created-by' && t.read_only))).toBe(true);
    const idle = all.filter(
      (i) =>
        !i.tags.some((t) => t.key === 'owner') &&
        i.tags.some((t) => t.key === 'expires' && Date.parse(t.value) < NOW.getTime()) &&
        i.tags.some((t) => t.key === 'env' && ['dev', 'sandbox'].includes(t.value)) &&
        NOW.getTime() - i.createdAt.getTime() > 200 * 86_400_000,
    );
    expect(idle.length).toBeGreaterThan(10);
    expect(idle.some((i) => i.status === 'SHUTOFF')).toBe(true);
    for (const s of sim.state.scopes()) {
      const listed = new Set(sim.state.flavors(s.project_id, s.region_id).filter((f) => f.pricePerHour !== null).map((f) => f.name));
      const instances = sim.state.instances(s.project_id, s.region_id);
      const priced = instances.filter((i) => listed.has(i.flavorName)).length;
      expect(priced / instances.length, `${s.project_id}/${s.region_id}`).toBeGreaterThan(0.6);
      expect(instances.some((i) => !listed.has(i.flavorName))).toBe(true);
    }
    const ages = all.map((i) => NOW.getTime() - i.createdAt.getTime());
    expect(Math.max(...ages)).toBeLessThan(366 * 86_400_000);
    expect(Math.min(...ages)).toBeGreaterThan(0);
  });

  it('scales to 100,000 instances with security groups of at most 2,000', async () => {
    const sim = await startSimulator({ apiKey: 'big', now: NOW, size: 100_000 });
    opened.push(sim);
    let total = 0;
    const ids = new Set<string>();
    for (const s of sim.state.scopes()) {
      const instances = sim.state.instances(s.project_id, s.region_id);
      total += instances.length;
      for (const i of instances) ids.add(i.id);
      for (const g of sim.state.securityGroups(s.project_id, s.region_id)) expect(g.instances.length).toBeLessThanOrEqual(2000);
    }
    expect(total).toBe(100_000);
    expect(ids.size).toBe(100_000);
    expect(sim.state.storageKeys().length).toBeGreaterThan(100_000);
    const s = sim.manifest().scopes[0]!;
    const group = sim.state.securityGroup(s.security_groups[5]!)!;
    const answer = await get(sim, `/cloud/v1/securitygroups/${s.project_id}/${s.region_id}/${group.id}/instances`);
    expect(answer.status).toBe(200);
    expect(answer.json.count).toBe(group.instances.length);
    expect(group.instances.length).toBeGreaterThan(1000);
    InstanceRecordSchema.parse(answer.json.results[0]);
    const page = await get(sim, `/cloud/v2/ai/clusters/${s.project_id}/${s.region_id}?limit=10&offset=500`);
    expect(page.json.count).toBeGreaterThan(500);
    expect(page.json.results).toHaveLength(10);
  });
});

describe('the size knob', () => {
  it('keeps the first scope\'s ids when the size changes', async () => {
    const [small, larger] = await Promise.all([open({ seed: 5, size: 60 }), open({ seed: 5, size: 120 })]);
    const s = small.manifest().scopes[0]!;
    const a = InstanceListSchema.parse((await get(small, `/cloud/v1/securitygroups/${s.project_id}/${s.region_id}/${s.security_groups[0]}/instances`)).json);
    const b = InstanceListSchema.parse((await get(larger, `/cloud/v1/securitygroups/${s.project_id}/${s.region_id}/${s.security_groups[0]}/instances`)).json);
    expect(b.results.slice(0, 2).map((i) => i.id)).toEqual(a.results.slice(0, 2).map((i) => i.id));
    expect(larger.manifest().image_ids).toEqual(small.manifest().image_ids);
  });
});

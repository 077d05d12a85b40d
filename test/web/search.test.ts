/**
 * Global search through real HTTP over data collected from the simulator: every kind by id, id
 * prefix, name, IP address and tag value, current and recently removed.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { runCollection } from '../../src/collect/index.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { testDatabases } from '../helpers/databases.js';
import { startReportsApp, type ReportsApp } from '../reports/helpers.js';

interface Result {
  kind: string;
  id: string;
  name: string | null;
  scope: { project_id: number | null; region_id: number | null; region_name: string | null };
  status: string;
  current: boolean;
  matched: string;
  href: string;
}

describe.each(testDatabases())('global search on $name', ({ open }) => {
  let sim: Simulator;
  let config: Config;
  let client: CloudClient;
  let db: Database;
  let app: ReportsApp;
  let now: Date;
  const known = { server: '', cluster: '', instance: '', instanceName: '', ip: '', removed: '', tagValue: '', taggedId: '' };

  beforeAll(async () => {
    sim = await startTestSimulator({ seed: 5 });
    config = testConfig();
    client = testClient(sim, config);
    db = await open();
    const deps = testDeps(db, sim, client, config);
    expect((await runCollection(deps)).status).toBe('succeeded');

    const scope = sim.state.scopes().find((s) => sim.state.clusters(s.project_id, s.region_id).length > 0)!;
    const cluster = sim.state.clusters(scope.project_id, scope.region_id)[0]!;
    known.cluster = cluster.name;
    known.server = cluster.servers[0]!.id;
    const instances = sim.state.instances(scope.project_id, scope.region_id);
    const removed = instances[0]!;
    known.removed = removed.id;
    const kept = instances[1]!;
    known.instance = kept.id;
    known.instanceName = kept.name;
    const tagged = instances.find((i) => i !== removed && i.tags.length > 0)!;
    known.taggedId = tagged.id;
    known.tagValue = tagged.tags[0]!.value.toUpperCase();
    sim.state.deleteInstance(scope.project_id, scope.region_id, removed.id);
    expect((await runCollection(deps)).status).toBe('succeeded');

    const [ipRow] = await db.query<{ ip: string }>(
      `select raw::jsonb -> 'fixed_ip_assignments' -> 0 ->> 'ip_address' as ip from instances_versions where instance_id = $1 and valid_to is null`,
      [kept.id],
    );
    known.ip = ipRow!.ip;
    const [latest] = await db.query<{ at: Date }>(`select max(taken_at) as at from snapshots`);
    now = new Date(latest!.at.getTime() + 3 * 86_400_000 + 60_000);
    app = await startReportsApp(() => ({ db, config, now }));
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  const find = async (q: string): Promise<Result[]> => findWith(q, null);
  const findWith = async (q: string, limit: number | null): Promise<Result[]> => {
    const res = await request(`${app.base}/api/search?q=${encodeURIComponent(q)}${limit === null ? '' : `&limit=${limit}`}`);
    expect(res.statusCode).toBe(200);
    return ((await res.body.json()) as { results: Result[] }).results;
  };

  it('finds a cluster server by its id as a cluster server, first, with its scope and a link', async () => {
    const [first] = await find(known.server);
    expect(first).toMatchObject({ kind: 'cluster_server', id: known.server, matched: 'id', current: true });
    expect(first!.scope.project_id).not.toBeNull();
    expect(first!.scope.region_name).toBeTruthy();
    expect(first!.href).toBe(`/reports/inventory?kind=servers&q=${encodeURIComponent(known.server)}`);
    const inventory = await request(`${app.base}${first!.href.replace('/reports/', '/api/reports/')}`);
    expect(JSON.stringify(await inventory.body.json())).toContain(known.server);
  });

  it('finds a GPU cluster by name, case-insensitively', async () => {
    const results = await find(known.cluster.toUpperCase());
    expect(results.some((r) => r.kind === 'cluster' && r.name === known.cluster && r.matched === 'name')).toBe(true);
  });

  it('finds an instance by an id prefix', async () => {
    const results = await find(known.instance.slice(0, 8));
    expect(results.find((r) => r.id === known.instance)).toMatchObject({ kind: 'instance', matched: 'id prefix', current: true });
  });

  it('finds an instance by its IP address', async () => {
    const results = await find(known.ip);
    expect(results.find((r) => r.id === known.instance)).toMatchObject({ kind: 'instance', matched: 'ip' });
  });

  it('finds resources by a tag value, case-insensitively', async () => {
    const results = await find(known.tagValue);
    expect(results.find((r) => r.id === known.taggedId)).toMatchObject({ matched: expect.stringMatching(/tag|name/) });
  });

  it('finds a removed instance as removed, after current results', async () => {
    const results = await find(known.removed);
    expect(results[0]).toMatchObject({ kind: 'instance', id: known.removed, current: false, status: 'removed 3 days ago', matched: 'id' });
  });

  it('gives a common tag value every current carrier, each once, and any limit the first ones in name order', async () => {
    // The most common tag value of the current instances: more carriers than the smaller limits.
    const counts = new Map<string, Set<string>>();
    for (const scope of sim.state.scopes()) {
      for (const instance of sim.state.instances(scope.project_id, scope.region_id)) {
        for (const tag of instance.tags) {
          const value = tag.value.trim().toLowerCase();
          if (value.length < 3) continue;
          if (!counts.has(value)) counts.set(value, new Set());
          counts.get(value)!.add(instance.id);
        }
      }
    }
    const [value, carriers] = [...counts.entries()].sort((a, b) => b[1].size - a[1].size)[0]!;
    expect(carriers.size).toBeGreaterThan(5);
    const all = await findWith(value, 200);
    const keys = all.map((r) => `${r.kind}/${r.id}`);
    expect(new Set(keys).size).toBe(keys.length);
    const foundInstances = new Set(all.filter((r) => r.kind === 'instance' && r.current).map((r) => r.id));
    for (const id of carriers) expect(foundInstances.has(id), `instance ${id} carries ${value}`).toBe(true);
    for (const limit of [1, 2, 5]) {
      expect((await findWith(value, limit)).map((r) => `${r.kind}/${r.id}`)).toEqual(keys.slice(0, limit));
    }
  });

  it('answers 400 with a clear message for an empty, missing or too long q and a bad limit', async () => {
    for (const query of ['q=', 'q=%20%20', '', `q=${'x'.repeat(201)}`, 'q=abc&limit=500']) {
      const res = await request(`${app.base}/api/search?${query}`);
      expect(res.statusCode).toBe(400);
      const body = (await res.body.json()) as { error: { message: string } };
      expect(JSON.stringify(body)).toMatch(/q (is required|must)|limit must/);
    }
  });

  it('shows the results on the search page and the search box in every page header', async () => {
    const page = await request(`${app.base}/search?q=${encodeURIComponent(known.cluster)}`);
    expect(page.statusCode).toBe(200);
    const html = await page.body.text();
    expect(html).toMatch(/<form class="header-search" role="search" method="get" action="\/search">\s*<label for="header-search-q">Search<\/label>/);
    expect(html).toContain(`>${known.cluster}</td>`);
    const removed = await (await request(`${app.base}/search?q=${encodeURIComponent(known.removed)}`)).body.text();
    expect(removed).toContain('removed 3 days ago');
    const empty = await request(`${app.base}/search`);
    expect(empty.statusCode).toBe(200);
    expect(await empty.body.text()).toContain('id="search-page-q"');
  });
});

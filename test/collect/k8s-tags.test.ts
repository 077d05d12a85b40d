/**
 * Tags for Kubernetes clusters: the API gives them none, so the configuration may tag one
 * (`k8s_clusters: ["a", {"name": "b", "tags": {...}}]`). Collected from the simulator into a real
 * database and read over HTTP: the configured tags group the cluster's cost like API tags (keys
 * and values normalised by the same rules), tag hygiene lists the untagged clusters, a changed
 * configuration gives the cluster a new version from the next collection (the old one kept), and
 * recompute-rollups re-applies changed tag rules to them.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { runCollection } from '../../src/collect/index.js';
import { recomputeRollups } from '../../src/collect/recompute.js';
import { scopesFromManifest, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import type { Row } from '../../src/reports/report.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { startReportsApp } from '../reports/helpers.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

const T1 = new Date('2025-06-01T12:00:00Z');
const T2 = new Date('2025-06-01T13:00:00Z');
const COLLECTORS = ['flavors', 'k8s_prices', 'clusters', 'instances'] as const;

async function getJson<T>(base: string, path: string): Promise<T> {
  const res = await request(`${base}${path}`);
  const text = await res.body.text();
  expect(res.statusCode, text.slice(0, 300)).toBe(200);
  return JSON.parse(text) as T;
}

/** `12.50` and `12.5` are the same amount. */
const amount = (value: unknown) => String(value).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');

describe.each(testDatabases())('configured tags of Kubernetes clusters on $name', (database) => {
  let sim: Simulator;
  let client: CloudClient;
  let db: Database;
  let scope: { project_id: number; region_id: number; k8s_clusters: string[] };
  let tagged: string;
  let untagged: string[];
  /** The tagged cluster's hourly price as the pricing endpoint gives it. */
  let price: { currency: string; perHour: string };

  /** The configuration with the scope's first cluster tagged as given (the others by name). */
  function configWith(tags: Record<string, string>, file: Record<string, unknown> = {}): Config {
    return testConfig({
      scopes: [{ project_id: scope.project_id, region_id: scope.region_id, k8s_clusters: [{ name: tagged, tags }, ...untagged] }],
      ...file,
    });
  }

  async function collect(config: Config, now: Date): Promise<void> {
    const summary = await runCollection(testDeps(db, sim, client, config, { scopes: config.scopes }), { trigger: 'manual', collectors: COLLECTORS, now });
    expect(summary.status).toBe('succeeded');
  }

  async function served<T>(config: Config, now: Date, path: string): Promise<T> {
    const app = await startReportsApp(() => ({ db, config, now }));
    try {
      return await getJson<T>(app.base, path);
    } finally {
      await app.close();
    }
  }

  /** Run-rate per hour per team value, in the tagged cluster's currency. */
  async function teamRunRates(config: Config, now: Date): Promise<Map<string, string>> {
    const body = await served<{ rows: Row[] }>(config, now, '/api/reports/cost?by=tag%3Ateam&limit=1000');
    return new Map(body.rows.filter((r) => r.currency === price.currency).map((r) => [String(r.group), amount(r.price_per_hour)]));
  }

  beforeAll(async () => {
    sim = await startTestSimulator();
    const manifest = sim.manifest() as { scopes: Array<{ project_id: number; region_id: number; k8s_clusters: string[] }> };
    scope = manifest.scopes.find((s) => s.k8s_clusters.length >= 2)!;
    expect(scope).toBeDefined();
    [tagged, ...untagged] = scope.k8s_clusters as [string, ...string[]];
    client = testClient(sim, testConfig());
    const answer = await client.getK8sClusterPrice(scope.project_id, scope.region_id, tagged);
    price = { currency: String(answer.total_price.currency_code).toUpperCase(), perHour: amount(answer.total_price.price_per_hour) };
    db = await database.open();
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  it('validates the shape: names or {name, tags}, each name once, tags as strings', () => {
    expect(scopesFromManifest({ scopes: [{ project_id: 1, region_id: 2, k8s_clusters: ['a', { name: 'b', tags: { team: 'ml' } }] }] }).scopes[0]).toMatchObject({
      k8sClusters: ['a', 'b'],
      k8sClusterTags: { b: { team: 'ml' } },
    });
    const problems = (clusters: unknown[]) => {
      try {
        testConfig({ scopes: [{ project_id: 1, region_id: 2, k8s_clusters: clusters }] });
        return [];
      } catch (error) {
        return (error as { problems: Array<{ path: string; message: string }> }).problems;
      }
    };
    expect(problems(['a', { name: 'a', tags: { team: 'ml' } }])).toEqual([
      { path: 'scopes[0].k8s_clusters[1]', message: 'repeats scopes[0].k8s_clusters[0] (cluster "a"); list each cluster once, with its tags' },
    ]);
    expect(problems([{ name: 'b', tags: { team: 3 } }])).toEqual([{ path: 'scopes[0].k8s_clusters[0].tags.team', message: 'a tag value must be a string' }]);
    expect(problems([{ name: 'b', tags: { ' ': 'x' } }])).toEqual([
      { path: 'scopes[0].k8s_clusters[0].tags[" "]', message: 'a tag key must be 1 to 255 characters, not only spaces' },
    ]);
    expect(problems([{ name: 'b', tags: ['team'] }])).toEqual([{ path: 'scopes[0].k8s_clusters[0].tags', message: 'must be an object of tag keys to string values' }]);
    expect(problems([7])).toEqual([{ path: 'scopes[0].k8s_clusters[0]', message: 'must be a cluster name or {"name": "...", "tags": {"key": "value"}}' }]);
    expect(problems([{ name: 'b', tag: {} }])).toEqual([{ path: 'scopes[0].k8s_clusters[0].tag', message: 'is not a known setting' }]);
  });

  it('stores the configured tags like API tags and groups the cluster\'s cost by them', async () => {
    // `Team` normalises to `team` (lower-case keys by default), the value is kept as written.
    const config = configWith({ Team: 'K8s-Owners', env: 'prod' });
    await collect(config, T1);
    const [row] = await db.query<{ tags: Record<string, string>; tags_read_only: string[]; tags_original: unknown }>(
      `select tags, tags_read_only, tags_original from k8s_cluster_prices_versions where cluster_name = $1`,
      [tagged],
    );
    expect(row).toEqual({
      tags: { team: 'K8s-Owners', env: 'prod' },
      tags_read_only: [],
      tags_original: [
        { key: 'Team', value: 'K8s-Owners', read_only: false },
        { key: 'env', value: 'prod', read_only: false },
      ],
    });
    // The only resource with this team value: its group's run-rate is the endpoint's price.
    const rates = await teamRunRates(config, T1);
    expect(rates.get('K8s-Owners')).toBe(price.perHour);
    // FOCUS passes the tags on as configured, and the normalised ones beside them.
    const focus = await served<{ rows: Row[] }>(config, T2, '/api/reports/focus?limit=10000');
    const rows = focus.rows.filter((r) => String(r.ResourceId).endsWith(`/${tagged}`));
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.Tags).toEqual({ Team: 'K8s-Owners', env: 'prod' });
      expect(r.x_NormalizedTags).toEqual({ team: 'K8s-Owners', env: 'prod' });
    }
  });

  it('lists the untagged Kubernetes clusters in tag hygiene, not the tagged one', async () => {
    const config = configWith({ Team: 'K8s-Owners', env: 'prod' });
    const hygiene = await served<{ rows: Row[] }>(config, T1, '/api/reports/tag-hygiene');
    const team = hygiene.rows.find((r) => r.key === 'team')!;
    const lacking = await served<{ rows: Row[]; page: { total: number } }>(config, T1, `/api/reports/inventory?kind=resources&missing_tag=team&limit=1000`);
    expect(lacking.page.total).toBe(Number(team.lacking));
    const k8sNames = lacking.rows.filter((r) => r.kind === 'k8s_price').map((r) => r.name);
    expect(k8sNames.sort()).toEqual([...untagged].sort());
  });

  it('gives the cluster a new version when its configured tags change, keeping the old one', async () => {
    const config = configWith({ Team: 'Platform-K8s', env: 'prod' });
    await collect(config, T2);
    // The first version ends when the second collection's snapshot of the scope was taken.
    const versions = await db.query<{ team: string; ended_by_second: boolean | null }>(
      `select tags->>'team' as team, valid_to = (select max(taken_at) from snapshots where kind = 'k8s_price') as ended_by_second
       from k8s_cluster_prices_versions where cluster_name = $1 order by valid_from`,
      [tagged],
    );
    expect(versions).toEqual([
      { team: 'K8s-Owners', ended_by_second: true },
      { team: 'Platform-K8s', ended_by_second: null },
    ]);
    const rates = await teamRunRates(config, T2);
    expect(rates.get('Platform-K8s')).toBe(price.perHour);
    // The old value's group keeps the hour it was current (the period's cost), with no run-rate now.
    expect(rates.get('K8s-Owners')).toBe('0');
  });

  it('re-applies changed tag rules to the clusters\' history (recompute-rollups)', async () => {
    const rules = configWith({ Team: 'Platform-K8s', env: 'prod' }, { tag_value_case: 'lower' });
    const summary = await recomputeRollups(db, rules);
    expect(summary.failures).toEqual([]);
    const teams = await db.query<{ team: string }>(`select tags->>'team' as team from k8s_cluster_prices_versions where cluster_name = $1 order by valid_from`, [tagged]);
    expect(teams.map((t) => t.team)).toEqual(['k8s-owners', 'platform-k8s']);
    const rates = await teamRunRates(rules, T2);
    expect(rates.get('platform-k8s')).toBe(price.perHour);
  });
});

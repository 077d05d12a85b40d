/**
 * The golden history (issue 15): the demo simulator collected through evolving steps with a fixed
 * seed and a fixed clock, and every report's answer over it. The fixtures under
 * test/fixtures/history/ were captured with the storage of release 0007 (one row per resource and
 * snapshot); the equivalence and migration tests assert that the version storage answers exactly
 * the same.
 *
 * Steps (each a full collection, `now` = T0 + step hours, Date frozen so every snapshot of a run
 * is taken at exactly that instant):
 *   0  first collection;
 *   1  an instance stopped, another retagged, a cluster added;
 *   2  a flavor repriced, a keypair and a storage key deleted, one instance's ports unreadable;
 *   3  nothing changed (every resource identical to step 2, ports read again);
 *   4  the retag undone (a resource going back to an earlier content), the clusters listing of
 *      one scope failing (partial run: that scope keeps its step-3 snapshot);
 *   5  a tag removed, the failing scope read again.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { vi } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { runCollection } from '../../src/collect/index.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { MIGRATIONS_FOLDER, migrateDatabase } from '../../src/db/migrate.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { startReportsApp } from '../reports/helpers.js';

export const FIXTURES = fileURLToPath(new URL('../fixtures/history/', import.meta.url));
export const T0 = new Date('2025-06-01T12:00:00Z');
export const hoursAfterT0 = (h: number) => new Date(T0.getTime() + h * 3_600_000);
/** The reports' clock: an hour after the last step. */
export const REPORTS_NOW = hoursAfterT0(6);
export const STEPS = 6;

/** Tables of the 0007 schema whose data the migration fixture holds, in load order (FKs). */
export const DATA_TABLES = [
  'collection_runs',
  'snapshots',
  'gpu_clusters',
  'gpu_cluster_servers',
  'instances',
  'instance_ports',
  'unread_instance_ports',
  'keypairs',
  'storage_ssh_keys',
  'image_tags',
  'free_features',
  'gpu_flavors',
  'k8s_cluster_prices',
  'resource_presence',
  'cost_rollups',
  'cost_daily',
  'cost_daily_closed_days',
  'cost_daily_sealed_days',
] as const;

/** One request at a time: snapshot ids are then assigned in the same order on every run. */
export function goldenConfig(): Config {
  return testConfig({ client: { timeout_ms: 10_000, max_concurrency: 1, max_retries: 1 } });
}

export interface GoldenHistory {
  sim: Simulator;
  client: CloudClient;
  config: Config;
  close(): Promise<void>;
}

/** One run, every collector, with Date frozen at `at` (so taken_at = at exactly). */
async function collectAt(db: Database, sim: Simulator, client: CloudClient, config: Config, at: Date): Promise<string> {
  vi.useFakeTimers({ toFake: ['Date'], now: at });
  try {
    const summary = await runCollection(testDeps(db, sim, client, config), { now: at });
    return summary.status;
  } finally {
    vi.useRealTimers();
  }
}

/**
 * Runs the steps into `db`. `afterStep(i)` is called after each step's collection (e.g. to capture
 * reports as of then). Run records get fixed times (they are written with the database's clock).
 */
export async function buildGoldenHistory(db: Database, afterStep?: (step: number) => Promise<void>): Promise<GoldenHistory> {
  const sim = await startTestSimulator({ seed: 15 });
  const config = goldenConfig();
  const client = testClient(sim, config);
  // A handful of storage keys (the demo has over a thousand), so the fixtures stay small.
  for (const key of sim.state.storageKeys().slice(5)) sim.state.deleteStorageKey(key.id);
  const [s1, s2] = sim.state.scopes();
  const p = s1!.project_id;
  const r = s1!.region_id;
  const instances = sim.state.instances(p, r);
  const running = instances.find((i) => i.status === 'ACTIVE')!;
  const tagged = instances.find((i) => i !== running && i.tags.some((t) => t.key === 'team'))!;
  const originalTeam = tagged.tags.find((t) => t.key === 'team')!.value;
  const portsOf = instances.find((i) => i !== running && i !== tagged)!;
  // Both rounds of the ports collector fail (it asks a failed instance once more at the end of the scope).
  const failPorts = () =>
    sim.injectFaults({ match: { path: new RegExp(`/instances/\\d+/\\d+/${portsOf.id}/ports`) }, kind: 'status', status: 503, count: 2 * (config.client.maxRetries + 1) });

  const steps: Array<() => void> = [
    () => undefined,
    () => {
      sim.state.stopInstance(p, r, running.id);
      sim.state.setInstanceTag(tagged.id, 'team', 'finance');
      sim.state.addCluster(p, r, { name: 'golden-added', servers_count: 2, tags: { team: 'ml', env: 'prod' }, created_at: hoursAfterT0(1) }).id;
    },
    () => {
      const flavor = sim.state.flavors(p, r)[0]!;
      sim.state.setFlavorPrice(p, r, flavor.name, '9.87654321');
      sim.state.deleteKeypair(p, r, sim.state.keypairs(p, r)[0]!.name);
      const key = sim.state.storageKeys()[0];
      if (key) sim.state.deleteStorageKey(key.id);
      failPorts();
    },
    () => undefined,
    () => {
      sim.state.setInstanceTag(tagged.id, 'team', originalTeam);
      const other = s2 ?? s1!;
      sim.injectFaults({ match: { path: new RegExp(`/ai/clusters/${other.project_id}/${other.region_id}`) }, kind: 'status', status: 503, count: config.client.maxRetries + 1 });
    },
    () => {
      sim.state.setInstanceTag(tagged.id, 'env', null);
    },
  ];
  for (let step = 0; step < steps.length; step++) {
    steps[step]!();
    const at = hoursAfterT0(step);
    await collectAt(db, sim, client, config, at);
    await db.execute(
      `update collection_runs set started_at = $1, heartbeat_at = $1, finished_at = $1::timestamptz + interval '1 minute' where id = (select max(id) from collection_runs)`,
      [at],
    );
    await afterStep?.(step);
  }
  return {
    sim,
    client,
    config,
    close: async () => {
      await client.close();
      await sim.close();
    },
  };
}

/** Report paths captured at every step (JSON through the web API, and CSV exports). */
export function reportPaths(step: number): string[] {
  const since = (h: number) => encodeURIComponent(hoursAfterT0(h).toISOString());
  const json = [
    '/api/reports/overview?period=mtd',
    '/api/reports/overview?period=2025-06',
    ...['tag:team', 'tag:env', 'project', 'region', 'kind', 'flavor', 'state'].map((by) => `/api/reports/cost?by=${by}&period=2025-06&limit=10000`),
    '/api/reports/monthly?by=tag:team&period=2025-06',
    '/api/reports/monthly?by=kind&from=2025-05&to=2025-06',
    '/api/reports/trend?by=tag:team&days=7',
    '/api/reports/trend?by=kind&days=2',
    '/api/reports/tag-hygiene?limit=10000',
    '/api/reports/k8s-prices?limit=10000',
    '/api/reports/focus?period=2025-06&limit=10000',
    ...['instances', 'clusters', 'servers', 'resources', 'ports', 'keypairs', 'storage-keys', 'image-tags', 'free-features'].map(
      (kind) => `/api/reports/inventory?kind=${kind}&limit=10000`,
    ),
    '/api/reports/inventory?kind=instances&tag=team:ml&limit=10000',
    '/api/reports/inventory?kind=instances&state=stopped&limit=10000',
    '/api/reports/flavors?limit=10000',
    ...['instances', 'clusters', 'servers', 'ports', 'keypairs', 'flavors', 'k8s-prices'].flatMap((kind) => [
      `/api/reports/changes?kind=${kind}&hours=1&limit=10000`,
      ...Array.from({ length: step }, (_, h) => `/api/reports/changes?kind=${kind}&since=${since(h)}&limit=10000`),
    ]),
    '/api/reports/collection-health?view=runs&limit=10000',
    '/api/reports/collection-health?view=scopes&limit=10000',
    '/api/reports/idle?limit=10000',
    '/api/reports/scheduled-stops?limit=10000',
    '/api/reports/audit?limit=10000',
  ];
  const csv = [
    '/api/reports/inventory.csv?kind=instances',
    '/api/reports/inventory.csv?kind=ports',
    '/api/reports/inventory.csv?kind=resources',
    '/api/reports/changes.csv?kind=instances&hours=5',
    '/api/reports/focus.csv?period=2025-06',
    '/api/reports/cost.csv?by=tag:team&period=2025-06',
  ];
  return [...json, ...csv];
}

/** Drops what depends on when the capture ran, not on the data. */
export function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'computedAt' || k === 'computed_at') continue;
      out[k] = normalise(v);
    }
    return out;
  }
  return value;
}

/** Every report's answer as of now over `db`: {path: body}. */
export async function captureReports(db: Database, config: Config, step: number): Promise<Record<string, unknown>> {
  const app = await startReportsApp(() => ({ db, config, now: hoursAfterT0(step) }));
  try {
    const out: Record<string, unknown> = {};
    for (const path of reportPaths(step)) {
      const res = await request(`${app.base}${path}`);
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 300)}`);
      out[path] = path.includes('.csv') ? text.split('\n') : normalise(JSON.parse(text));
    }
    return out;
  } finally {
    await app.close();
  }
}

/**
 * The rows of every complete snapshot, per resource table, as the reports see them
 * (`where snapshot_id = $1`): "the snapshot at time T" exactly. (Values: each table's key.)
 */
export const SNAPSHOT_TABLES: Record<string, string> = {
  gpu_clusters: 'cluster_id',
  gpu_cluster_servers: 'cluster_id, server_id',
  instances: 'instance_id',
  instance_ports: 'instance_id, port_id',
  unread_instance_ports: 'instance_id',
  keypairs: 'keypair_id',
  storage_ssh_keys: 'key_id',
  image_tags: 'image_id, key',
  free_features: 'activation_id',
  gpu_flavors: 'flavor_id',
  k8s_cluster_prices: 'cluster_name',
};

/**
 * Tables whose rows are compared through a column list rather than whole: Kubernetes prices got
 * the configuration's tags (migration 0020), empty for the golden history; instances' groups are
 * compared as a set.
 */
const GOLDEN_COLUMNS: Record<string, string> = {
  // Security groups are a set: the 0007 data has them in the order the group pages finished,
  // collections since migration 0022 sort them.
  instances:
    'snapshot_id, instance_id, name, description, status, vm_state, task_state, flavor_id, flavor_name, vcpus, ram, project_id, region_id, region, created_at, ssh_key_name, array(select g from unnest(security_group_ids) g order by g), security_group_names, volume_count, tags, tags_read_only, tags_original, raw',
  k8s_cluster_prices:
    'snapshot_id, cluster_name, currency_code, price_per_hour, price_per_month, price_without_discount_per_month, discount_percent, tax_percent, price_status, breakdown, project_id, region_id, raw',
};

export async function captureSnapshotRows(db: Database): Promise<Record<string, Record<string, string[]>>> {
  const snaps = await db.query<{ id: number; kind: string; scope_key: string; taken_at: Date }>(
    `select id, kind, scope_key, taken_at from snapshots where complete order by taken_at, kind, scope_key`,
  );
  const out: Record<string, Record<string, string[]>> = {};
  for (const s of snaps) {
    const tables: Record<string, string[]> = {};
    for (const table of Object.keys(SNAPSHOT_TABLES)) {
      // The row's text (exact: numeric scale, json as stored) without its snapshot_id, the first
      // field (ids depend on the order in which concurrent units opened their snapshots).
      const columns = GOLDEN_COLUMNS[table];
      const rows = await db.query<{ r: string }>(`select ${columns ? `row(${columns})` : 't'}::text as r from ${table} t where snapshot_id = $1`, [s.id]);
      if (rows.length > 0) tables[table] = rows.map((r) => r.r.replace(/^\(\d+,/, '(')).sort();
    }
    out[`${s.taken_at.toISOString()} ${s.kind} ${s.scope_key}`] = tables;
  }
  return out;
}

/** The data of every DATA_TABLES table, {table: [row text]}: exact, for loading into a 0007 database. */
export async function dumpData(db: Database): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of DATA_TABLES) {
    const rows = await db.query<{ r: string }>(`select t::text as r from ${table} t order by 1`);
    out[table] = rows.map((r) => r.r);
  }
  return out;
}

/** Loads dumpData's output into a database with the same tables (identity values kept). */
export async function loadData(db: Database, data: Record<string, string[]>): Promise<void> {
  for (const table of DATA_TABLES) {
    const rows = data[table] ?? [];
    if (rows.length === 0) continue;
    await db.execute(`insert into ${table} overriding system value select (r::${table}).* from unnest($1::text[]) as r`, [rows]);
  }
  for (const table of ['collection_runs', 'snapshots']) {
    await db.execute(`select setval(pg_get_serial_sequence('${table}', 'id'), (select coalesce(max(id), 1) from ${table}))`);
  }
}

/** A copy of migrations/ holding only the migrations up to the 0007 release (the per-snapshot storage). */
export function migrationsUpTo0007(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ct-migrations-0007-'));
  cpSync(MIGRATIONS_FOLDER, dir, { recursive: true });
  const journalPath = join(dir, 'meta', '_journal.json');
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as { entries: Array<{ idx: number; tag: string }> };
  const last = journal.entries.findIndex((e) => e.tag.startsWith('0007_'));
  if (last < 0) throw new Error('no 0007 migration in the journal');
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

/** A database at the 0007 schema holding the golden data (the old storage, as released). */
export async function openGolden0007(open: (options?: { migrate?: boolean }) => Promise<Database>): Promise<Database> {
  const dir = migrationsUpTo0007();
  try {
    const db = await open({ migrate: false });
    await migrateDatabase(db, { migrationsFolder: dir });
    await loadData(db, readFixture<Record<string, string[]>>('data-0007.json'));
    return db;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function fixturePath(name: string): string {
  return `${FIXTURES}${name}`;
}

export function readFixture<T = unknown>(name: string): T {
  return JSON.parse(readFileSync(fixturePath(name), 'utf8')) as T;
}

export function writeFixture(name: string, value: unknown): void {
  mkdirSync(FIXTURES, { recursive: true });
  writeFileSync(fixturePath(name), typeof value === 'string' ? value : JSON.stringify(value, null, 1) + '\n');
}

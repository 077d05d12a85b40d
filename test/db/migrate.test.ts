import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { testDatabases } from '../helpers/databases.js';

/** Every migration of the journal is applied exactly once. */
const MIGRATION_COUNT = (JSON.parse(readFileSync(new URL('../../migrations/meta/_journal.json', import.meta.url), 'utf8')) as { entries: unknown[] }).entries.length;

const EXPECTED_TABLES = [
  'anomaly_explanations',
  'audit_log',
  'auth_sessions',
  'budgets',
  'collection_runs',
  'cost_daily',
  'cost_daily_closed_days',
  'cost_daily_coverage',
  'cost_daily_sealed_days',
  'cost_daily_totals',
  'cost_daily_totals_days',
  'cost_partition_keys',
  'cost_rollups',
  'current_instances',
  'current_instances_stamp',
  'demo_company',
  'free_features', // a view: every snapshot's rows, over free_features_versions and free_features_kept
  'free_features_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'free_features_staged',
  'free_features_versions',
  'gpu_cluster_servers', // a view: every snapshot's rows, over gpu_cluster_servers_versions and gpu_cluster_servers_kept
  'gpu_cluster_servers_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'gpu_cluster_servers_staged',
  'gpu_cluster_servers_versions',
  'gpu_clusters', // a view: every snapshot's rows, over gpu_clusters_versions and gpu_clusters_kept
  'gpu_clusters_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'gpu_clusters_staged',
  'gpu_clusters_versions',
  'gpu_flavors', // a view: every snapshot's rows, over gpu_flavors_versions and gpu_flavors_kept
  'gpu_flavors_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'gpu_flavors_staged',
  'gpu_flavors_versions',
  'image_tags', // a view: every snapshot's rows, over image_tags_versions and image_tags_kept
  'image_tags_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'image_tags_staged',
  'image_tags_versions',
  'instance_ports', // a view: every snapshot's rows, over instance_ports_versions and instance_ports_kept
  'instance_ports_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'instance_ports_staged',
  'instance_ports_versions',
  'instance_status_overrides', // a view (information_schema.tables lists views too)
  'instances', // a view: every snapshot's rows, over instances_versions and instances_kept
  'instances_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'instances_staged',
  'instances_versions',
  'k8s_cluster_prices', // a view: every snapshot's rows, over k8s_cluster_prices_versions and k8s_cluster_prices_kept
  'k8s_cluster_prices_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'k8s_cluster_prices_staged',
  'k8s_cluster_prices_versions',
  'keypairs', // a view: every snapshot's rows, over keypairs_versions and keypairs_kept
  'keypairs_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'keypairs_staged',
  'keypairs_versions',
  'notify_deliveries',
  'notify_messages',
  'resource_presence',
  'resource_presence_scopes',
  'resource_presence_seen', // a view: resource_presence with the implicit last seen resolved
  'saved_views',
  'schedule_claims',
  'scheduled_stops',
  'snapshots',
  'storage_ssh_keys', // a view: every snapshot's rows, over storage_ssh_keys_versions and storage_ssh_keys_kept
  'storage_ssh_keys_kept', // rows of complete snapshots not folded (logged); _staged is the unlogged write buffer
  'storage_ssh_keys_staged',
  'storage_ssh_keys_versions',
  'unread_instance_ports',
];

describe.each(testDatabases())('migrations on $name', ({ open }) => {
  let database: Database | undefined;
  afterEach(async () => {
    await database?.close();
    database = undefined;
  });

  it('creates every table and index, and a second run changes nothing', async () => {
    database = await open({ migrate: false });
    await migrateDatabase(database);

    const tables = await database.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`,
    );
    expect(tables.map((t) => t.table_name)).toEqual(EXPECTED_TABLES);

    const indexes = await database.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname`,
    );
    const byName = new Map(indexes.map((i) => [i.indexname, i.indexdef]));
    expect(byName.get('instances_versions_tags_idx')).toMatch(/USING gin \(tags jsonb_path_ops\)/);
    expect(byName.get('snapshots_latest_complete_idx')).toMatch(/\(kind, scope_key, taken_at DESC\) WHERE complete/);
    const presence = await database.query<{ reloptions: string[] | null }>(`SELECT reloptions FROM pg_class WHERE relname = 'resource_presence'`);
    expect(presence[0]!.reloptions).toEqual(['fillfactor=60']);
    const raw = await database.query<{ data_type: string }>(`SELECT DISTINCT data_type FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'raw'`);
    expect(raw).toEqual([{ data_type: 'json' }]);
    // The collectors' write buffer writes no WAL; the rows that stay (kept, versions) are logged.
    const persistence = await database.query<{ relname: string; relpersistence: string }>(
      `SELECT relname, relpersistence FROM pg_class WHERE relkind = 'r' AND relname ~ '_(staged|kept)$' ORDER BY relname`,
    );
    expect(persistence).toHaveLength(20);
    for (const r of persistence) expect([r.relname, r.relpersistence]).toEqual([r.relname, r.relname.endsWith('_staged') ? 'u' : 'p']);

    const applied = await database.query<{ hash: string }>('SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id');
    expect(applied.length).toBeGreaterThanOrEqual(2);

    await migrateDatabase(database);
    const again = await database.query<{ hash: string }>('SELECT hash FROM drizzle.__drizzle_migrations ORDER BY id');
    expect(again).toEqual(applied);
    const tablesAgain = await database.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(tablesAgain).toEqual([{ n: EXPECTED_TABLES.length }]);
  });

  it('lets concurrent migrations of one database take turns', async () => {
    database = await open({ migrate: false });
    await Promise.all([migrateDatabase(database), migrateDatabase(database), migrateDatabase(database)]);
    const applied = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
    const files = await database.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`);
    expect(files[0]!.n).toBe(EXPECTED_TABLES.length);
    expect(applied[0]!.n).toBe(MIGRATION_COUNT);
  });

  it('names the folder when migrations cannot be read', async () => {
    database = await open({ migrate: false });
    await expect(migrateDatabase(database, { migrationsFolder: '/nonexistent/migrations' })).rejects.toThrow(
      /database migration from \/nonexistent\/migrations failed/,
    );
  });
});

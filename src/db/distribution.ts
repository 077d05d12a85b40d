/**
 * How each table would be placed on Citus (distributed Postgres), the engine for deployments that
 * outgrow one primary (docs/scaling.md). `npm run cli -- distribute` (src/db/citus-distribute.ts)
 * places the tables on a Citus coordinator as written here; test/db/distribution.test.ts checks the
 * catalog against it (every table placed; each primary key and unique constraint of a distributed
 * table includes its distribution column; no foreign key between a distributed and a local table).
 */

/** Tables sharded by a column; tables with the same column type are colocated. */
export const DISTRIBUTED_TABLES: Readonly<Record<string, string>> = {
  // Resource history: one scope's versions live together, so "a scope at time T" is one shard.
  gpu_clusters_versions: 'scope_key',
  gpu_cluster_servers_versions: 'scope_key',
  instances_versions: 'scope_key',
  instance_ports_versions: 'scope_key',
  keypairs_versions: 'scope_key',
  storage_ssh_keys_versions: 'scope_key',
  image_tags_versions: 'scope_key',
  free_features_versions: 'scope_key',
  gpu_flavors_versions: 'scope_key',
  k8s_cluster_prices_versions: 'scope_key',
  resource_presence: 'scope_key',
  resource_presence_scopes: 'scope_key',
  cost_daily: 'scope_key',
  current_instances: 'scope_key',
  // Rows of one snapshot: staged until folded (kept when not folded), and the snapshot's cost rollups.
  gpu_clusters_staged: 'snapshot_id',
  gpu_cluster_servers_staged: 'snapshot_id',
  instances_staged: 'snapshot_id',
  instance_ports_staged: 'snapshot_id',
  keypairs_staged: 'snapshot_id',
  storage_ssh_keys_staged: 'snapshot_id',
  image_tags_staged: 'snapshot_id',
  free_features_staged: 'snapshot_id',
  gpu_flavors_staged: 'snapshot_id',
  k8s_cluster_prices_staged: 'snapshot_id',
  gpu_clusters_kept: 'snapshot_id',
  gpu_cluster_servers_kept: 'snapshot_id',
  instances_kept: 'snapshot_id',
  instance_ports_kept: 'snapshot_id',
  keypairs_kept: 'snapshot_id',
  storage_ssh_keys_kept: 'snapshot_id',
  image_tags_kept: 'snapshot_id',
  free_features_kept: 'snapshot_id',
  gpu_flavors_kept: 'snapshot_id',
  k8s_cluster_prices_kept: 'snapshot_id',
  unread_instance_ports: 'snapshot_id',
  cost_rollups: 'snapshot_id',
};

/**
 * Tables copied to every node: small, read in joins with distributed ones (a join with a
 * reference table never leaves the shard), and targets of the distributed tables' foreign keys.
 */
export const REFERENCE_TABLES: readonly string[] = [
  'snapshots',
  'collection_runs',
  'cost_daily_sealed_days',
  'cost_daily_closed_days',
  'cost_daily_coverage',
  'cost_daily_totals',
  'cost_daily_totals_days',
  'anomaly_explanations',
  'current_instances_stamp',
  'cost_partition_keys',
];

/** Tables on the coordinator only: the web app's and the actions' own state, small and transactional. */
export const LOCAL_TABLES: readonly string[] = [
  'audit_log',
  'auth_sessions',
  'scheduled_stops',
  'schedule_claims',
  'budgets',
  'saved_views',
  'notify_messages',
  'notify_deliveries',
  'demo_company',
];

export type Placement = 'distributed' | 'reference' | 'local';

export function placementOf(table: string): Placement | null {
  if (table in DISTRIBUTED_TABLES) return 'distributed';
  if (REFERENCE_TABLES.includes(table)) return 'reference';
  if (LOCAL_TABLES.includes(table)) return 'local';
  return null;
}

/**
 * cloudtally's database schema (drizzle pg-core; the same schema runs on Postgres and PGlite).
 *
 * Shape: one `collection_runs` row per run; one immutable `snapshots` row per (kind, scope) and run;
 * one table per resource kind whose rows belong to a snapshot. Tags live on the resource row as a
 * flat jsonb object (GIN-indexed); pre-aggregated cost per snapshot and group lives in
 * `cost_rollups`, and per day in `cost_daily` (which survives retention). See DATA-MODEL.md.
 *
 * Conventions: TypeScript keys are camelCase, SQL names snake_case. Money is `numeric` read and
 * written as strings (never JS floats). Every timestamp is `timestamp with time zone`.
 *
 * This file is loaded by drizzle-kit on its own: keep it free of local imports.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  date,
  index,
  integer,
  json,
  jsonb,
  numeric,
  pgTable,
  pgView,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  type AnyPgColumn,
} from 'drizzle-orm/pg-core';

/** int64 kept exact as a decimal string (a JS number would lose precision above 2^53). */
const int64String = customType<{ data: string; driverData: string | number }>({
  dataType: () => 'bigint',
  fromDriver: (value) => String(value),
  toDriver: (value) => value,
});

const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
const money = (name: string) => numeric(name, { mode: 'string' });

// ---------------------------------------------------------------------------------------------
// Vocabulary shared with collectors and reports.

export const RUN_TRIGGERS = ['schedule', 'manual', 'startup'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

export const RUN_STATUSES = ['running', 'succeeded', 'partial', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** What one snapshot holds. A `cluster` snapshot holds rows of both gpu_clusters and gpu_cluster_servers. */
export const SNAPSHOT_KINDS = [
  'cluster',
  'instance',
  'port',
  'keypair',
  'flavor',
  'k8s_price',
  'storage_key',
  'image_tag',
  'free_feature',
] as const;
export type SnapshotKind = (typeof SNAPSHOT_KINDS)[number];

/** Kinds tracked in resource_presence: the snapshot kinds plus servers inside cluster snapshots. */
export const PRESENCE_KINDS = [...SNAPSHOT_KINDS, 'cluster_server'] as const;
export type PresenceKind = (typeof PRESENCE_KINDS)[number];

/** Group of a resource that lacks the tag key a report groups by. Stored explicitly in rollups. */
export const UNTAGGED = '(untagged)';

/** Scope key of a project + region pair, e.g. `p12-r3`. Global kinds use `global`. */
export function scopeKeyOf(projectId: number, regionId: number): string {
  return `p${projectId}-r${regionId}`;
}
export const GLOBAL_SCOPE = 'global';

/** One error of a collection run, as stored in collection_runs.errors. */
export interface RunError {
  collector: string;
  scope: string;
  endpoint: string;
  status: number | null;
  message: string;
  /** What kind of failure, from the typed error (absent in runs recorded before it existed). */
  cause?: FailureCause;
  /**
   * `warning`: the unit's snapshot completed and accounts for everything, but some items could
   * not be read (e.g. ports of a few instances, shown with their last known values). Warnings do
   * not make a run partial. Absent: an error.
   */
  severity?: 'warning';
}

/** The kind of a failure, for people (banner, readiness) and for metric labels (a bounded set). */
export const FAILURE_CAUSES = ['auth', 'network', 'timeout', 'rate_limited', 'server', 'not_found', 'client', 'response', 'stopped', 'dependency', 'internal'] as const;
export type FailureCause = (typeof FAILURE_CAUSES)[number];

/** A tag as the API returned it (output form); tags_original holds a list of these. */
export interface OriginalTag {
  key: string;
  value: string;
  read_only: boolean;
}

const inList = (values: readonly string[]) => sql.raw(values.map((v) => `'${v}'`).join(', '));

// ---------------------------------------------------------------------------------------------
// Runs and snapshots.

export const collectionRuns = pgTable(
  'collection_runs',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    trigger: text('trigger').$type<RunTrigger>().notNull(),
    /** Collector names this run was asked to run. */
    collectors: text('collectors').array().notNull(),
    startedAt: timestamptz('started_at').notNull().defaultNow(),
    finishedAt: timestamptz('finished_at'),
    /** Touched periodically by the runner; a running row whose heartbeat is stale is a dead run. */
    heartbeatAt: timestamptz('heartbeat_at').notNull().defaultNow(),
    status: text('status').$type<RunStatus>().notNull().default('running'),
    /** Rows written per kind, e.g. {"instance": 1200, "port": 2400}. */
    counts: jsonb('counts').$type<Record<string, number>>().notNull().default({}),
    errors: jsonb('errors').$type<RunError[]>().notNull().default([]),
    /** Which process ran it (host:pid or similar), for runs left behind by a dead replica. */
    runnerId: text('runner_id').notNull(),
  },
  (t) => [
    check('collection_runs_trigger_check', sql`${t.trigger} in (${inList(RUN_TRIGGERS)})`),
    check('collection_runs_status_check', sql`${t.status} in (${inList(RUN_STATUSES)})`),
    index('collection_runs_started_at_idx').on(t.startedAt.desc().nullsFirst()),
    index('collection_runs_running_idx').on(t.heartbeatAt).where(sql`${t.status} = 'running'`),
  ],
);

export const snapshots = pgTable(
  'snapshots',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    /** Null once the run record has been pruned; a snapshot never depends on its run surviving. */
    runId: integer('run_id').references(() => collectionRuns.id, { onDelete: 'set null' }),
    kind: text('kind').$type<SnapshotKind>().notNull(),
    /** `p<project>-r<region>` (see scopeKeyOf), `global`, or another collector-chosen key. */
    scopeKey: text('scope_key').notNull(),
    projectId: integer('project_id'),
    regionId: integer('region_id'),
    takenAt: timestamptz('taken_at').notNull().defaultNow(),
    /** True when the snapshot holds everything of its scope; only complete snapshots mark resources gone. */
    complete: boolean('complete').notNull().default(false),
    rowCount: integer('row_count').notNull().default(0),
    /**
     * True once the snapshot's rows were folded into the <name>_versions tables (at finalising);
     * false while they are staged rows (being written, or inserted directly as whole rows).
     */
    versioned: boolean('versioned').notNull().default(false),
  },
  (t) => [
    check('snapshots_kind_check', sql`${t.kind} in (${inList(SNAPSHOT_KINDS)})`),
    // "Latest good snapshot per (kind, scope)": DISTINCT ON (kind, scope_key) ... ORDER BY taken_at DESC.
    index('snapshots_latest_complete_idx')
      .on(t.kind, t.scopeKey, t.takenAt.desc().nullsFirst())
      .where(sql`${t.complete}`),
    index('snapshots_taken_at_idx').on(t.takenAt),
    // One snapshot per (kind, scope) in a run; also serves "snapshots of a run".
    uniqueIndex('snapshots_run_kind_scope_uq').on(t.runId, t.kind, t.scopeKey),
  ],
);

// ---------------------------------------------------------------------------------------------
// Resource rows (stored as versions, see DATA-MODEL.md "History as versions").
//
// Each resource kind has three tables and one view:
//   <name>_staged   rows of a snapshot being written (same shape as the old per-snapshot table:
//                   the primary key starts with snapshot_id). UNLOGGED (migration 0036): a write
//                   buffer emptied at finalising, so an unchanged collection writes no WAL for its
//                   rows. The TypeScript objects below (`instances`, ...) are these: collectors write here.
//   <name>_kept     the rows of complete snapshots that were not folded (backdated), moved here
//                   from staging at finalising: logged, so they survive a crash and reach replicas.
//   <name>_versions each distinct content of a resource in its scope once, with the range of
//                   taken_at in which it was current: [valid_from, valid_to), valid_to NULL = still
//                   current. A snapshot's finalising transaction folds its staged rows into them.
//   <name>          (view, hand-written in the migration) the rows of every snapshot, with a
//                   snapshot_id column, exactly as the old tables held them: for a folded snapshot
//                   S the versions of S's scope with valid_from <= S.taken_at < valid_to, plus the
//                   kept rows of snapshots not folded. Every report query keeps working unchanged.

/** Scope of a version (snapshots.scope_key of the snapshots it belongs to). */
const versionKey = () => ({ scopeKey: text('scope_key').notNull() });

/** The range of taken_at in which the version was current. */
const versionRange = () => ({
  validFrom: timestamptz('valid_from').notNull(),
  validTo: timestamptz('valid_to'),
});

/**
 * "Versions of a scope current at T": scope_key = S and coalesce(valid_to, infinity) > T (and
 * valid_from <= T, checked on the rows found): for recent snapshots an index range over about
 * the current versions only. The partial index on valid_to serves retention; (scope_key,
 * valid_from) with the first finds the versions that began or ended between two times.
 */
const versionIndexes = (table: string, t: { scopeKey: AnyPgColumn; validFrom: AnyPgColumn; validTo: AnyPgColumn }) => [
  index(`${table}_versions_current_idx`).on(t.scopeKey, sql`coalesce(${t.validTo}, 'infinity'::timestamptz)`),
  index(`${table}_versions_ended_idx`).on(t.validTo).where(sql`${t.validTo} is not null`),
  // "What began between two times" (the changes report; with the current index, what ended too).
  // On valid_from as UTC wall time, not valid_from itself: the views' "valid_from <= taken_at"
  // must not be able to choose it (for a recent time it holds for every version of the scope).
  index(`${table}_versions_started_idx`).on(t.scopeKey, sql`(${t.validFrom} at time zone 'UTC')`),
];

const snapshotId = () =>
  integer('snapshot_id')
    .notNull()
    .references(() => snapshots.id, { onDelete: 'cascade' });

/**
 * snapshot_id of a staging table: no foreign key, because its check ran once per row of every
 * COPY (a third of the staging time of 100,000 instances). The rows still go with their snapshot:
 * a statement trigger on snapshots deletes the staged rows of the snapshots a DELETE removed
 * (migration 0015), and retention removes rows whose snapshot is gone (a writer that kept writing
 * after its snapshot was deleted).
 */
const stagedSnapshotId = () => integer('snapshot_id').notNull();

/** Tags: normalised flat object, the read-only keys (normalised), and the list as received. */
const tagColumns = () => ({
  tags: jsonb('tags').$type<Record<string, string>>().notNull().default({}),
  tagsReadOnly: text('tags_read_only').array().notNull().default(sql`'{}'::text[]`),
  tagsOriginal: jsonb('tags_original').$type<OriginalTag[]>().notNull().default([]),
});

/**
 * The API record as received, with secrets (password, user_data, private_key) already removed.
 * `json`, not `jsonb`: nothing queries inside it, and Postgres stores json as validated text,
 * where jsonb is converted to its binary form on every insert: json is about twice as fast to
 * write and smaller (npm run bench collect measures the collection).
 */
const rawColumn = () => ({ raw: json('raw').$type<Record<string, unknown>>().notNull() });

const scopeColumns = () => ({
  projectId: integer('project_id'),
  regionId: integer('region_id'),
});

const gpuClustersColumns = () => ({
  clusterId: text('cluster_id').notNull(),
  clusterName: text('cluster_name'),
  clusterStatus: text('cluster_status'),
  taskStatus: text('task_status'),
  /** Flavor name (the API's `flavor`). */
  flavorName: text('flavor_name'),
  imageId: text('image_id'),
  imageName: text('image_name'),
  ...scopeColumns(),
  region: text('region'),
  createdAt: timestamptz('created_at'),
  sshKeyName: text('ssh_key_name'),
  serverCount: integer('server_count').notNull().default(0),
  ...tagColumns(),
  ...rawColumn(),
});

export const gpuClusters = pgTable('gpu_clusters_staged', { snapshotId: stagedSnapshotId(), ...gpuClustersColumns() }, (t) => [
  primaryKey({ name: 'gpu_clusters_pk', columns: [t.snapshotId, t.clusterId] }),
]);

/** Rows of gpu_clusters snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const gpuClustersKept = pgTable('gpu_clusters_kept', { snapshotId: stagedSnapshotId(), ...gpuClustersColumns() }, (t) => [
  primaryKey({ name: 'gpu_clusters_kept_pk', columns: [t.snapshotId, t.clusterId] }),
]);

export const gpuClustersVersions = pgTable('gpu_clusters_versions', { ...versionKey(), ...gpuClustersColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'gpu_clusters_versions_pk', columns: [t.scopeKey, t.clusterId, t.validFrom] }),
  ...versionIndexes('gpu_clusters', t),
  index('gpu_clusters_versions_tags_idx').using('gin', t.tags.op('jsonb_path_ops')),
]);

const gpuClusterServersColumns = () => ({
  clusterId: text('cluster_id').notNull(),
  serverId: text('server_id').notNull(),
  name: text('name'),
  status: text('status'),
  vmState: text('vm_state'),
  flavorId: text('flavor_id'),
  flavorName: text('flavor_name'),
  resourceClass: text('resource_class'),
  ...scopeColumns(),
  region: text('region'),
  createdAt: timestamptz('created_at'),
  sshKeyName: text('ssh_key_name'),
  ...tagColumns(),
  ...rawColumn(),
});

export const gpuClusterServers = pgTable('gpu_cluster_servers_staged', { snapshotId: stagedSnapshotId(), ...gpuClusterServersColumns() }, (t) => [
  primaryKey({ name: 'gpu_cluster_servers_pk', columns: [t.snapshotId, t.clusterId, t.serverId] }),
]);

/** Rows of gpu_cluster_servers snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const gpuClusterServersKept = pgTable('gpu_cluster_servers_kept', { snapshotId: stagedSnapshotId(), ...gpuClusterServersColumns() }, (t) => [
  primaryKey({ name: 'gpu_cluster_servers_kept_pk', columns: [t.snapshotId, t.clusterId, t.serverId] }),
]);

export const gpuClusterServersVersions = pgTable('gpu_cluster_servers_versions', { ...versionKey(), ...gpuClusterServersColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'gpu_cluster_servers_versions_pk', columns: [t.scopeKey, t.clusterId, t.serverId, t.validFrom] }),
  ...versionIndexes('gpu_cluster_servers', t),
  index('gpu_cluster_servers_versions_tags_idx').using('gin', t.tags.op('jsonb_path_ops')),
]);

const instancesColumns = () => ({
  instanceId: text('instance_id').notNull(),
  name: text('name'),
  description: text('description'),
  status: text('status'),
  vmState: text('vm_state'),
  taskState: text('task_state'),
  flavorId: text('flavor_id'),
  flavorName: text('flavor_name'),
  vcpus: integer('vcpus'),
  /** RAM as the flavor reports it (the API gives no unit; MiB in practice). */
  ram: integer('ram'),
  ...scopeColumns(),
  region: text('region'),
  createdAt: timestamptz('created_at'),
  sshKeyName: text('ssh_key_name'),
  /** Configured security groups through which the instance was listed (one row per instance). */
  securityGroupIds: text('security_group_ids').array().notNull().default(sql`'{}'::text[]`),
  /** Names from the record's own security_groups list. */
  securityGroupNames: text('security_group_names').array().notNull().default(sql`'{}'::text[]`),
  volumeCount: integer('volume_count'),
  ...tagColumns(),
  ...rawColumn(),
});

export const instances = pgTable('instances_staged', { snapshotId: stagedSnapshotId(), ...instancesColumns() }, (t) => [
  primaryKey({ name: 'instances_pk', columns: [t.snapshotId, t.instanceId] }),
]);

/** Rows of instances snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const instancesKept = pgTable('instances_kept', { snapshotId: stagedSnapshotId(), ...instancesColumns() }, (t) => [
  primaryKey({ name: 'instances_kept_pk', columns: [t.snapshotId, t.instanceId] }),
]);

export const instancesVersions = pgTable('instances_versions', { ...versionKey(), ...instancesColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'instances_versions_pk', columns: [t.scopeKey, t.instanceId, t.validFrom] }),
  ...versionIndexes('instances', t),
  index('instances_versions_tags_idx').using('gin', t.tags.op('jsonb_path_ops')),
]);

const instancePortsColumns = () => ({
  instanceId: text('instance_id').notNull(),
  portId: text('port_id').notNull(),
  name: text('name'),
  /** [{id, name}] as received. */
  securityGroups: jsonb('security_groups').$type<Array<{ id: string | null; name: string | null }>>(),
  ...scopeColumns(),
  ...rawColumn(),
  /**
   * NULL when the ports were read for this snapshot. Set on the rows of an instance whose ports
   * could not be read this time (see unread_instance_ports): its last known ports, carried over
   * from the previous port snapshot, and the time they were read.
   */
  readAt: timestamptz('read_at'),
});

export const instancePorts = pgTable('instance_ports_staged', { snapshotId: stagedSnapshotId(), ...instancePortsColumns() }, (t) => [
  primaryKey({ name: 'instance_ports_pk', columns: [t.snapshotId, t.instanceId, t.portId] }),
]);

/** Rows of instance_ports snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const instancePortsKept = pgTable('instance_ports_kept', { snapshotId: stagedSnapshotId(), ...instancePortsColumns() }, (t) => [
  primaryKey({ name: 'instance_ports_kept_pk', columns: [t.snapshotId, t.instanceId, t.portId] }),
]);

export const instancePortsVersions = pgTable('instance_ports_versions', { ...versionKey(), ...instancePortsColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'instance_ports_versions_pk', columns: [t.scopeKey, t.instanceId, t.portId, t.validFrom] }),
  ...versionIndexes('instance_ports', t),
]);

/**
 * Instances of a port snapshot's instance list whose ports could not be read (the request failed
 * after the client's retries). The snapshot is complete for every other instance; these carry
 * their last known ports (instance_ports.read_at set) and none of their ports is marked gone.
 */
export const unreadInstancePorts = pgTable(
  'unread_instance_ports',
  {
    snapshotId: snapshotId(),
    instanceId: text('instance_id').notNull(),
    /** HTTP status of the failed request; NULL when no answer came (network error, timeout). */
    status: integer('status'),
    /** The client's one-line error (never holds the API key). */
    error: text('error').notNull(),
  },
  (t) => [primaryKey({ name: 'unread_instance_ports_pk', columns: [t.snapshotId, t.instanceId] })],
);

const keypairsColumns = () => ({
  /** UUID per the spec; legacy responses put the key's name here (sshkey_id). */
  keypairId: text('keypair_id').notNull(),
  name: text('name'),
  fingerprint: text('fingerprint'),
  state: text('state'),
  sharedInProject: boolean('shared_in_project'),
  ...scopeColumns(),
  createdAt: timestamptz('created_at'),
  ...rawColumn(),
});

export const keypairs = pgTable('keypairs_staged', { snapshotId: stagedSnapshotId(), ...keypairsColumns() }, (t) => [
  primaryKey({ name: 'keypairs_pk', columns: [t.snapshotId, t.keypairId] }),
]);

/** Rows of keypairs snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const keypairsKept = pgTable('keypairs_kept', { snapshotId: stagedSnapshotId(), ...keypairsColumns() }, (t) => [
  primaryKey({ name: 'keypairs_kept_pk', columns: [t.snapshotId, t.keypairId] }),
]);

export const keypairsVersions = pgTable('keypairs_versions', { ...versionKey(), ...keypairsColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'keypairs_versions_pk', columns: [t.scopeKey, t.keypairId, t.validFrom] }),
  ...versionIndexes('keypairs', t),
]);

const storageSshKeysColumns = () => ({
  keyId: int64String('key_id').notNull(),
  name: text('name'),
  createdAt: timestamptz('created_at'),
  ...rawColumn(),
});

export const storageSshKeys = pgTable('storage_ssh_keys_staged', { snapshotId: stagedSnapshotId(), ...storageSshKeysColumns() }, (t) => [
  primaryKey({ name: 'storage_ssh_keys_pk', columns: [t.snapshotId, t.keyId] }),
]);

/** Rows of storage_ssh_keys snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const storageSshKeysKept = pgTable('storage_ssh_keys_kept', { snapshotId: stagedSnapshotId(), ...storageSshKeysColumns() }, (t) => [
  primaryKey({ name: 'storage_ssh_keys_kept_pk', columns: [t.snapshotId, t.keyId] }),
]);

export const storageSshKeysVersions = pgTable('storage_ssh_keys_versions', { ...versionKey(), ...storageSshKeysColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'storage_ssh_keys_versions_pk', columns: [t.scopeKey, t.keyId, t.validFrom] }),
  ...versionIndexes('storage_ssh_keys', t),
]);

const imageTagsColumns = () => ({
  imageId: text('image_id').notNull(),
  /** The key as received (image tags are a resource of their own, not normalised). */
  key: text('key').notNull(),
  value: text('value'),
  readOnly: boolean('read_only').notNull().default(false),
  ...scopeColumns(),
  ...rawColumn(),
});

export const imageTags = pgTable('image_tags_staged', { snapshotId: stagedSnapshotId(), ...imageTagsColumns() }, (t) => [
  primaryKey({ name: 'image_tags_pk', columns: [t.snapshotId, t.imageId, t.key] }),
]);

/** Rows of image_tags snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const imageTagsKept = pgTable('image_tags_kept', { snapshotId: stagedSnapshotId(), ...imageTagsColumns() }, (t) => [
  primaryKey({ name: 'image_tags_kept_pk', columns: [t.snapshotId, t.imageId, t.key] }),
]);

export const imageTagsVersions = pgTable('image_tags_versions', { ...versionKey(), ...imageTagsColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'image_tags_versions_pk', columns: [t.scopeKey, t.imageId, t.key, t.validFrom] }),
  ...versionIndexes('image_tags', t),
]);

const freeFeaturesColumns = () => ({
  /** The internal feature activation ID (the path parameter of the endpoint). */
  activationId: int64String('activation_id').notNull(),
  clientId: int64String('client_id'),
  featureId: int64String('feature_id'),
  featureName: text('feature_name'),
  featureService: text('feature_service'),
  isFree: boolean('is_free'),
  /** The API's create_date. */
  createdAt: timestamptz('created_at'),
  ...rawColumn(),
});

export const freeFeatures = pgTable('free_features_staged', { snapshotId: stagedSnapshotId(), ...freeFeaturesColumns() }, (t) => [
  primaryKey({ name: 'free_features_pk', columns: [t.snapshotId, t.activationId] }),
]);

/** Rows of free_features snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const freeFeaturesKept = pgTable('free_features_kept', { snapshotId: stagedSnapshotId(), ...freeFeaturesColumns() }, (t) => [
  primaryKey({ name: 'free_features_kept_pk', columns: [t.snapshotId, t.activationId] }),
]);

export const freeFeaturesVersions = pgTable('free_features_versions', { ...versionKey(), ...freeFeaturesColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'free_features_versions_pk', columns: [t.scopeKey, t.activationId, t.validFrom] }),
  ...versionIndexes('free_features', t),
]);

const gpuFlavorsColumns = () => ({
  flavorId: text('flavor_id').notNull(),
  flavorName: text('flavor_name'),
  disabled: boolean('disabled').notNull().default(false),
  /** Available clusters of this configuration (include_capacity). */
  capacity: integer('capacity'),
  currencyCode: text('currency_code'),
  pricePerHour: money('price_per_hour'),
  pricePerMonth: money('price_per_month'),
  priceStatus: text('price_status'),
  resourceClass: text('resource_class'),
  /** hardware_description: {cpu, disk, ephemeral, gpu, network, ram}. */
  hardware: jsonb('hardware').$type<Record<string, string | null>>(),
  ...scopeColumns(),
  ...rawColumn(),
});

export const gpuFlavors = pgTable('gpu_flavors_staged', { snapshotId: stagedSnapshotId(), ...gpuFlavorsColumns() }, (t) => [
  primaryKey({ name: 'gpu_flavors_pk', columns: [t.snapshotId, t.flavorId] }),
]);

/** Rows of gpu_flavors snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const gpuFlavorsKept = pgTable('gpu_flavors_kept', { snapshotId: stagedSnapshotId(), ...gpuFlavorsColumns() }, (t) => [
  primaryKey({ name: 'gpu_flavors_kept_pk', columns: [t.snapshotId, t.flavorId] }),
]);

export const gpuFlavorsVersions = pgTable('gpu_flavors_versions', { ...versionKey(), ...gpuFlavorsColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'gpu_flavors_versions_pk', columns: [t.scopeKey, t.flavorId, t.validFrom] }),
  ...versionIndexes('gpu_flavors', t),
]);

/** One price item of the pricing endpoint, kept as received (numbers as decimal strings). */
export interface PriceItem {
  currency_code: string | null;
  discount_percent: string | null;
  price_per_hour: string | null;
  price_per_month: string | null;
  price_status: string | null;
  price_without_discount_per_month: string | null;
  tax_percent: string | null;
}

const k8sClusterPricesColumns = () => ({
  clusterName: text('cluster_name').notNull(),
  /** From total_price. */
  currencyCode: text('currency_code'),
  pricePerHour: money('price_per_hour'),
  pricePerMonth: money('price_per_month'),
  priceWithoutDiscountPerMonth: money('price_without_discount_per_month'),
  discountPercent: numeric('discount_percent', { mode: 'string' }),
  taxPercent: numeric('tax_percent', { mode: 'string' }),
  priceStatus: text('price_status'),
  /** {instances: PriceItem[], publicips: PriceItem[], volumes: PriceItem[]}. */
  breakdown: jsonb('breakdown').$type<{ instances: PriceItem[]; publicips: PriceItem[]; volumes: PriceItem[] }>(),
  ...scopeColumns(),
  ...rawColumn(),
  /** The API gives Kubernetes clusters no tags: these are the configuration's (k8s_clusters), stored like API tags. */
  ...tagColumns(),
});

export const k8sClusterPrices = pgTable('k8s_cluster_prices_staged', { snapshotId: stagedSnapshotId(), ...k8sClusterPricesColumns() }, (t) => [
  primaryKey({ name: 'k8s_cluster_prices_pk', columns: [t.snapshotId, t.clusterName] }),
]);

/** Rows of k8s_cluster_prices snapshots that were not folded (see `kept` in db/versions.ts): logged, read by the view. */
export const k8sClusterPricesKept = pgTable('k8s_cluster_prices_kept', { snapshotId: stagedSnapshotId(), ...k8sClusterPricesColumns() }, (t) => [
  primaryKey({ name: 'k8s_cluster_prices_kept_pk', columns: [t.snapshotId, t.clusterName] }),
]);

export const k8sClusterPricesVersions = pgTable('k8s_cluster_prices_versions', { ...versionKey(), ...k8sClusterPricesColumns(), ...versionRange() }, (t) => [
  primaryKey({ name: 'k8s_cluster_prices_versions_pk', columns: [t.scopeKey, t.clusterName, t.validFrom] }),
  ...versionIndexes('k8s_cluster_prices', t),
  index('k8s_cluster_prices_versions_tags_idx').using('gin', t.tags.op('jsonb_path_ops')),
]);

// ---------------------------------------------------------------------------------------------
// First / last seen per resource. Not tied to a snapshot (no FK): it outlives retention.
// Stored with fillfactor 60 (migration 0005, custom SQL: drizzle has no table storage options),
// so the hourly last-seen updates are HOT updates.

export const resourcePresence = pgTable(
  'resource_presence',
  {
    kind: text('kind').$type<PresenceKind>().notNull(),
    scopeKey: text('scope_key').notNull(),
    resourceId: text('resource_id').notNull(),
    /** Last name seen, so a gone resource can still be named after its snapshots are pruned. */
    name: text('name'),
    firstSeenAt: timestamptz('first_seen_at').notNull(),
    /**
     * NULL: seen in the latest snapshot of its scope (resource_presence_scopes.seen_at), so an
     * unchanged collection rewrites no row. Read the view resource_presence_seen, which resolves it.
     */
    lastSeenAt: timestamptz('last_seen_at'),
    /** Set when a complete snapshot of the scope lacks the resource; cleared if it comes back. */
    goneAt: timestamptz('gone_at'),
    firstSnapshotId: integer('first_snapshot_id'),
    /** NULL with last_seen_at NULL: resource_presence_scopes.snapshot_id. */
    lastSnapshotId: integer('last_snapshot_id'),
  },
  (t) => [
    primaryKey({ name: 'resource_presence_pk', columns: [t.kind, t.scopeKey, t.resourceId] }),
    index('resource_presence_gone_idx').on(t.kind, t.goneAt).where(sql`${t.goneAt} is not null`),
  ],
);

/** Per presence kind and scope, the newest snapshot whose presence was written: the last seen of its resources with last_seen_at NULL. */
export const resourcePresenceScopes = pgTable(
  'resource_presence_scopes',
  {
    kind: text('kind').$type<PresenceKind>().notNull(),
    scopeKey: text('scope_key').notNull(),
    seenAt: timestamptz('seen_at').notNull(),
    snapshotId: integer('snapshot_id').notNull(),
  },
  (t) => [primaryKey({ name: 'resource_presence_scopes_pk', columns: [t.kind, t.scopeKey] })],
);

// ---------------------------------------------------------------------------------------------
// Pre-aggregated cost.

/**
 * Cost per snapshot and group, written with the snapshot. dimension: `tag:<normalised key>`,
 * `project`, `region`, `kind`, `flavor`. Resources lacking the tag key are in group `(untagged)`.
 * currency null = resources with no known price (counted in unpriced_count, never priced at zero).
 */
export const costRollups = pgTable(
  'cost_rollups',
  {
    snapshotId: snapshotId(),
    takenAt: timestamptz('taken_at').notNull(),
    kind: text('kind').$type<SnapshotKind>().notNull(),
    scopeKey: text('scope_key').notNull(),
    projectId: integer('project_id'),
    regionId: integer('region_id'),
    dimension: text('dimension').notNull(),
    groupValue: text('group_value').notNull(),
    currency: text('currency'),
    pricePerHour: money('price_per_hour').notNull().default('0'),
    pricePerMonth: money('price_per_month').notNull().default('0'),
    resourceCount: integer('resource_count').notNull().default(0),
    unpricedCount: integer('unpriced_count').notNull().default(0),
    /**
     * GPUs running (GPUs per unit from the flavor's hardware description x running units), of the
     * resources whose GPU count can be read (db/gpu-count.ts). NULL: written before GPUs were counted.
     */
    gpuCount: integer('gpu_count'),
    /** Run-rate of the resources with at least one GPU counted in gpu_count (for the cost per GPU-hour). */
    gpuPricePerHour: money('gpu_price_per_hour'),
    /** Running resources whose GPU count cannot be read: their GPUs are unknown, never 0. */
    gpuUnknownCount: integer('gpu_unknown_count'),
  },
  (t) => [
    unique('cost_rollups_group_uq')
      .on(t.snapshotId, t.dimension, t.groupValue, t.currency)
      .nullsNotDistinct(),
    index('cost_rollups_dimension_time_idx').on(t.dimension, t.takenAt),
  ],
);

/**
 * The tag keys whose values get cost partitions (costing/partitions.ts): the keys of the
 * configured access scopes, recorded at start-up. `complete_from`: the start of the first day
 * from which every priced snapshot has the key's partitions (days sealed before the key was
 * recorded keep only company-wide figures: their detail is gone). NULL until the history kept
 * when the key was recorded has been given its partitions.
 */
export const costPartitionKeys = pgTable('cost_partition_keys', {
  key: text('key').primaryKey(),
  recordedAt: timestamptz('recorded_at').notNull().defaultNow(),
  completeFrom: timestamptz('complete_from'),
});

/**
 * Accumulated cost per UTC day, scope, kind and group. Computed from snapshots before they are
 * pruned, so long-range reports keep working after retention.
 */
export const costDaily = pgTable(
  'cost_daily',
  {
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').$type<SnapshotKind>().notNull(),
    scopeKey: text('scope_key').notNull(),
    projectId: integer('project_id'),
    regionId: integer('region_id'),
    dimension: text('dimension').notNull(),
    groupValue: text('group_value').notNull(),
    currency: text('currency'),
    /**
     * Price per hour integrated over the covered seconds of the day: the cost x 3600, exact. Every
     * amount here is kept in seconds so that readers sum before they divide by 3600, once.
     */
    priceSeconds: money('price_seconds').notNull().default('0'),
    /** Sum over resources of the seconds each was seen (priced or not). */
    resourceSeconds: numeric('resource_seconds', { mode: 'string' }).notNull().default('0'),
    unpricedResourceSeconds: numeric('unpriced_resource_seconds', { mode: 'string' }).notNull().default('0'),
    maxResourceCount: integer('max_resource_count').notNull().default(0),
    /** GPU-seconds (cost_rollups.gpu_count over the day); NULL when a rollup of the day predates GPU counting. */
    gpuSeconds: numeric('gpu_seconds', { mode: 'string' }),
    /** Price-seconds of the resources whose GPUs are counted in gpu_seconds. */
    gpuPriceSeconds: money('gpu_price_seconds'),
    /** Seconds of running resources whose GPU count cannot be read. */
    gpuUnknownResourceSeconds: numeric('gpu_unknown_resource_seconds', { mode: 'string' }),
    computedAt: timestamptz('computed_at').notNull().defaultNow(),
  },
  (t) => [
    unique('cost_daily_group_uq')
      .on(t.day, t.dimension, t.groupValue, t.currency, t.kind, t.scopeKey)
      .nullsNotDistinct(),
    index('cost_daily_dimension_day_idx').on(t.dimension, t.day),
  ],
);

// ---------------------------------------------------------------------------------------------
// Audit log of actions (append-only: a trigger in migrations/ rejects UPDATE and DELETE).

export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamptz('at').notNull().defaultNow(),
    actor: text('actor').notNull(),
    role: text('role').notNull(),
    action: text('action').notNull(),
    instanceId: text('instance_id'),
    projectId: integer('project_id'),
    regionId: integer('region_id'),
    reason: text('reason'),
    dryRun: boolean('dry_run').notNull().default(false),
    result: text('result').notNull(),
    error: text('error'),
    taskIds: jsonb('task_ids').$type<string[]>().notNull().default([]),
  },
  (t) => [index('audit_log_at_idx').on(t.at.desc().nullsFirst()), index('audit_log_instance_idx').on(t.instanceId)],
);

// ---------------------------------------------------------------------------------------------
// Actions: web sessions, stops scheduled after a grace period, and the status of
// instances stopped through cloudtally since their latest snapshot.

/**
 * Login sessions. The cookie carries a random token; only its SHA-256 is stored, so a copy of this
 * table cannot be replayed as cookies. Logout deletes the row; expired rows are purged at login.
 */
export const authSessions = pgTable(
  'auth_sessions',
  {
    idHash: text('id_hash').primaryKey(),
    userName: text('user_name').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    expiresAt: timestamptz('expires_at').notNull(),
    /** 'password' (role and scope read from the file at each request) or 'oidc' (kept here, from the provider's claims). */
    method: text('method').notNull().default('password'),
    /** The role of an 'oidc' session; null for password sessions. */
    role: text('role'),
    /** The access scope of an 'oidc' session ({by, key, values}); null: everything, or a password session. */
    scope: jsonb('scope'),
  },
  (t) => [index('auth_sessions_expires_idx').on(t.expiresAt)],
);

export const SCHEDULED_STOP_STATUSES = ['pending', 'running', 'done', 'failed', 'cancelled'] as const;
export type ScheduledStopStatus = (typeof SCHEDULED_STOP_STATUSES)[number];

/** One webhook notice about a scheduled stop (the warning when marked, the outcome when run). */
export interface StopNotice {
  event: 'scheduled' | 'executed' | 'cancelled';
  at: string;
  status: 'sent' | 'failed' | 'not_configured';
  attempts: number;
  error: string | null;
}

/**
 * Instances marked to be stopped when `due_at` passes (the scheduler claims due rows by setting
 * `running`, so replicas never run one twice). At most one pending/running row per instance.
 */
export const scheduledStops = pgTable(
  'scheduled_stops',
  {
    id: integer('id').primaryKey().generatedAlwaysAsIdentity(),
    instanceId: text('instance_id').notNull(),
    projectId: integer('project_id').notNull(),
    regionId: integer('region_id').notNull(),
    instanceName: text('instance_name'),
    /** Value of the configured owner tag when marked (who is warned). */
    owner: text('owner'),
    reason: text('reason').notNull(),
    createdBy: text('created_by').notNull(),
    createdByRole: text('created_by_role').notNull(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    dueAt: timestamptz('due_at').notNull(),
    status: text('status').$type<ScheduledStopStatus>().notNull().default('pending'),
    claimedAt: timestamptz('claimed_at'),
    finishedAt: timestamptz('finished_at'),
    cancelledBy: text('cancelled_by'),
    cancelledAt: timestamptz('cancelled_at'),
    /** The stop's result (as in audit_log.result) and error, once run. */
    result: text('result'),
    error: text('error'),
    auditId: bigint('audit_id', { mode: 'number' }),
    notices: jsonb('notices').$type<StopNotice[]>().notNull().default([]),
  },
  (t) => [
    check('scheduled_stops_status_check', sql`${t.status} in (${inList(SCHEDULED_STOP_STATUSES)})`),
    uniqueIndex('scheduled_stops_one_open_uq')
      .on(t.instanceId, t.projectId, t.regionId)
      .where(sql`${t.status} in ('pending', 'running')`),
    index('scheduled_stops_due_idx').on(t.dueAt).where(sql`${t.status} = 'pending'`),
  ],
);

/**
 * Instances stopped through cloudtally after the latest complete snapshot that lists them: the
 * status reports show at once, without waiting for the next collection. A successful real stop in
 * the audit log counts until a complete instance or cluster snapshot of its scope, taken after
 * the stop, lists the instance again (that snapshot then tells the truth): until its presence
 * (resource_presence_seen, written as each snapshot completes) says it was seen after the stop.
 * Reports: `LEFT JOIN instance_status_overrides o USING (instance_id, project_id, region_id)` and
 * `coalesce(o.status, i.status)`.
 */
export const instanceStatusOverrides = pgView('instance_status_overrides', {
  instanceId: text('instance_id').notNull(),
  projectId: integer('project_id').notNull(),
  regionId: integer('region_id').notNull(),
  status: text('status').notNull(),
  changedAt: timestamptz('changed_at').notNull(),
  auditId: bigint('audit_id', { mode: 'number' }).notNull(),
}).as(sql`
  select distinct on (a.instance_id, a.project_id, a.region_id)
    a.instance_id, a.project_id, a.region_id, 'SHUTOFF'::text as status, a.at as changed_at, a.id as audit_id
  from audit_log a
  left join resource_presence_seen p
    on p.kind in ('instance', 'cluster_server') and p.scope_key = 'p' || a.project_id || '-r' || a.region_id
      and p.resource_id = a.instance_id and p.last_seen_at > a.at
  where a.action = 'stop' and not a.dry_run and a.result = 'stopped'
    and a.instance_id is not null and a.project_id is not null and a.region_id is not null
    and p.resource_id is null
  order by a.instance_id, a.project_id, a.region_id, a.at desc, a.id desc
`);

// ---------------------------------------------------------------------------------------------
// Scheduling and retention bookkeeping (written by src/collect).

/**
 * One row per scheduled slot that a replica claimed (node-cron's run coordinator): the first
 * replica to insert the slot's key runs it, the others skip it. Old claims are pruned.
 */
export const scheduleClaims = pgTable(
  'schedule_claims',
  {
    /** e.g. `collect@2025-03-04T05:00:00.000Z`. */
    key: text('key').primaryKey(),
    claimedBy: text('claimed_by').notNull(),
    claimedAt: timestamptz('claimed_at').notNull().defaultNow(),
    expiresAt: timestamptz('expires_at').notNull(),
  },
  (t) => [index('schedule_claims_expires_at_idx').on(t.expiresAt)],
);

/**
 * UTC days whose cost_daily rows were computed from their full snapshot detail just before
 * retention first deleted some of it. Pruning never recomputes these days again (from the
 * thinned detail that remains, the integration would come out lower).
 */
export const costDailySealedDays = pgTable('cost_daily_sealed_days', {
  day: date('day', { mode: 'string' }).primaryKey(),
  sealedAt: timestamptz('sealed_at').notNull().defaultNow(),
});

/**
 * UTC days whose cost_daily rows were computed early, once the day was complete (it has ended:
 * `now` no longer changes it), so reports over periods read them instead of integrating the
 * rollups live. Unlike sealed days they keep their detail and are re-opened (the row deleted) when
 * a snapshot that affects them is written later; `caps` (instance,cluster,k8s_price cap seconds)
 * records the gap caps they were computed with: readers use a closed day only under the same caps.
 * `reach_secs` is the longest of those caps: a snapshot taken at T affects the days T - reach .. T.
 */
export const costDailyClosedDays = pgTable('cost_daily_closed_days', {
  day: date('day', { mode: 'string' }).primaryKey(),
  caps: text('caps').notNull(),
  reachSecs: integer('reach_secs').notNull(),
  closedAt: timestamptz('closed_at').notNull().defaultNow(),
  /**
   * The seconds of the day that some complete priced snapshot's rate covers, merged over every
   * scope (costing/coverage.ts), computed with the day's cost_daily rows from the same pieces of
   * time; its cost_daily_coverage rows are written with it. NULL: not stored (a day closed before
   * coverage was stored, until closeCompleteDays fills it in); readers then integrate the day live.
   */
  coveredSecs: numeric('covered_secs'),
});

/**
 * Per closed day (cost_daily_closed_days with covered_secs), the seconds each (kind, scope)'s
 * complete priced snapshots cover: what dailyGaps reads for closed days instead of integrating
 * their snapshots. A (kind, scope) without a row covered none of the day. Rows of a day that was
 * re-opened are stale until it is closed again: readers join them through cost_daily_closed_days.
 */
export const costDailyCoverage = pgTable(
  'cost_daily_coverage',
  {
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').notNull(),
    scopeKey: text('scope_key').notNull(),
    coveredSecs: numeric('covered_secs').notNull(),
  },
  (t) => [primaryKey({ name: 'cost_daily_coverage_pk', columns: [t.day, t.kind, t.scopeKey] })],
);

// ---------------------------------------------------------------------------------------------
// Notification outbox (written by src/notify).

export const NOTIFY_DELIVERY_STATUSES = ['pending', 'sent', 'failed'] as const;
export type NotifyDeliveryStatus = (typeof NOTIFY_DELIVERY_STATUSES)[number];

/**
 * One row per logical notice (budget alert, anomaly alert, scheduled report delivery). `key` is
 * unique: enqueueing a key that is already here does nothing, so a notice goes out once across
 * replicas and restarts. `payload` is the message (subject, text, data, link, attachment).
 */
export const notifyMessages = pgTable('notify_messages', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  key: text('key').notNull().unique('notify_messages_key_uq'),
  payload: jsonb('payload').notNull(),
  createdAt: timestamptz('created_at').notNull().defaultNow(),
});

/**
 * One row per message and channel. The dispatcher claims due pending rows by setting
 * `claimed_until` (a lease: a replica that dies mid-send leaves the row to be retried when it
 * passes), sends, then marks them `sent`, or back to `pending` with `next_attempt_at` moved out
 * (exponential backoff), or `failed` after the last attempt.
 */
export const notifyDeliveries = pgTable(
  'notify_deliveries',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    messageId: bigint('message_id', { mode: 'number' })
      .notNull()
      .references(() => notifyMessages.id, { onDelete: 'cascade' }),
    channel: text('channel').notNull(),
    status: text('status').$type<NotifyDeliveryStatus>().notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamptz('next_attempt_at').notNull().defaultNow(),
    claimedBy: text('claimed_by'),
    claimedUntil: timestamptz('claimed_until'),
    lastError: text('last_error'),
    sentAt: timestamptz('sent_at'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (t) => [
    check('notify_deliveries_status_check', sql`${t.status} in (${inList(NOTIFY_DELIVERY_STATUSES)})`),
    unique('notify_deliveries_message_channel_uq').on(t.messageId, t.channel),
    index('notify_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
);

// ---------------------------------------------------------------------------------------------
// Budgets: those made in the web app by admins. Budgets of the configuration file are
// not stored here (the file stays their only source); both kinds are read by read-models/budgets.ts.

/**
 * A budget: what it covers (`by` NULL = every priced resource, else a grouping such as
 * `tag:team` or `project` with its group `value`), its currency, its period (calendar month,
 * quarter or year) and the amount for one period, the
 * percentages that alert and the channels they go to. Archiving keeps the row (the audit log and
 * past alerts name it); a name is unique among the budgets that are not archived.
 */
export const budgets = pgTable(
  'budgets',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    name: text('name').notNull(),
    by: text('by'),
    value: text('value'),
    currency: text('currency').notNull(),
    period: text('period').$type<'month' | 'quarter' | 'year'>().notNull().default('month'),
    amount: money('amount').notNull(),
    thresholds: jsonb('thresholds').$type<number[]>().notNull().default([50, 80, 100]),
    notify: jsonb('notify').$type<string[]>().notNull().default([]),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    createdBy: text('created_by').notNull(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
    updatedBy: text('updated_by').notNull(),
    archivedAt: timestamptz('archived_at'),
    archivedBy: text('archived_by'),
  },
  (t) => [
    check('budgets_amount_positive', sql`${t.amount} > 0`),
    check('budgets_period_check', sql`${t.period} in ('month', 'quarter', 'year')`),
    check('budgets_currency_iso', sql`${t.currency} ~ '^[A-Z]{3}$'`),
    check('budgets_group_check', sql`(${t.by} is null) = (${t.value} is null)`),
    uniqueIndex('budgets_active_name_uq')
      .on(sql`lower(${t.name})`)
      .where(sql`${t.archivedAt} is null`),
  ],
);

// ---------------------------------------------------------------------------------------------
// Saved views: a named report URL (path and query), made by any signed-in user for themselves or
// shared with everyone. A shared view opens the report for the viewer, whose own scope applies.

/**
 * A saved view: its `path` is a report URL (`/reports/<name>?<query>`, validated against the
 * report's parameters when saved); `owner` is the account key of who saved it (`local` in
 * local-only mode). A name is unique per owner, compared case-insensitively.
 */
export const savedViews = pgTable(
  'saved_views',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    name: text('name').notNull(),
    path: text('path').notNull(),
    owner: text('owner').notNull(),
    shared: boolean('shared').notNull().default(false),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  (t) => [
    check('saved_views_name_length', sql`char_length(${t.name}) between 1 and 100`),
    check('saved_views_path_length', sql`char_length(${t.path}) between 1 and 2000`),
    uniqueIndex('saved_views_owner_name_uq').on(t.owner, sql`lower(${t.name})`),
    index('saved_views_shared_idx').on(t.shared).where(sql`${t.shared}`),
  ],
);

/**
 * The cost_daily rows of a sealed or closed day summed over scopes, per (day, kind, dimension,
 * group, currency), with the `(untagged)` rule already applied: for every tag dimension present
 * that day, the `kind` rows of the (kind, scope)s lacking it are in its `(untagged)` group. Reports
 * over periods without a project or region filter read these (a few rows per group and day)
 * instead of one row per scope. Written by writeDailyTotals (costing/derive/closed-days.ts) when a day is
 * closed or sealed, and when recompute-rollups merges sealed days' tag values.
 */
export const costDailyTotals = pgTable(
  'cost_daily_totals',
  {
    day: date('day', { mode: 'string' }).notNull(),
    kind: text('kind').$type<SnapshotKind>().notNull(),
    dimension: text('dimension').notNull(),
    groupValue: text('group_value').notNull(),
    currency: text('currency'),
    /** As in cost_daily: amounts in seconds (cost x 3600), summed before the one division. */
    priceSeconds: money('price_seconds').notNull(),
    resourceSeconds: numeric('resource_seconds', { mode: 'string' }).notNull(),
    unpricedResourceSeconds: numeric('unpriced_resource_seconds', { mode: 'string' }).notNull(),
    /** GPU-seconds, their price-seconds and the seconds of resources whose GPU count is unknown; NULL: a row of the day predates GPU counting. */
    gpuSeconds: numeric('gpu_seconds', { mode: 'string' }),
    gpuPriceSeconds: money('gpu_price_seconds'),
    gpuUnknownResourceSeconds: numeric('gpu_unknown_resource_seconds', { mode: 'string' }),
  },
  (t) => [unique('cost_daily_totals_uq').on(t.dimension, t.day, t.kind, t.groupValue, t.currency).nullsNotDistinct()],
);

/**
 * Days whose cost_daily_totals rows are written, and the sealed_at (sealed days) or closed_at
 * (closed days) of the cost_daily rows they were summed from: readers use a day's totals only
 * while that stamp still matches (a re-closing or re-sealing rewrites cost_daily and the stamp;
 * until the totals follow, readers sum cost_daily itself).
 */
export const costDailyTotalsDays = pgTable('cost_daily_totals_days', {
  day: date('day', { mode: 'string' }).primaryKey(),
  sourceAt: timestamptz('source_at').notNull(),
});

/**
 * The explanations of flagged spend anomalies (reports/shared/anomaly-explain.ts), written after
 * each collection run for the days the anomalies report shows by default, so that the report reads
 * them instead of pricing every resource that changed that day on each request. A row holds for
 * exactly the inputs it was computed from: `inputs` is a digest of the day's price pieces (which
 * immutable snapshots price the day, for how many seconds) and of the explanation's format; a
 * reader whose pieces give another digest (a late snapshot re-opened the day, the gap caps
 * changed, the day was thinned) explains the day live. One row per (grouping, group, currency,
 * day): a newer explanation replaces the older one.
 */
export const anomalyExplanations = pgTable(
  'anomaly_explanations',
  {
    dimension: text('dimension').notNull(),
    groupValue: text('group_value').notNull(),
    currency: text('currency').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    inputs: text('inputs').notNull(),
    explanation: jsonb('explanation').notNull(),
    computedAt: timestamptz('computed_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'anomaly_explanations_pk', columns: [t.dimension, t.groupValue, t.currency, t.day] })],
);

/**
 * The instances and bare metal cluster servers of the latest complete snapshot of each scope, as
 * costing/current-instances.ts reads them (priced by the cost model, stops not applied), with
 * the idle rules' tag values already extracted: the idle candidates list reads this narrow table
 * instead of the snapshots (costing/derive/current-instances.ts). Derived and refreshed after each
 * collection run; `current_instances_stamp` says from which snapshots and idle settings it was
 * built, and readers use the table only while that stamp is the one of the current snapshots and
 * settings (else they read the snapshots). Emptying it loses nothing but time.
 */
export const currentInstances = pgTable(
  'current_instances',
  {
    scopeKey: text('scope_key').notNull(),
    kind: text('kind').$type<'instance' | 'cluster_server'>().notNull(),
    instanceId: text('instance_id').notNull(),
    projectId: integer('project_id').notNull(),
    regionId: integer('region_id').notNull(),
    // No taken_at: readers take it from the snapshot (a new snapshot with the same rows rewrites nothing).
    name: text('name'),
    status: text('status'),
    vmState: text('vm_state'),
    /** The snapshot's running state (stops made since are applied by readers). */
    snapshotRunning: boolean('snapshot_running').notNull(),
    createdAt: timestamptz('created_at'),
    tags: jsonb('tags').$type<Record<string, string>>(),
    securityGroupIds: text('security_group_ids').array(),
    securityGroupNames: text('security_group_names').array(),
    region: text('region'),
    flavorName: text('flavor_name'),
    flavorId: text('flavor_id'),
    clusterId: text('cluster_id'),
    clusterName: text('cluster_name'),
    clusterTaskStatus: text('cluster_task_status'),
    pricePerHour: money('price_per_hour'),
    pricePerMonth: money('price_per_month'),
    currencyCode: text('currency_code'),
    /** The idle rules' inputs under the settings of the stamp: no owner tag value, the expiry instant, the off-hours tag value (lower case). */
    ownerMissing: boolean('owner_missing').notNull(),
    expiresAt: timestamptz('expires_at'),
    offHoursValue: text('off_hours_value'),
  },
  (t) => [
    primaryKey({ name: 'current_instances_pk', columns: [t.scopeKey, t.kind, t.instanceId] }),
    // The idle list's default order (most money first, ties by reference): its first page is the
    // index's first rows.
    index('current_instances_price_idx').on(
      sql`${t.pricePerHour} desc nulls last`,
      t.projectId,
      t.regionId,
      sql`${t.instanceId} collate "C"`,
      t.kind,
    ),
  ],
);

/** The one row saying what current_instances was built from (see there). */
export const currentInstancesStamp = pgTable(
  'current_instances_stamp',
  {
    id: integer('id').primaryKey(),
    stamp: text('stamp').notNull(),
    builtAt: timestamptz('built_at').notNull().defaultNow(),
  },
  (t) => [check('current_instances_stamp_one_row', sql`${t.id} = 1`)],
);

// ---------------------------------------------------------------------------------------------
// The demo company of the built-in simulator (simulator mode), kept with the database whose
// history it made, so two databases started from one folder never share or advance each other's
// demo. One row: the simulator's saved company as JSON text (src/simulator/persistence.ts).

export const demoCompany = pgTable(
  'demo_company',
  {
    id: boolean('id').primaryKey().default(true),
    state: text('state').notNull(),
    savedAt: timestamptz('saved_at').notNull(),
  },
  (t) => [check('demo_company_one_row', sql`${t.id}`)],
);

/**
 * What each inventory list reads: its source rows (from the latest complete snapshot of each
 * scope), columns, the filters and sorts it supports. SQL here is trusted text written by code;
 * every user value reaches SQL as a bound parameter (see inventory.ts).
 */
import { onSnapshotSql, PRICED_KINDS, pricedResourcesSql, runningSql, type PricedKind } from '../costing/pricing.js';
import { SOURCES } from '../costing/snapshot-sources.js';
import type { SnapshotKind } from '../db/schema.js';
import type { Column } from './report.js';

export const INVENTORY_KINDS = [
  'instances',
  'clusters',
  'servers',
  'resources',
  'ports',
  'keypairs',
  'storage-keys',
  'image-tags',
  'free-features',
] as const;
export type InventoryKind = (typeof INVENTORY_KINDS)[number];

export const FILTER_NAMES = ['project', 'region', 'status', 'state', 'type', 'flavor', 'currency', 'priced', 'tag', 'missing_tag', 'q'] as const;
export type FilterName = (typeof FILTER_NAMES)[number];

export interface SortSpec {
  /** SQL over the source row `b`, never NULL (keyset paging compares tuples). */
  expr: string;
  /** SQL type the keyset value is cast to. */
  type: 'text' | 'numeric' | 'int' | 'timestamptz' | 'bool';
  /** The value before NULLs were replaced in `expr`: rows where it is NULL sort last either way. */
  nullable?: string;
}

export interface KindSpec {
  label: string;
  /** Snapshot kinds read (latest complete per scope). */
  snapshotKinds: readonly SnapshotKind[];
  /**
   * SELECT of the source rows over relation `latest` (the latest snapshots), for a statement
   * that reads several snapshots or one (SnapshotsRead). Must yield snapshot_id, scope_key,
   * row_key (unique within the snapshot) and presence_kind / presence_id (NULL when not tracked),
   * plus every column key and every column filters use.
   */
  source: (read: SnapshotsRead) => string;
  /**
   * What the source reads besides `latest`: the rows of these views as CTEs named by rowsOf
   * (`rows_<view>`), and the priced resources of these kinds (pricedResourcesSql over the CTEs of
   * snapshot-sources.ts). Reports read the views' rows so, never the views themselves, which
   * Citus cannot plan (see snapshotSourcesSql).
   */
  reads: { views?: readonly string[]; priced?: readonly PricedKind[] };
  columns: Column[];
  filters: readonly FilterName[];
  sorts: Record<string, SortSpec>;
  /** Columns searched by `q` (case-insensitive substring). */
  search: readonly string[];
  /** Whether rows carry a running status that a stop through cloudtally may override. */
  overridable: boolean;
  /**
   * Per snapshot kind read, the view whose rows of a snapshot are exactly the source rows of that
   * snapshot, and its column that is the row key: the first page in the default order then reads
   * each snapshot's keys in order and stops after a page (see inventory.ts, firstKeysQuery).
   */
  rowsOf?: Partial<Record<SnapshotKind, { view: string; key: string }>>;
  /** Whether the source is the cost model's priced resources, of which cost_rollups hold the sums per snapshot. */
  rolledUp?: boolean;
}

const text = (expr: string): SortSpec => ({ expr: `coalesce(${expr}, '')`, type: 'text', nullable: expr });
const num = (expr: string): SortSpec => ({ expr: `coalesce(${expr}, -1)`, type: 'numeric', nullable: expr });
const time = (expr: string): SortSpec => ({ expr: `coalesce(${expr}, '-infinity'::timestamptz)`, type: 'timestamptz', nullable: expr });
const int = (expr: string): SortSpec => ({ expr: `coalesce(${expr}, -1)`, type: 'int', nullable: expr });

const SEEN_COLUMNS: Column[] = [
  { key: 'first_seen', label: 'First seen', kind: 'timestamp', sortable: true, secondary: true },
  { key: 'last_seen', label: 'Last seen', kind: 'timestamp', sortable: true, secondary: true },
];
const SEEN_SORTS: Record<string, SortSpec> = { first_seen: time('b.first_seen'), last_seen: time('b.last_seen') };

/** Due time of an open scheduled stop (kinds whose rows can be stopped: see inventory.ts). */
const SCHEDULED_STOP_COLUMN: Column = { key: 'scheduled_stop_at', label: 'Scheduled stop', kind: 'timestamp', sortable: true, secondary: true };

const SCOPE_COLUMNS: Column[] = [
  { key: 'project_id', label: 'Project', kind: 'int', sortable: true, secondary: true },
  { key: 'region_id', label: 'Region', kind: 'int', sortable: true },
];
const SCOPE_SORTS: Record<string, SortSpec> = { project_id: int('b.project_id'), region_id: int('b.region_id') };

const PRICE_COLUMNS: Column[] = [
  { key: 'price_per_hour', label: 'Cost per hour', kind: 'money', currencyKey: 'currency', hourly: true, sortable: true },
  { key: 'price_per_month', label: 'Cost per month', kind: 'money', currencyKey: 'currency', sortable: true },
  { key: 'currency', label: 'Currency', kind: 'text', sortable: true, secondary: true },
];
const PRICE_SORTS: Record<string, SortSpec> = {
  price_per_hour: num('b.price_per_hour'),
  price_per_month: num('b.price_per_month'),
  currency: text('b.currency'),
};

/**
 * Whether a statement reads several snapshots (`latest` and the rows CTEs hold each snapshot's
 * rows, joined by snapshot id) or one (`latest` is one row, the CTEs hold only its rows, joined
 * on true: by id the planner guessed that 1 in 200 rows matched, and at 10,000 rows per snapshot
 * then probed the presence index once per row instead of hashing the scope's presence).
 */
export type SnapshotsRead = 'many' | 'one';

/** The join condition of rows `rows` to the snapshots `l` (see SnapshotsRead). */
const onSnapshot = (read: SnapshotsRead, rows: string) => onSnapshotSql(rows, 'l', read === 'one');

/** The CTEs of pricedResourcesSql for a statement reading `read` (SOURCES, see SnapshotSources.oneSnapshot). */
function sourcesOf(read: SnapshotsRead) {
  return read === 'one' ? { ...SOURCES, oneSnapshot: true } : SOURCES;
}

/** Priced kinds through the cost model, so every price here is the one the cost reports sum. */
function pricedSource(kinds: readonly PricedKind[], read: SnapshotsRead): string {
  return `select r.snapshot_id, r.scope_key, r.resource_id as row_key,
      case r.kind when 'k8s_price' then 'k8s_price' else r.kind end as presence_kind, r.resource_id as presence_id,
      r.kind, r.resource_id, r.name, r.project_id, r.region_id, r.region_name, r.status, r.running, r.flavor, r.tags,
      r.created_at, r.ssh_key_name, r.servers_total, r.quantity as servers_running,
      r.currency, r.unit_price_per_hour, r.price_per_hour, r.price_per_month
    from (${pricedResourcesSql('latest', kinds, { sources: sourcesOf(read) })}) r`;
}

/** The CTE holding the rows of `view` for the snapshots of `latest` (see KindSpec.reads). */
export function rowsOf(view: string): string {
  return `rows_${view}`;
}

const PRICED_FILTERS: readonly FilterName[] = ['project', 'region', 'status', 'state', 'flavor', 'currency', 'priced', 'tag', 'missing_tag', 'q'];

const RESOURCE_COLUMNS: Column[] = [
  { key: 'resource_id', label: 'ID', kind: 'text', sortable: true },
  { key: 'name', label: 'Name', kind: 'text', sortable: true },
  ...SCOPE_COLUMNS,
  { key: 'status', label: 'Status', kind: 'text', sortable: true },
  { key: 'running', label: 'Running', kind: 'bool', sortable: true, secondary: true },
  { key: 'flavor', label: 'Flavor', kind: 'text', sortable: true },
  ...PRICE_COLUMNS,
  { key: 'tags', label: 'Tags', kind: 'tags' },
  { key: 'created_at', label: 'Created', kind: 'timestamp', sortable: true, secondary: true },
  ...SEEN_COLUMNS,
  SCHEDULED_STOP_COLUMN,
];

const RESOURCE_SORTS: Record<string, SortSpec> = {
  resource_id: text('b.resource_id'),
  name: text('b.name'),
  status: text('b.status'),
  running: { expr: 'coalesce(b.running, false)', type: 'bool' },
  flavor: text('b.flavor'),
  created_at: time('b.created_at'),
  ...SCOPE_SORTS,
  ...PRICE_SORTS,
  ...SEEN_SORTS,
  scheduled_stop_at: time('b.scheduled_stop_at'),
};

/** Clusters are not stopped as a whole (their servers are): no scheduled stop on their rows. */
function withoutScheduledStop(sorts: Record<string, SortSpec>): Record<string, SortSpec> {
  const { scheduled_stop_at: _omitted, ...rest } = sorts;
  return rest;
}

/** Priced sources have one row per instance / cluster of the snapshot, keyed by its id (see pricedSource). */
const INSTANCE_ROWS = { view: 'instances', key: 'instance_id' };
const CLUSTER_ROWS = { view: 'gpu_clusters', key: 'cluster_id' };

/** Whether a cluster server runs: the cost model's own rule, so the inventory prices what the reports sum. */
const SERVER_RUNNING = runningSql('v.status', 'v.vm_state');

export const KINDS: Record<InventoryKind, KindSpec> = {
  instances: {
    label: 'Instances',
    snapshotKinds: ['instance'],
    source: (read) => pricedSource(['instance'], read),
    reads: { priced: ['instance'] },
    columns: [...RESOURCE_COLUMNS.slice(0, 9), { key: 'ssh_key_name', label: 'SSH key', kind: 'text', sortable: true, secondary: true }, ...RESOURCE_COLUMNS.slice(9)],
    filters: PRICED_FILTERS,
    sorts: { ...RESOURCE_SORTS, ssh_key_name: text('b.ssh_key_name') },
    search: ['b.resource_id', 'b.name'],
    overridable: true,
    rowsOf: { instance: INSTANCE_ROWS },
    rolledUp: true,
  },
  clusters: {
    label: 'GPU clusters',
    snapshotKinds: ['cluster'],
    source: (read) => pricedSource(['cluster'], read),
    reads: { priced: ['cluster'] },
    columns: [
      ...RESOURCE_COLUMNS.slice(0, 7),
      { key: 'servers_running', label: 'Servers running', kind: 'int', sortable: true },
      { key: 'servers_total', label: 'Servers', kind: 'int', sortable: true, secondary: true },
      ...RESOURCE_COLUMNS.slice(7).filter((c) => c !== SCHEDULED_STOP_COLUMN),
    ],
    filters: PRICED_FILTERS,
    sorts: { ...withoutScheduledStop(RESOURCE_SORTS), servers_running: int('b.servers_running'), servers_total: int('b.servers_total') },
    search: ['b.resource_id', 'b.name'],
    overridable: false,
    rowsOf: { cluster: CLUSTER_ROWS },
    rolledUp: true,
  },
  resources: {
    label: 'Priced resources (instances, GPU clusters, Kubernetes clusters)',
    snapshotKinds: PRICED_KINDS,
    source: (read) => pricedSource(PRICED_KINDS, read),
    reads: { priced: PRICED_KINDS },
    // The kind says more than the flavor here: the flavor waits behind "More columns".
    columns: [{ key: 'kind', label: 'Kind', kind: 'text', sortable: true }, ...RESOURCE_COLUMNS.map((c) => (c.key === 'flavor' ? { ...c, secondary: true } : c))],
    filters: [...PRICED_FILTERS, 'type'],
    sorts: { ...RESOURCE_SORTS, kind: text('b.kind') },
    search: ['b.resource_id', 'b.name'],
    overridable: true,
    rowsOf: { instance: INSTANCE_ROWS, cluster: CLUSTER_ROWS, k8s_price: { view: 'k8s_cluster_prices', key: 'cluster_name' } },
    rolledUp: true,
  },
  servers: {
    label: 'GPU cluster servers',
    snapshotKinds: ['cluster'],
    // A server costs its cluster's flavor price while it runs.
    source: (read) => `select v.snapshot_id, l.scope_key, v.cluster_id || '/' || v.server_id as row_key,
        'cluster_server' as presence_kind, v.server_id as presence_id,
        'cluster_server'::text as kind, v.server_id as resource_id, v.name, v.cluster_id, c.name as cluster_name,
        coalesce(v.project_id, l.project_id) as project_id, coalesce(v.region_id, l.region_id) as region_id,
        coalesce(nullif(trim(v.status), ''), v.vm_state) as status,
        ${SERVER_RUNNING} as running,
        coalesce(v.flavor_name, c.flavor) as flavor, v.tags, v.created_at, v.ssh_key_name,
        c.currency,
        case when c.currency is not null then case when ${SERVER_RUNNING} then c.unit_price_per_hour else 0 end end as price_per_hour,
        case when c.currency is not null then case when ${SERVER_RUNNING} then c.unit_price_per_month else 0 end end as price_per_month
      from latest l
      join ${rowsOf('gpu_cluster_servers')} v on ${onSnapshot(read, 'v')}
      left join (${pricedResourcesSql('latest', ['cluster'], { sources: sourcesOf(read) })}) c on c.snapshot_id = v.snapshot_id and c.resource_id = v.cluster_id
      where l.kind = 'cluster'`,
    reads: { views: ['gpu_cluster_servers'], priced: ['cluster'] },
    columns: [
      { key: 'resource_id', label: 'Server ID', kind: 'text', sortable: true },
      { key: 'name', label: 'Name', kind: 'text', sortable: true },
      { key: 'cluster_name', label: 'Cluster', kind: 'text', sortable: true },
      ...SCOPE_COLUMNS,
      { key: 'status', label: 'Status', kind: 'text', sortable: true },
      { key: 'running', label: 'Running', kind: 'bool', sortable: true, secondary: true },
      { key: 'flavor', label: 'Flavor', kind: 'text', sortable: true, secondary: true },
      ...PRICE_COLUMNS,
      { key: 'tags', label: 'Tags', kind: 'tags' },
      ...SEEN_COLUMNS,
      SCHEDULED_STOP_COLUMN,
    ],
    filters: PRICED_FILTERS,
    sorts: {
      scheduled_stop_at: time('b.scheduled_stop_at'),
      resource_id: text('b.resource_id'),
      name: text('b.name'),
      cluster_name: text('b.cluster_name'),
      status: text('b.status'),
      running: { expr: 'coalesce(b.running, false)', type: 'bool' },
      flavor: text('b.flavor'),
      ...SCOPE_SORTS,
      ...PRICE_SORTS,
      ...SEEN_SORTS,
    },
    search: ['b.resource_id', 'b.name', 'b.cluster_name'],
    overridable: true,
  },
  ports: {
    label: 'Instance ports',
    snapshotKinds: ['port'],
    source: (read) => `select p.snapshot_id, l.scope_key, p.instance_id || '/' || p.port_id as row_key,
        'port' as presence_kind, p.port_id as presence_id,
        p.port_id as resource_id, p.name, p.instance_id,
        coalesce(p.project_id, l.project_id) as project_id, coalesce(p.region_id, l.region_id) as region_id,
        (select string_agg(coalesce(g ->> 'name', g ->> 'id', ''), ', ') from jsonb_array_elements(coalesce(p.security_groups, '[]'::jsonb)) g) as security_groups,
        -- Ports of an instance that the latest collection could not read are its last known ones.
        coalesce(p.read_at, l.taken_at) as read_at, p.read_at is not null as last_known
      from latest l join ${rowsOf('instance_ports')} p on ${onSnapshot(read, 'p')} where l.kind = 'port'`,
    reads: { views: ['instance_ports'] },
    columns: [
      { key: 'resource_id', label: 'Port ID', kind: 'text', sortable: true },
      { key: 'name', label: 'Name', kind: 'text', sortable: true },
      { key: 'instance_id', label: 'Instance', kind: 'text', sortable: true, hrefKey: 'instance_href' },
      ...SCOPE_COLUMNS,
      { key: 'security_groups', label: 'Security groups', kind: 'text' },
      { key: 'read_at', label: 'Ports read', kind: 'timestamp', sortable: true, secondary: true },
      { key: 'last_known', label: 'Last known (not read in the latest collection)', kind: 'text', secondary: true },
      ...SEEN_COLUMNS,
    ],
    filters: ['project', 'region', 'q'],
    sorts: { resource_id: text('b.resource_id'), name: text('b.name'), instance_id: text('b.instance_id'), read_at: time('b.read_at'), ...SCOPE_SORTS, ...SEEN_SORTS },
    search: ['b.resource_id', 'b.name', 'b.instance_id'],
    overridable: false,
  },
  keypairs: {
    label: 'Keypairs',
    snapshotKinds: ['keypair'],
    // Presence tracks keypairs by name (legacy answers put the name in the id).
    source: (read) => `select k.snapshot_id, l.scope_key, k.keypair_id as row_key, 'keypair' as presence_kind, k.name as presence_id,
        k.keypair_id as resource_id, k.name, k.fingerprint, k.state as status, k.shared_in_project, k.created_at,
        coalesce(k.project_id, l.project_id) as project_id, coalesce(k.region_id, l.region_id) as region_id
      from latest l join ${rowsOf('keypairs')} k on ${onSnapshot(read, 'k')} where l.kind = 'keypair'`,
    reads: { views: ['keypairs'] },
    columns: [
      { key: 'name', label: 'Name', kind: 'text', sortable: true },
      { key: 'resource_id', label: 'ID', kind: 'text', sortable: true },
      { key: 'fingerprint', label: 'Fingerprint', kind: 'text' },
      { key: 'status', label: 'State', kind: 'text', sortable: true },
      { key: 'shared_in_project', label: 'Shared in project', kind: 'bool', secondary: true },
      ...SCOPE_COLUMNS,
      { key: 'created_at', label: 'Created', kind: 'timestamp', sortable: true },
      ...SEEN_COLUMNS,
    ],
    filters: ['project', 'region', 'status', 'q'],
    sorts: { name: text('b.name'), resource_id: text('b.resource_id'), status: text('b.status'), created_at: time('b.created_at'), ...SCOPE_SORTS, ...SEEN_SORTS },
    search: ['b.resource_id', 'b.name', 'b.fingerprint'],
    overridable: false,
  },
  'storage-keys': {
    label: 'Storage SSH keys',
    snapshotKinds: ['storage_key'],
    source: (read) => `select k.snapshot_id, l.scope_key, k.key_id::text as row_key, 'storage_key' as presence_kind, k.key_id::text as presence_id,
        k.key_id::text as resource_id, k.name, k.created_at
      from latest l join ${rowsOf('storage_ssh_keys')} k on ${onSnapshot(read, 'k')} where l.kind = 'storage_key'`,
    reads: { views: ['storage_ssh_keys'] },
    columns: [
      { key: 'resource_id', label: 'Key ID', kind: 'text', sortable: true },
      { key: 'name', label: 'Name', kind: 'text', sortable: true },
      { key: 'created_at', label: 'Created', kind: 'timestamp', sortable: true },
      ...SEEN_COLUMNS,
    ],
    filters: ['q'],
    sorts: { resource_id: text('b.resource_id'), name: text('b.name'), created_at: time('b.created_at'), ...SEEN_SORTS },
    search: ['b.resource_id', 'b.name'],
    overridable: false,
  },
  'image-tags': {
    label: 'Image tags',
    snapshotKinds: ['image_tag'],
    source: (read) => `select t.snapshot_id, l.scope_key, t.image_id || '/' || t.key as row_key, 'image_tag' as presence_kind, t.image_id || '/' || t.key as presence_id,
        t.image_id, t.key, t.value, t.read_only,
        coalesce(t.project_id, l.project_id) as project_id, coalesce(t.region_id, l.region_id) as region_id
      from latest l join ${rowsOf('image_tags')} t on ${onSnapshot(read, 't')} where l.kind = 'image_tag'`,
    reads: { views: ['image_tags'] },
    columns: [
      { key: 'image_id', label: 'Image', kind: 'text', sortable: true },
      { key: 'key', label: 'Key', kind: 'text', sortable: true },
      { key: 'value', label: 'Value', kind: 'text', sortable: true },
      { key: 'read_only', label: 'Read-only', kind: 'bool' },
      ...SCOPE_COLUMNS,
      ...SEEN_COLUMNS,
    ],
    filters: ['project', 'region', 'q'],
    sorts: { image_id: text('b.image_id'), key: text('b.key'), value: text('b.value'), ...SCOPE_SORTS, ...SEEN_SORTS },
    search: ['b.image_id', 'b.key', 'b.value'],
    overridable: false,
  },
  'free-features': {
    label: 'Activated free features',
    snapshotKinds: ['free_feature'],
    source: (read) => `select f.snapshot_id, l.scope_key, f.activation_id::text as row_key, 'free_feature' as presence_kind, f.activation_id::text as presence_id,
        f.activation_id::text as resource_id, f.feature_name as name, f.feature_service, f.is_free,
        f.client_id::text as client_id, f.feature_id::text as feature_id, f.created_at
      from latest l join ${rowsOf('free_features')} f on ${onSnapshot(read, 'f')} where l.kind = 'free_feature'`,
    reads: { views: ['free_features'] },
    columns: [
      { key: 'resource_id', label: 'Activation ID', kind: 'text', sortable: true },
      { key: 'name', label: 'Feature', kind: 'text', sortable: true },
      { key: 'feature_service', label: 'Service', kind: 'text', sortable: true },
      { key: 'is_free', label: 'Free', kind: 'bool' },
      { key: 'client_id', label: 'Client', kind: 'text', secondary: true },
      { key: 'feature_id', label: 'Feature ID', kind: 'text', secondary: true },
      { key: 'created_at', label: 'Activated', kind: 'timestamp', sortable: true },
      ...SEEN_COLUMNS,
    ],
    filters: ['q'],
    sorts: { resource_id: text('b.resource_id'), name: text('b.name'), feature_service: text('b.feature_service'), created_at: time('b.created_at'), ...SEEN_SORTS },
    search: ['b.resource_id', 'b.name', 'b.feature_service'],
    overridable: false,
  },
};

/** Every sort key any kind accepts (the params schema lists them; each kind checks its own). */
export const ALL_SORT_KEYS = [...new Set(Object.values(KINDS).flatMap((k) => Object.keys(k.sorts)))].sort() as [string, ...string[]];

import type { Queryable } from '../db/connection.js';
import { snapshotsRowsSql, versionedTable, viewRowsSql } from '../db/versions.js';
import { flavorCatalogueSelectSql, flavorLookupSql, flavorSnapshotSql, LOOKED_UP_FLAVOR as F, runningSql, SOURCE_COLUMNS } from './pricing.js';

/**
 * Instances and bare metal cluster servers as cloudtally knows them now: the rows of the latest
 * complete snapshot of each scope (kind instance, and kind cluster for servers), with
 * - the status corrected by stops made through cloudtally since that snapshot
 *   (view instance_status_overrides), so a stop shows at once;
 * - running and priced by the cost model's rules (src/costing/pricing.ts), so a confirmation
 *   shows the same running state and price as the cost reports: running = status (or vm_state
 *   when the status is empty) ACTIVE; the unit price of the flavor (an instance's own, a cluster
 *   server's cluster's) in the flavor snapshot that prices the snapshot, exact numeric text,
 *   null when unpriced;
 * - the pending scheduled stop, if any.
 */

/** An instance by project, region and id (actions write it `project:region:id`: read-models/refs.ts). */
export interface InstanceRef {
  projectId: number;
  regionId: number;
  instanceId: string;
}

export interface CurrentInstance {
  ref: InstanceRef;
  kind: 'instance' | 'cluster_server';
  name: string | null;
  /** Status after overrides (what the cloud says now, as far as cloudtally knows). */
  status: string | null;
  /** Status in the snapshot. */
  snapshotStatus: string | null;
  /** When cloudtally stopped it, if that is newer than its snapshot. */
  stoppedAt: Date | null;
  running: boolean;
  createdAt: Date | null;
  tags: Record<string, string>;
  securityGroupIds: string[];
  securityGroupNames: string[];
  region: string | null;
  flavorName: string | null;
  flavorId: string | null;
  clusterId: string | null;
  clusterName: string | null;
  clusterTaskStatus: string | null;
  pricePerHour: string | null;
  pricePerMonth: string | null;
  currency: string | null;
  snapshotTakenAt: Date;
  scheduledStop: { id: number; dueAt: Date; status: string } | null;
}

export interface CurrentInstanceRow extends Record<string, unknown> {
  kind: 'instance' | 'cluster_server';
  instance_id: string;
  project_id: number;
  region_id: number;
  taken_at: Date;
  name: string | null;
  status: string | null;
  /** Override, else status, else vm_state when the status is empty: what the cost model shows. */
  current_status: string | null;
  running: boolean;
  created_at: Date | null;
  tags: Record<string, string> | null;
  security_group_ids: string[] | null;
  security_group_names: string[] | null;
  region: string | null;
  flavor_name: string | null;
  flavor_id: string | null;
  cluster_id: string | null;
  cluster_name: string | null;
  cluster_task_status: string | null;
  override_status: string | null;
  override_at: Date | null;
  price_per_hour: string | null;
  price_per_month: string | null;
  currency_code: string | null;
  scheduled_id: number | null;
  scheduled_due_at: Date | null;
  scheduled_status: string | null;
}

/** The latest complete instance and cluster snapshot of each scope (id, kind, scope_key, project_id, region_id, taken_at, run_id). */
export const LATEST_INSTANCE_SNAPSHOTS_SQL = `select distinct on (kind, scope_key) id, kind, scope_key, project_id, region_id, taken_at, run_id, versioned
      from snapshots where complete and kind in ('instance', 'cluster') order by kind, scope_key, taken_at desc`;

/**
 * The instances and cluster servers of the latest complete snapshot of each scope, priced, as
 * their snapshot shows them (stops made through cloudtally not applied): the columns of
 * current_instances but the idle rules' inputs, with each row's `pricing` flavor.
 */
const INSTANCE_COLUMNS = ['instance_id', 'project_id', 'region_id', 'name', 'status', 'vm_state', 'created_at', 'tags', 'security_group_ids', 'security_group_names', 'region', 'flavor_name', 'flavor_id'];
const SERVER_COLUMNS = ['server_id', 'cluster_id', 'project_id', 'region_id', 'name', 'status', 'vm_state', 'created_at', 'tags', 'region', 'flavor_name', 'flavor_id'];
const CLUSTER_COLUMNS = ['cluster_id', 'cluster_name', 'flavor_name', 'task_status'];

/**
 * The snapshots' rows are read joined to the snapshots (snapshotsRowsSql) and the flavor
 * catalogues grouped per flavor snapshot, with no lateral join over a view or a distributed table:
 * the same plan on Postgres, and one Citus can run (docs/scaling.md).
 */
export const SNAPSHOT_INSTANCES_SQL = `
with latest_snapshots as (
  select s0.*, ${flavorSnapshotSql('s0')} as flavor_snapshot_id
  from (${LATEST_INSTANCE_SNAPSHOTS_SQL}) s0
),
pricing_snapshots as (select f.id, f.kind, f.scope_key, f.taken_at, f.versioned from snapshots f where f.id in (select flavor_snapshot_id from latest_snapshots)),
pricing_flavors as (${snapshotsRowsSql(versionedTable('gpu_flavors'), SOURCE_COLUMNS.gpu_flavors, 'pricing_snapshots')}),
-- Each snapshot with its flavor catalogue as two small maps: a price is a key lookup (see
-- flavorCatalogueSelectSql), not a query over the flavors per instance.
catalogues as (${flavorCatalogueSelectSql('pricing_flavors', undefined, 'snapshot_id')}),
latest as (
  select s.*, fm.flavors_by_name, fm.flavors_by_id
  from latest_snapshots s left join catalogues fm on fm.snapshot_id = s.flavor_snapshot_id
),
subjects as (
  select 'instance'::text as kind, i.instance_id, coalesce(l.project_id, i.project_id) as project_id,
    coalesce(l.region_id, i.region_id) as region_id, l.scope_key, l.taken_at, l.flavors_by_name, l.flavors_by_id, i.name, i.status, i.vm_state,
    i.created_at, i.tags, i.security_group_ids, i.security_group_names, i.region, i.flavor_name, i.flavor_id,
    i.flavor_name as pricing_flavor_name, i.flavor_id as pricing_flavor_id,
    null::text as cluster_id, null::text as cluster_name, null::text as cluster_task_status
  from latest l join ${viewRowsSql('instances', 'latest_snapshots', INSTANCE_COLUMNS)} i on i.snapshot_id = l.id
  where l.kind = 'instance'
  union all
  -- A server costs its cluster's flavor (the cost model prices a cluster as flavor x running servers).
  select 'cluster_server'::text, s.server_id, coalesce(l.project_id, s.project_id), coalesce(l.region_id, s.region_id),
    l.scope_key, l.taken_at, l.flavors_by_name, l.flavors_by_id, s.name, s.status, s.vm_state, s.created_at, s.tags, '{}'::text[], '{}'::text[],
    s.region, s.flavor_name, s.flavor_id, c.flavor_name, c.flavor_name, c.cluster_id, c.cluster_name, c.task_status
  from latest l
  join ${viewRowsSql('gpu_cluster_servers', 'latest_snapshots', SERVER_COLUMNS)} s on s.snapshot_id = l.id
  join ${viewRowsSql('gpu_clusters', 'latest_snapshots', CLUSTER_COLUMNS)} c on c.snapshot_id = s.snapshot_id and c.cluster_id = s.cluster_id
  where l.kind = 'cluster'
)
select x.scope_key, x.kind, x.instance_id, x.project_id, x.region_id, x.taken_at, x.name, x.status, x.vm_state,
  ${runningSql('x.status', 'x.vm_state')} as snapshot_running, x.created_at, x.tags, x.security_group_ids, x.security_group_names, x.region,
  x.flavor_name, x.flavor_id, x.cluster_id, x.cluster_name, x.cluster_task_status,
  case when ${F.known} then ${F.hour} end as price_per_hour, case when ${F.known} then ${F.month} end as price_per_month,
  case when ${F.known} then ${F.currency} end as currency_code
from subjects x
${flavorLookupSql('x', 'x.pricing_flavor_name', 'x.pricing_flavor_id')}`;

/**
 * Current instance rows `x` (see CurrentInstanceRow) from `source`: a relation with the columns
 * of SNAPSHOT_INSTANCES_SQL (that query, or the current_instances table built from it), with the
 * stops made since applied and the pending scheduled stop; callers add a `where`.
 */
export function currentInstancesSql(source: string): string {
  return `
with cur as (
  select x.*, o.status as override_status, o.changed_at as override_at,
    coalesce(o.status, case when trim(x.status) <> '' then x.status end, x.vm_state) as current_status,
    ${runningSql('coalesce(o.status, x.status)', 'x.vm_state')} as running
  from ${source} x
  left join instance_status_overrides o
    on o.instance_id = x.instance_id and o.project_id = x.project_id and o.region_id = x.region_id
)
select x.kind, x.instance_id, x.project_id, x.region_id, x.taken_at, x.name, x.status, x.current_status, x.running,
  x.created_at, x.tags, x.security_group_ids, x.security_group_names, x.region, x.flavor_name, x.flavor_id, x.cluster_id, x.cluster_name,
  x.cluster_task_status, x.override_status, x.override_at, x.price_per_hour, x.price_per_month, x.currency_code,
  ss.id as scheduled_id, ss.due_at as scheduled_due_at, ss.status as scheduled_status
from cur x
left join scheduled_stops ss
  on ss.instance_id = x.instance_id and ss.project_id = x.project_id and ss.region_id = x.region_id
  and ss.status in ('pending', 'running')
`;
}

/** Every current instance and cluster server as rows `x` (see CurrentInstanceRow), read from the snapshots; callers add a `where`. */
export const CURRENT_INSTANCES_SQL = currentInstancesSql(`(${SNAPSHOT_INSTANCES_SQL})`);

export function toInstance(row: CurrentInstanceRow): CurrentInstance {
  return {
    ref: { projectId: Number(row.project_id), regionId: Number(row.region_id), instanceId: row.instance_id },
    kind: row.kind,
    name: row.name,
    status: row.current_status,
    snapshotStatus: row.status,
    stoppedAt: row.override_at,
    running: row.running,
    createdAt: row.created_at,
    tags: row.tags ?? {},
    securityGroupIds: row.security_group_ids ?? [],
    securityGroupNames: row.security_group_names ?? [],
    region: row.region,
    flavorName: row.flavor_name,
    flavorId: row.flavor_id,
    clusterId: row.cluster_id,
    clusterName: row.cluster_name,
    clusterTaskStatus: row.cluster_task_status,
    pricePerHour: row.price_per_hour,
    pricePerMonth: row.price_per_month,
    currency: row.currency_code,
    snapshotTakenAt: row.taken_at,
    scheduledStop:
      row.scheduled_id !== null && row.scheduled_due_at !== null
        ? { id: Number(row.scheduled_id), dueAt: row.scheduled_due_at, status: row.scheduled_status ?? 'pending' }
        : null,
  };
}

/** The given instances (those cloudtally has seen; unknown refs are simply absent), in the order of `refs`. */
export async function loadInstancesByRef(q: Queryable, refs: readonly InstanceRef[]): Promise<CurrentInstance[]> {
  if (refs.length === 0) return [];
  const rows = await q.query<CurrentInstanceRow>(
    `${CURRENT_INSTANCES_SQL}
     where (x.project_id, x.region_id, x.instance_id) in (select * from unnest($1::int[], $2::int[], $3::text[]))`,
    [refs.map((r) => r.projectId), refs.map((r) => r.regionId), refs.map((r) => r.instanceId)],
  );
  const key = (r: InstanceRef) => `${r.projectId}/${r.regionId}/${r.instanceId}`;
  const position = new Map(refs.map((r, i) => [key(r), i] as const).reverse());
  return rows.map(toInstance).sort((a, b) => position.get(key(a.ref))! - position.get(key(b.ref))!);
}

/** When the latest complete instance and cluster snapshots were taken (oldest and newest), for notes. */
export async function instanceDataAge(q: Queryable): Promise<{ oldest: Date | null; newest: Date | null; scopes: number }> {
  const rows = await q.query<{ oldest: Date | null; newest: Date | null; scopes: string }>(
    `select min(taken_at) as oldest, max(taken_at) as newest, count(*) as scopes from (
${LATEST_INSTANCE_SNAPSHOTS_SQL}) l`,
  );
  const row = rows[0];
  return { oldest: row?.oldest ?? null, newest: row?.newest ?? null, scopes: Number(row?.scopes ?? 0) };
}

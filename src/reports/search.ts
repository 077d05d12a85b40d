/**
 * Global search: one query over every kind of resource, current and recently removed, by id or id
 * prefix, name, IP address and tag value. Reads the <name>_versions tables directly: the latest
 * version of each resource says whether it is current (valid_to NULL) or when it was removed.
 * SQL here is trusted text; the query text reaches SQL only as a bound parameter.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import type { Queryable } from '../db/connection.js';
import { regionNames } from './shared/regions.js';
import type { ReportCtx } from './shared/types.js';

/** How long a removed resource is still found. */
export const REMOVED_WINDOW_DAYS = 30;

export const searchParams = z.object({
  q: z
    .string({ error: 'q is required: an id or id prefix, a name, an IP address or a tag value' })
    .trim()
    .min(1, 'q must not be empty: give an id or id prefix, a name, an IP address or a tag value')
    .max(200, 'q must be at most 200 characters'),
  limit: z.coerce.number({ error: 'limit must be a whole number' }).int('limit must be a whole number').min(1, 'limit must be at least 1').max(200, 'limit must be at most 200').default(50),
});
export type SearchParams = z.infer<typeof searchParams>;

export type MatchedField = 'id' | 'id prefix' | 'name' | 'ip' | 'tag';

export interface SearchResult {
  kind: string;
  kindLabel: string;
  id: string;
  name: string | null;
  projectId: number | null;
  regionId: number | null;
  regionName: string | null;
  /** The resource's status when current; null when removed or when its kind has none. */
  status: string | null;
  /** When the resource was removed (its last version ended); null while it is current. */
  removedAt: Date | null;
  matched: MatchedField;
  /** The inventory list of its kind, filtered to it. */
  href: string;
}

interface SearchSource {
  kind: string;
  label: string;
  /** The inventory kind whose `q` finds it (inventory-kinds.ts). */
  inventoryKind: string;
  table: string;
  /** SQL over the version row `v`. */
  id: string;
  /** Identity of the resource within its scope: its columns (the versions' primary key less scope_key and valid_from). */
  key: readonly string[];
  name: string;
  status: string;
  tags: boolean;
  /** Whether versions carry project_id / region_id (storage keys are account-wide). */
  scoped?: false;
  /** SQL yielding the record's IP addresses as a jsonb array of {ip_address}, when it has any. */
  ips?: string;
}

const IPS = `(v.raw::jsonb -> 'fixed_ip_assignments')`;

const SOURCES: readonly SearchSource[] = [
  { kind: 'instance', label: 'Instance', inventoryKind: 'instances', table: 'instances_versions', id: 'v.instance_id', key: ['instance_id'], name: 'v.name', status: 'v.status', tags: true, ips: IPS },
  { kind: 'cluster_server', label: 'GPU cluster server', inventoryKind: 'servers', table: 'gpu_cluster_servers_versions', id: 'v.server_id', key: ['cluster_id', 'server_id'], name: 'v.name', status: "coalesce(nullif(trim(v.status), ''), v.vm_state)", tags: true, ips: IPS },
  { kind: 'cluster', label: 'GPU cluster', inventoryKind: 'clusters', table: 'gpu_clusters_versions', id: 'v.cluster_id', key: ['cluster_id'], name: 'v.cluster_name', status: 'v.cluster_status', tags: true },
  { kind: 'port', label: 'Instance port', inventoryKind: 'ports', table: 'instance_ports_versions', id: 'v.port_id', key: ['instance_id', 'port_id'], name: 'v.name', status: 'null::text', tags: false },
  { kind: 'keypair', label: 'Keypair', inventoryKind: 'keypairs', table: 'keypairs_versions', id: 'v.keypair_id', key: ['keypair_id'], name: 'v.name', status: 'v.state', tags: false },
  { kind: 'storage_key', label: 'Storage SSH key', inventoryKind: 'storage-keys', table: 'storage_ssh_keys_versions', id: 'v.key_id::text', key: ['key_id'], name: 'v.name', status: 'null::text', tags: false, scoped: false },
  { kind: 'k8s_cluster', label: 'Kubernetes cluster', inventoryKind: 'resources', table: 'k8s_cluster_prices_versions', id: 'v.cluster_name', key: ['cluster_name'], name: 'v.cluster_name', status: 'v.price_status', tags: true },
  { kind: 'image_tag', label: 'Image tag', inventoryKind: 'image-tags', table: 'image_tags_versions', id: "v.image_id || '/' || v.key", key: ['image_id', 'key'], name: "v.key || '=' || coalesce(v.value, '')", status: 'null::text', tags: false },
];

/** Image tags are matched on their value as tags are elsewhere. */
function tagMatchSql(source: SearchSource): string {
  if (source.kind === 'image_tag') return `lower(v.value) = lower($1)`;
  if (!source.tags) return 'false';
  return `exists (select 1 from jsonb_each_text(v.tags) t where lower(t.value) = lower($1))`;
}

/**
 * The matches of one kind: the latest version of each resource (open, or ended within the window
 * with no later version: removed), when it matches. $1 = q, $2 = whether q may be an id prefix, $3 = whether q is an
 * IP address, $4 = the window's start, $5 = the limit.
 */
function sourceSql(source: SearchSource): string {
  const sameKey = source.key.map((c) => `w.${c} = v.${c}`).join(' and ');
  const ip = source.ips ? `($3 and ${source.ips} @> jsonb_build_array(jsonb_build_object('ip_address', $1::text)))` : 'false';
  return `select * from (
      select
        '${source.kind}'::text as kind, ${source.id} as id, ${source.name} as name,
        ${source.scoped === false ? 'null::int as project_id, null::int as region_id' : 'v.project_id, v.region_id'}, ${source.status} as status, v.valid_to as removed_at,
        case when ${source.id} = $1 then 'id'
             when $2 and ${source.id} like $6 || '%' then 'id prefix'
             when ${ip} then 'ip'
             when lower(${source.name}) like '%' || $7 || '%' then 'name'
             else 'tag' end as matched
      from ${source.table} v
      where (v.valid_to is null or (v.valid_to > $4 and not exists (
          select 1 from ${source.table} w where w.scope_key = v.scope_key and ${sameKey} and w.valid_from >= v.valid_to)))
        and (${source.id} = $1 or ($2 and ${source.id} like $6 || '%') or lower(${source.name}) like '%' || $7 || '%'
             or ${ip} or ${tagMatchSql(source)})
    ) m`;
}

/** LIKE's special characters in user text, escaped (the default escape is backslash). */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

type SearchRow = {
  kind: string;
  id: string;
  name: string | null;
  project_id: number | null;
  region_id: number | null;
  status: string | null;
  removed_at: Date | null;
  matched: MatchedField;
};

/**
 * Searches every kind. `ctx.db` is read as the reports read it (a future team scope restricts
 * the rows here, as in the reports' filters).
 */
export async function search(ctx: ReportCtx, params: SearchParams): Promise<SearchResult[]> {
  const q = params.q;
  const since = new Date(ctx.now.getTime() - REMOVED_WINDOW_DAYS * 86_400_000);
  const rows = await ctx.db.query<SearchRow>(
    `select * from (${SOURCES.map(sourceSql).join('\nunion all\n')}) r
      order by (r.matched = 'id') desc, (r.removed_at is null) desc, lower(coalesce(r.name, '')), r.kind, r.id
      limit $5`,
    [q, q.length >= 4, isIP(q) !== 0, since, params.limit, likeLiteral(q), likeLiteral(q.toLowerCase())],
  );
  const names = await regionNamesOf(ctx.db, rows);
  return rows.map((r) => {
    const source = SOURCES.find((s) => s.kind === r.kind)!;
    return {
      kind: r.kind,
      kindLabel: source.label,
      id: r.id,
      name: r.name,
      projectId: r.project_id,
      regionId: r.region_id,
      regionName: r.region_id === null ? null : (names[String(r.region_id)] ?? null),
      status: r.removed_at === null ? r.status : null,
      removedAt: r.removed_at,
      matched: r.matched,
      href: `/reports/inventory?kind=${encodeURIComponent(source.inventoryKind)}&q=${encodeURIComponent(r.kind === 'image_tag' ? r.id.split('/')[0]! : r.id)}`,
    };
  });
}

async function regionNamesOf(db: Queryable, rows: readonly SearchRow[]): Promise<Record<string, string>> {
  const ids = [...new Set(rows.flatMap((r) => (r.region_id === null ? [] : [r.region_id])))];
  return regionNames(db, ids);
}

/** "removed 3 days ago" (whole days; "removed today" within the first). */
export function removedAgo(removedAt: Date, now: Date): string {
  const days = Math.floor((now.getTime() - removedAt.getTime()) / 86_400_000);
  if (days <= 0) return 'removed today';
  return days === 1 ? 'removed 1 day ago' : `removed ${days} days ago`;
}

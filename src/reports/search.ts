/**
 * Global search: one query over every kind of resource, current and recently removed, by id or id
 * prefix, name, IP address and tag value. Reads the <name>_versions tables directly: the latest
 * version of each resource says whether it is current (valid_to NULL) or when it was removed.
 * SQL here is trusted text; the query text reaches SQL only as a bound parameter.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { Binds } from '../db/binds.js';
import type { Queryable } from '../db/connection.js';
import { scopeCondition, scopeOf } from './shared/access-scope.js';
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
  /** The record has IP addresses (fixed_ip_assignments: search_ip_addresses, migration 0029). */
  ips?: true;
  /** How a team scope applies: by the version's tags, through its instance's tags (ports), or not at all (no tags: a scoped user finds none). */
  scopedBy: 'tags' | 'instance' | 'none';
  /** The kind can have as many resources as instances: its current versions have an index in name order (migration 0029). */
  large?: true;
}

const SOURCES: readonly SearchSource[] = [
  { kind: 'instance', label: 'Instance', inventoryKind: 'instances', table: 'instances_versions', id: 'v.instance_id', key: ['instance_id'], name: 'v.name', status: 'v.status', tags: true, ips: true, large: true, scopedBy: 'tags' },
  { kind: 'cluster_server', label: 'GPU cluster server', inventoryKind: 'servers', table: 'gpu_cluster_servers_versions', id: 'v.server_id', key: ['cluster_id', 'server_id'], name: 'v.name', status: "coalesce(nullif(trim(v.status), ''), v.vm_state)", tags: true, ips: true, large: true, scopedBy: 'tags' },
  { kind: 'cluster', label: 'GPU cluster', inventoryKind: 'clusters', table: 'gpu_clusters_versions', id: 'v.cluster_id', key: ['cluster_id'], name: 'v.cluster_name', status: 'v.cluster_status', tags: true, scopedBy: 'tags' },
  { kind: 'port', label: 'Instance port', inventoryKind: 'ports', table: 'instance_ports_versions', id: 'v.port_id', key: ['instance_id', 'port_id'], name: 'v.name', status: 'null::text', tags: false, large: true, scopedBy: 'instance' },
  { kind: 'keypair', label: 'Keypair', inventoryKind: 'keypairs', table: 'keypairs_versions', id: 'v.keypair_id', key: ['keypair_id'], name: 'v.name', status: 'v.state', tags: false, scopedBy: 'none' },
  { kind: 'storage_key', label: 'Storage SSH key', inventoryKind: 'storage-keys', table: 'storage_ssh_keys_versions', id: 'v.key_id::text', key: ['key_id'], name: 'v.name', status: 'null::text', tags: false, scoped: false, scopedBy: 'none' },
  { kind: 'k8s_cluster', label: 'Kubernetes cluster', inventoryKind: 'resources', table: 'k8s_cluster_prices_versions', id: 'v.cluster_name', key: ['cluster_name'], name: 'v.cluster_name', status: 'v.price_status', tags: true, scopedBy: 'tags' },
  { kind: 'image_tag', label: 'Image tag', inventoryKind: 'image-tags', table: 'image_tags_versions', id: "v.image_id || '/' || v.key", key: ['image_id', 'key'], name: "v.key || '=' || coalesce(v.value, '')", status: 'null::text', tags: false, scopedBy: 'none' },
];

/** How `q` may match, decided once per search (each way has its own index: migration 0029). */
interface MatchWays {
  /** Long enough to be an id prefix (shorter ones would match too much to be useful). */
  idPrefix: boolean;
  /** An IP address. */
  ip: boolean;
  /** Names contain q (3 characters or more, where trigrams narrow it down), or else start with it. */
  nameSubstring: boolean;
}

/** The statement's parameters, each bound on first use (an unused one could not be typed). */
interface SearchBinds {
  /** q */
  q: () => string;
  /** q as a LIKE literal */
  qLike: () => string;
  /** lower(q) as a LIKE literal */
  lowerLike: () => string;
  /** the removal window's start */
  since: () => string;
  limit: () => string;
}

function searchBinds(binds: Binds, values: { [K in keyof SearchBinds]: unknown }): SearchBinds {
  const once = (key: keyof SearchBinds) => {
    let placeholder: string | null = null;
    return () => (placeholder ??= binds.add(values[key]));
  };
  return { q: once('q'), qLike: once('qLike'), lowerLike: once('lowerLike'), since: once('since'), limit: once('limit') };
}

/** The conditions under which a version `v` of `source` matches, each one an index can answer. */
function matchConditions(source: SearchSource, ways: MatchWays, p: SearchBinds): { id: string; idPrefix: string; name: string; ip: string; tag: string } {
  const id = `(${source.id}) collate "C"`;
  const name = `lower(${source.name}) like ${ways.nameSubstring ? `'%' || ${p.lowerLike()}::text || '%'` : `${p.lowerLike()}::text || '%'`}`;
  const tag = source.kind === 'image_tag' ? `lower(v.value) = lower(${p.q()}::text)` : source.tags ? `search_tag_values(v.tags) && array[lower(${p.q()}::text)]` : 'false';
  return {
    id: `${id} = ${p.q()}::text`,
    idPrefix: ways.idPrefix ? `${id} like ${p.qLike()}::text || '%'` : 'false',
    name,
    ip: ways.ip && source.ips ? `search_ip_addresses(v.raw) && array[${p.q()}::text]` : 'false',
    tag,
  };
}

/** Current resources of a large kind read in name order before their match indexes are: see sourceSql. */
const WALK_ROWS = 500;

/**
 * The matches of one kind: the latest version of each resource (open, or ended within the window
 * with no later version: removed), when it matches, in the final order; each part at most the limit.
 * - The exact id.
 * - Current resources otherwise matching. Of a large kind, the first WALK_ROWS current resources in
 *   name order are read first: a common match (a tag value half the company carries, a name part
 *   every name has) fills the limit there, and those are the first in name order of all matches.
 *   Only when they do not is every match read through its index (id prefix, IP, trigrams, tag
 *   values) and sorted. Neither alone is fast for both: the indexes read every match of a common
 *   value; a walk in name order reads most of the kind when the matches cluster late in it (names
 *   containing "m-46" all sort after "m-45...").
 * - Removed ones, only while the current ones leave room within the limit.
 */
function sourceSql(source: SearchSource, ways: MatchWays, p: SearchBinds, inScope: string): string {
  const sameKey = source.key.map((c) => `w.${c} = v.${c}`).join(' and ');
  const m = matchConditions(source, ways, p);
  const others = [m.idPrefix, m.ip, m.name, m.tag].filter((c) => c !== 'false').join(' or ');
  const latest = `(v.valid_to is null or not exists (
          select 1 from ${source.table} w where w.scope_key = v.scope_key and ${sameKey} and w.valid_from >= v.valid_to))`;
  const nameOrder = `lower(coalesce(${source.name}, '')), ${source.id}`;
  const order = `order by lower(coalesce(name, '')), id limit ${p.limit()}`;
  const columns = (matched: string) => `'${source.kind}'::text as kind, ${source.id} as id, ${source.name} as name,
        ${source.scoped === false ? 'null::int as project_id, null::int as region_id' : 'v.project_id, v.region_id'}, ${source.status} as status, v.valid_to as removed_at,
        ${matched} as matched`;
  const label = `case when ${m.idPrefix} then 'id prefix' when ${m.ip} then 'ip' when ${m.name} then 'name' else 'tag' end`;
  const matching = `not (${m.id}) and (${others}) and ${inScope}`;
  const exact = `(select ${columns(`'id'`)} from ${source.table} v
      where ${m.id} and ${inScope} and (v.valid_to is null or v.valid_to > ${p.since()}) and ${latest})`;
  // offset 0 keeps the sort out of the scan: the planner reads the matches' indexes, then sorts.
  const indexed = `select * from (select ${columns(label)} from ${source.table} v where v.valid_to is null and ${matching} offset 0) t`;
  // An IP address matches a handful: its index answers at once, a walk in name order would not help.
  const current = source.large && !ways.ip
    ? `(with walked as materialized (
        select ${columns(label)} from (
          select *, lower(coalesce(${source.name}, '')) as walk_order from ${source.table} v where v.valid_to is null order by ${nameOrder} limit ${WALK_ROWS}
        ) v
        where ${matching} order by v.walk_order, ${source.id} limit ${p.limit()})
      select * from walked where (select count(*) from walked) >= ${p.limit()}
      union all
      (${indexed} where (select count(*) from walked) < ${p.limit()} ${order}))`
    : `(${indexed} ${order})`;
  // Removed resources come after every current one: read only when the current ones leave room
  // (a common value fills the limit with current resources and never reads history).
  // The matches are read through their indexes first (offset 0), and only then kept when ended in
  // the window: the ended versions of a month of history are many more than the matches.
  const removed = `(select * from (select ${columns(label)} from ${source.table} v
      where v.valid_to is not null and ${matching} and ${latest} offset 0) t
      where t.removed_at > ${p.since()} and (select count(*) from found) < ${p.limit()} ${order})`;
  return `(with found as materialized (${exact} union all ${current})
    select * from found
    union all
    ${removed})`;
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
 * Searches every kind, within the user's team scope (ctx.scope) when there is one. `ctx.db` is
 * read as the reports read it.
 */
export async function search(ctx: ReportCtx, params: SearchParams): Promise<SearchResult[]> {
  const q = params.q;
  const since = new Date(ctx.now.getTime() - REMOVED_WINDOW_DAYS * 86_400_000);
  const ways: MatchWays = { idPrefix: q.length >= 4, ip: isIP(q) !== 0, nameSubstring: q.length >= 3 };
  const binds = new Binds();
  const p = searchBinds(binds, { q, qLike: likeLiteral(q), lowerLike: likeLiteral(q.toLowerCase()), since, limit: params.limit });
  const scope = scopeOf(ctx);
  // A team-scoped user finds only resources carrying the scope's tag (ports: their instance's).
  const byTags = scopeCondition(scope, 'v', binds);
  const byInstance = scope ? `exists (select 1 from instances_versions i where i.scope_key = v.scope_key and i.instance_id = v.instance_id and ${scopeCondition(scope, 'i', binds)})` : 'true';
  const sources = SOURCES.filter((source) => !scope || source.scopedBy !== 'none');
  const inScope = (source: SearchSource) => (source.scopedBy === 'instance' ? byInstance : byTags);
  const text = `select * from (${sources.map((source) => sourceSql(source, ways, p, inScope(source))).join('\nunion all\n')}) r
      order by (r.matched = 'id') desc, (r.removed_at is null) desc, lower(coalesce(r.name, '')), r.kind, r.id
      limit ${p.limit()}`;
  const rows = await ctx.db.query<SearchRow>(text, binds.values);
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

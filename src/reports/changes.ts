/**
 * What changed between two complete snapshots of each scope (default: the latest and the one
 * about 24 h before it): resources added, removed, and changed with the fields that changed,
 * tag changes included.
 */
import { z } from 'zod';
import { scopeOf } from './shared/access-scope.js';
import { tagsInScopeSql, type TagScope } from '../db/access-scope-sql.js';
import type { Queryable } from '../db/connection.js';
import type { SnapshotKind } from '../db/schema.js';
import { versionBeganBetween, versionEndedBetween, versionedTable, versionMovedBetween } from '../db/versions.js';
import type { Column, Diff, FieldChange, Row, TagChange } from './report.js';
import { offsetRows } from './shared/batches.js';
import { formatAge, formatInstant } from './shared/format.js';
import { dirParam, idParam, instantParam, intParam, invalidParameter, sortParam } from './shared/params.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';
import { optionalSelect, scopeFilterFields } from './shared/fields.js';
import { AUDIT_ACTIONS } from '../read-models/audit-vocabulary.js';
import { reportUrls } from '../present/urls.js';

/** Per kind: table, identity column, compared columns (trusted SQL names). */
interface ChangeSpec {
  label: string;
  /**
   * What a scoped user sees of the kind: `tags` the rows whose tags (before or after) are in the
   * scope, `instance` ports of in-scope instances, `none` nothing (no team), `all` price lists.
   */
  scoped: 'tags' | 'instance' | 'none' | 'all';
  snapshotKind: SnapshotKind;
  table: string;
  id: string;
  name: string;
  fields: readonly string[];
  tags: boolean;
}

const SPECS = {
  instances: {
    scoped: 'tags',
    label: 'Instances',
    snapshotKind: 'instance',
    table: 'instances',
    id: 'instance_id',
    name: 'name',
    fields: ['name', 'status', 'vm_state', 'flavor_name', 'flavor_id', 'ssh_key_name', 'security_group_ids', 'volume_count'],
    tags: true,
  },
  clusters: {
    scoped: 'tags',
    label: 'GPU clusters',
    snapshotKind: 'cluster',
    table: 'gpu_clusters',
    id: 'cluster_id',
    name: 'cluster_name',
    fields: ['cluster_name', 'cluster_status', 'task_status', 'flavor_name', 'image_id', 'ssh_key_name', 'server_count'],
    tags: true,
  },
  servers: {
    scoped: 'tags',
    label: 'GPU cluster servers',
    snapshotKind: 'cluster',
    table: 'gpu_cluster_servers',
    id: 'server_id',
    name: 'name',
    fields: ['name', 'cluster_id', 'status', 'vm_state', 'flavor_name'],
    tags: true,
  },
  ports: { scoped: 'instance', label: 'Ports', snapshotKind: 'port', table: 'instance_ports', id: 'port_id', name: 'name', fields: ['name', 'instance_id', 'security_groups'], tags: false },
  keypairs: { scoped: 'none', label: 'Keypairs', snapshotKind: 'keypair', table: 'keypairs', id: 'name', name: 'name', fields: ['keypair_id', 'fingerprint', 'state', 'shared_in_project'], tags: false },
  flavors: {
    scoped: 'all',
    label: 'GPU flavors',
    snapshotKind: 'flavor',
    table: 'gpu_flavors',
    id: 'flavor_id',
    name: 'flavor_name',
    fields: ['flavor_name', 'disabled', 'capacity', 'currency_code', 'price_per_hour', 'price_per_month', 'price_status'],
    tags: false,
  },
  'k8s-prices': {
    scoped: 'all',
    label: 'Kubernetes prices',
    snapshotKind: 'k8s_price',
    table: 'k8s_cluster_prices',
    id: 'cluster_name',
    name: 'cluster_name',
    fields: ['currency_code', 'price_per_hour', 'price_per_month', 'discount_percent', 'price_status'],
    tags: false,
  },
} as const satisfies Record<string, ChangeSpec>;
export type ChangeKind = keyof typeof SPECS;
const CHANGE_KINDS = Object.keys(SPECS) as [ChangeKind, ...ChangeKind[]];

export const changesParams = z.strictObject({
  kind: z.enum(CHANGE_KINDS, { error: `kind must be one of ${CHANGE_KINDS.join(', ')}` }).default('instances'),
  /** Compare the latest snapshot with the one at least this many hours older (default 24). */
  hours: intParam('hours', 1, 8784).default(24),
  /** Or with the latest one taken at or before this time. */
  since: instantParam('since'),
  change: z.enum(['added', 'removed', 'changed'], { error: 'change must be added, removed or changed' }).optional(),
  project: idParam('project'),
  region: idParam('region'),
  sort: sortParam(['scope', 'change', 'resource_id', 'name']),
  dir: dirParam,
});
export type ChangesParams = z.infer<typeof changesParams>;

interface Pair {
  scope_key: string;
  to_id: number;
  to_at: Date;
  from_id: number | null;
  from_at: Date | null;
}

/** Per scope: the latest complete snapshot, and the latest complete one at or before the cut. */
async function pairs(ctx: ReportCtx, p: ChangesParams): Promise<Pair[]> {
  if (p.since && p.since.getTime() > ctx.now.getTime()) {
    // Nothing was collected after now: "since" a future time would silently compare the latest two.
    throw invalidParameter('since', `since must not be in the future (now: ${ctx.now.toISOString()})`);
  }
  const spec = SPECS[p.kind];
  return ctx.db.query<Pair & Record<string, unknown>>(
    `with latest as (
        select distinct on (scope_key) id, scope_key, taken_at from snapshots
        where complete and kind = $1 and ($4::int is null or project_id = $4) and ($5::int is null or region_id = $5)
        order by scope_key, taken_at desc, id desc
      )
      select l.scope_key, l.id as to_id, l.taken_at as to_at, f.id as from_id, f.taken_at as from_at
      from latest l
      left join lateral (
        select s.id, s.taken_at from snapshots s
        where s.complete and s.kind = $1 and s.scope_key = l.scope_key and s.id <> l.id
          and s.taken_at <= coalesce($2::timestamptz, l.taken_at - make_interval(hours => $3::int))
        order by s.taken_at desc, s.id desc limit 1
      ) f on true
      order by l.scope_key`,
    [spec.snapshotKind, p.since ?? null, p.hours, p.project ?? null, p.region ?? null],
  );
}

interface DiffPage {
  rows: Row[];
  counts: { added: number; removed: number; changed: number } | null;
}

/** One page of the diff rows, with the counts of the whole diff (null when the page is empty). */
async function fetchDiff(ctx: ReportCtx, p: ChangesParams, list: readonly Pair[], limit: number, offset: number): Promise<DiffPage> {
  const spec: ChangeSpec = SPECS[p.kind];
  const comparable = list.filter((x) => x.from_id !== null);
  if (comparable.length === 0) return { rows: [], counts: { added: 0, removed: 0, changed: 0 } };
  const rows = await ctx.db.query<{
    scope_key: string;
    resource_id: string;
    name: string | null;
    change: string;
    fields: Record<string, [unknown, unknown]>;
    tags: Record<string, [unknown, unknown]>;
    n_added: number;
    n_removed: number;
    n_changed: number;
  }>(diffQuery(spec, p), [comparable.map((x) => x.to_id), comparable.map((x) => x.from_id), comparable.map((x) => x.scope_key), p.change ?? null, limit, offset, ...scopeParams(scopeOf(ctx))]);
  const first = rows[0];
  const page: Row[] = rows.map((r) => ({
      scope: r.scope_key,
      change: r.change,
      resource_id: r.resource_id,
      name: r.name,
      changed_fields: [...Object.keys(r.fields), ...(Object.keys(r.tags).length > 0 ? ['tags'] : [])].join(', '),
      tag_changes: describeTagChanges(r.tags),
      details: Object.keys(r.fields).length > 0 ? r.fields : null,
      diff: diffOf(spec, r.fields, r.tags),
    }));
  if (STOPPABLE.has(p.kind)) await addStops(ctx.db, page, comparable);
  return { rows: page, counts: first ? { added: first.n_added, removed: first.n_removed, changed: first.n_changed } : null };
}

/** Kinds that cloudtally stops (instances, and cluster servers by their server id). */
const STOPPABLE: ReadonlySet<ChangeKind> = new Set(['instances', 'servers']);

/**
 * Who stopped a changed resource through cloudtally between the two snapshots, and why: the
 * latest real (not dry-run) successful stop in the audit log between the scope's two snapshot
 * times, linked to the audit log filtered on that instance and day.
 */
async function addStops(db: Queryable, rows: Row[], compared: readonly Pair[]): Promise<void> {
  const byScope = new Map(compared.map((x) => [x.scope_key, x]));
  const changed = rows.filter((r) => r.change === 'changed');
  for (const row of rows) Object.assign(row, { stopped_by: null, stop_href: null });
  if (changed.length === 0) return;
  const stops = await db.query<{ i: string; id: number; at: Date; actor: string; reason: string | null }>(
    `select r.i::text, a.id, a.at, a.actor, a.reason
     from unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) with ordinality as r(instance_id, from_at, to_at, i)
     cross join lateral (
       select id, at, actor, reason from audit_log a
       where a.instance_id = r.instance_id and a.action = $4 and a.result = $5 and not a.dry_run
         and a.at > r.from_at and a.at <= r.to_at
       order by a.at desc, a.id desc limit 1
     ) a`,
    [
      changed.map((r) => String(r.resource_id)),
      changed.map((r) => byScope.get(String(r.scope))!.from_at),
      changed.map((r) => byScope.get(String(r.scope))!.to_at),
      AUDIT_ACTIONS.stop,
      'stopped',
    ],
  );
  for (const stop of stops) {
    const row = changed[Number(stop.i) - 1]!;
    const day = stop.at.toISOString().slice(0, 10);
    row.stopped_by = `${stop.actor}${stop.reason ? `: ${stop.reason}` : ''} (${formatInstant(stop.at)}, audit #${stop.id})`;
    row.stop_href = `${reportUrls('audit').html}?${new URLSearchParams({ instance: String(row.resource_id), action: AUDIT_ACTIONS.stop, from: day, to: day })}`;
  }
}

/** Whether the kind's versions are identified by spec.id alone. */
function singleIdentity(spec: ChangeSpec): boolean {
  const { ids } = versionedTable(spec.table);
  return ids.length === 1 && ids[0] === spec.id;
}

/**
 * The diff as one statement: per scope pair, the before (a) and after (b) rows full-joined on
 * identity, keeping only rows that differ (a cheap row comparison first). When both snapshots are
 * folded into versions (DATA-MODEL.md), only the resources with a version that began or ended
 * between the two times can differ: the rows of those alone are compared (index ranges over the
 * versions' start and end), not every row of both snapshots. Every row carries the
 * counts per change type of the whole diff (window functions), so one statement gives the page
 * and the summary. Only the rows of the page (change filter $4, LIMIT $5 OFFSET $6) then get
 * `fields` = {column: [before, after]} and `tags` = {key: [before, after]} of what differs:
 * building those for every changed row would cost more than the whole comparison.
 */
function diffQuery(spec: ChangeSpec, p: Pick<ChangesParams, 'sort' | 'dir'>): string {
  const cols = [...new Set([spec.id, spec.name, ...spec.fields, ...(spec.tags ? ['tags'] : [])])];
  const pick = (side: 'a' | 'b') => cols.map((c) => `${side}.${c} as ${side}_${c}`).join(', ');
  const compared = [...spec.fields, ...(spec.tags ? ['tags'] : [])];
  const changed = spec.fields.map((f) => `'${f}', case when x.a_${f} is distinct from x.b_${f} then jsonb_build_array(to_jsonb(x.a_${f}), to_jsonb(x.b_${f})) end`);
  const both = `x.a_${spec.id} is not null and x.b_${spec.id} is not null`;
  const tagsJson = spec.tags
    ? `case when ${both} and x.a_tags is distinct from x.b_tags then
        (select coalesce(jsonb_object_agg(k.key, jsonb_build_array(x.a_tags -> k.key, x.b_tags -> k.key)), '{}'::jsonb)
         from (select jsonb_object_keys(x.a_tags) as key union select jsonb_object_keys(x.b_tags)) k
         where (x.a_tags -> k.key) is distinct from (x.b_tags -> k.key))
       else '{}'::jsonb end`
    : `'{}'::jsonb`;
  const dir = p.dir === 'desc' ? 'desc' : 'asc';
  const order = {
    scope: `scope_key ${dir}, change, resource_id`,
    change: `change ${dir}, scope_key, resource_id`,
    resource_id: `resource_id ${dir}, scope_key`,
    name: `coalesce(name, '') ${dir}, scope_key, resource_id`,
  }[p.sort ?? 'scope'];
  const side = (snapshot: string, only: string) =>
    `(select ${cols.map((c) => `t.${c}`).join(', ')} from ${spec.table} t where t.snapshot_id = p.${snapshot}${only}) `;
  const differs = `(a.${spec.id} is null or b.${spec.id} is null
          or (${compared.map((c) => `a.${c}`).join(', ')}) is distinct from (${compared.map((c) => `b.${c}`).join(', ')}))`;
  const versions = versionedTable(spec.table).versions;
  const read = (extra: string) =>
    `(select ${cols.map((c) => `v.${c}`).join(', ')} from ${versions} v where p.by_versions and v.scope_key = p.scope_key and ${extra}) `;
  // A resource identified by spec.id alone: the version current before that can differ ended in
  // between (versionEndedBetween), the one current after began in between (versionBeganBetween),
  // so those versions are all that is read. Otherwise (a composite identity) the rows of the ids
  // that moved are read through the view, so that every row sharing such an id is compared as before.
  const byVersions = singleIdentity(spec)
    ? `select ${pick('a')}, ${pick('b')}
        from ${read(versionEndedBetween('v', 'p.from_at', 'p.to_at'))}a
        full join ${read(versionBeganBetween('v', 'p.from_at', 'p.to_at'))}b on a.${spec.id} = b.${spec.id}
        where ${differs}`
    : `select ${pick('a')}, ${pick('b')}
        from ${side('from_id', ` and t.${spec.id} = any(array(select distinct m.${spec.id} from moved m))`)}a
        full join ${side('to_id', ` and t.${spec.id} = any(array(select distinct m.${spec.id} from moved m))`)}b on a.${spec.id} = b.${spec.id}
        where ${differs}`;
  const versionPairs = singleIdentity(spec)
    ? byVersions
    : `with moved as materialized (
            select v.${spec.id} from ${versions} v where p.by_versions and v.scope_key = p.scope_key and ${versionMovedBetween('v', 'p.from_at', 'p.to_at')})
          ${byVersions}`;
  return `with pairs as (
      select p.*, f.taken_at as from_at, t.taken_at as to_at,
        (f.versioned and t.versioned and f.scope_key = t.scope_key and f.taken_at < t.taken_at) as by_versions
      from unnest($1::int[], $2::int[], $3::text[]) as p(to_id, from_id, scope_key)
      join snapshots f on f.id = p.from_id
      join snapshots t on t.id = p.to_id
    ),
    diff as (
      select p.scope_key, coalesce(x.b_${spec.id}, x.a_${spec.id})::text as resource_id, coalesce(x.b_${spec.name}, x.a_${spec.name})::text as name,
        case when x.a_${spec.id} is null then 'added' when x.b_${spec.id} is null then 'removed' else 'changed' end as change,
        x.*
      from pairs p
      cross join lateral (
        select ${pick('a')}, ${pick('b')}
        from ${side('from_id', '')}a full join ${side('to_id', '')}b on a.${spec.id} = b.${spec.id}
        where not p.by_versions and ${differs}
        union all
        select * from (${versionPairs}) y
      ) x
    ),
    counted as (
      select diff.*,
        (count(*) filter (where change = 'added') over ())::int as n_added,
        (count(*) filter (where change = 'removed') over ())::int as n_removed,
        (count(*) filter (where change = 'changed') over ())::int as n_changed
      from diff
      where ${scopedDiffSql(spec)}
    ),
    page as (select * from counted where $4::text is null or change = $4 order by ${order} limit $5 offset $6)
    select x.scope_key, x.resource_id, x.name, x.change, x.n_added, x.n_removed, x.n_changed,
      case when ${both} then jsonb_strip_nulls(jsonb_build_object(${changed.join(', ')})) else '{}'::jsonb end as fields,
      ${tagsJson} as tags
    from page x
    order by ${order}`;
}

/**
 * The diff rows a scoped user sees (scope key $7, values $8; $7 null: every row): see
 * ChangeSpec.scoped. A port's instance is looked up in the latest complete instance snapshot of its scope.
 */
function scopedDiffSql(spec: ChangeSpec): string {
  const inScope = (tags: string) => tagsInScopeSql(tags, '$7::text', '$8::text[]');
  switch (spec.scoped) {
    // Both parameters appear in every form, so that the database can tell their types.
    case 'all':
      return '($7::text is null or $8::text[] is not null)';
    case 'none':
      return '($7::text is null and $8::text[] is null)';
    case 'tags':
      return `($7::text is null or ${inScope('diff.a_tags')} or ${inScope('diff.b_tags')})`;
    case 'instance':
      return `($7::text is null or exists (
        select 1 from instances i
        where i.snapshot_id = (select s.id from snapshots s where s.complete and s.kind = 'instance' and s.scope_key = diff.scope_key order by s.taken_at desc, s.id desc limit 1)
          and i.instance_id in (diff.a_instance_id, diff.b_instance_id) and ${inScope('i.tags')}))`;
  }
}

/** $7 and $8 of diffQuery: the scope's tag key and values, or nulls (everything). */
function scopeParams(scope: TagScope | null): [string | null, string[] | null] {
  return scope ? [scope.key, [...scope.values]] : [null, null];
}

/** One resource that differs between two snapshots of its scope. */
export interface ResourceChange {
  scope_key: string;
  resource_id: string;
  name: string | null;
  change: 'added' | 'removed' | 'changed';
  /** Changed columns: {column: [before, after]}. */
  fields: Record<string, [unknown, unknown]>;
  /** Changed tags: {key: [before, after]}. */
  tags: Record<string, [unknown, unknown]>;
  /** The tag changes as text, e.g. `team: "ml" -> "data"; +env="prod"`. */
  tag_changes: string;
}

/**
 * Every difference between the given (before, after) snapshot pairs of one kind, with the same
 * diff as the report (for other reports that explain a change, e.g. anomalies).
 */
export async function diffSnapshotPairs(
  q: Queryable,
  kind: ChangeKind,
  list: ReadonlyArray<{ scope_key: string; from_id: number; to_id: number }>,
): Promise<ResourceChange[]> {
  if (list.length === 0) return [];
  const rows = await q.query<Omit<ResourceChange, 'tag_changes'> & Record<string, unknown>>(diffQuery(SPECS[kind], { sort: 'scope', dir: 'asc' }), [
    list.map((x) => x.to_id),
    list.map((x) => x.from_id),
    list.map((x) => x.scope_key),
    null,
    null,
    0,
    ...scopeParams(null),
  ]);
  return rows.map((r) => ({
    scope_key: r.scope_key,
    resource_id: r.resource_id,
    name: r.name,
    change: r.change,
    fields: r.fields,
    tags: r.tags,
    tag_changes: describeTagChanges(r.tags),
  }));
}

/** People's names of the compared fields (the API's own names where these say nothing more). */
const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  cluster_name: 'Name',
  status: 'Status',
  cluster_status: 'Status',
  vm_state: 'VM state',
  task_status: 'Task status',
  flavor_name: 'Flavor',
  flavor_id: 'Flavor ID',
  ssh_key_name: 'SSH key',
  security_group_ids: 'Security groups',
  security_groups: 'Security groups',
  volume_count: 'Volumes',
  image_id: 'Image',
  server_count: 'Servers',
  cluster_id: 'Cluster',
  instance_id: 'Instance',
  keypair_id: 'Keypair ID',
  fingerprint: 'Fingerprint',
  state: 'State',
  shared_in_project: 'Shared in project',
  disabled: 'Disabled',
  capacity: 'Capacity',
  currency_code: 'Currency',
  price_per_hour: 'Price per hour',
  price_per_month: 'Price per month',
  discount_percent: 'Discount %',
  price_status: 'Price status',
};

export function fieldLabel(field: string): string {
  return FIELD_LABELS[field] ?? field.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
}

function tagValue(value: unknown): string | null {
  return value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * The change of a resource as data: each changed field (in the kind's field order) with its
 * label, value before and after; each changed tag (by key) added, removed or changed.
 */
function diffOf(spec: ChangeSpec, fields: Record<string, [unknown, unknown]>, tags: Record<string, [unknown, unknown]>): Diff {
  const fieldChanges: FieldChange[] = spec.fields
    .filter((f) => f in fields)
    .map((f) => ({ field: f, label: fieldLabel(f), before: fields[f]![0], after: fields[f]![1] }));
  const tagChanges: TagChange[] = Object.entries(tags)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, [before, after]]) => {
      const b = tagValue(before);
      const a = tagValue(after);
      return { key, change: b === null ? 'added' : a === null ? 'removed' : 'changed', before: b, after: a };
    });
  return { fields: fieldChanges, tags: tagChanges };
}

/** `team: "ml" -> "data"; +env="prod"; -owner` */
function describeTagChanges(tags: Record<string, [unknown, unknown]>): string {
  return Object.entries(tags)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, [before, after]]) => {
      if (before === null || before === undefined) return `+${key}=${JSON.stringify(after)}`;
      if (after === null || after === undefined) return `-${key}`;
      return `${key}: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`;
    })
    .join('; ');
}

const COLUMNS: Column[] = [
  { key: 'scope', label: 'Scope', kind: 'text', sortable: true },
  { key: 'change', label: 'Change', kind: 'text', sortable: true },
  { key: 'resource_id', label: 'ID', kind: 'text', sortable: true },
  { key: 'name', label: 'Name', kind: 'text', sortable: true, identifies: true },
  /** Field by field, old and new value, and the tags added, removed and changed (JSON: the structure). */
  { key: 'diff', label: 'What changed', kind: 'diff' },
  { key: 'changed_fields', label: 'Fields changed', kind: 'text', secondary: true },
  { key: 'tag_changes', label: 'Tag changes', kind: 'text', secondary: true },
];

/** Instances and servers also say who stopped them through cloudtally, linked to the audit log. */
const STOP_COLUMN: Column = { key: 'stopped_by', label: 'Stopped through cloudtally', kind: 'text', hrefKey: 'stop_href', wraps: true };

function columnsOf(kind: ChangeKind): Column[] {
  if (!STOPPABLE.has(kind)) return COLUMNS;
  const at = COLUMNS.findIndex((c) => c.key === 'diff') + 1;
  return [...COLUMNS.slice(0, at), STOP_COLUMN, ...COLUMNS.slice(at)];
}

export const changesReport: Report<ChangesParams> = defineReport({
  name: 'changes',
  title: 'Changes',
  description: 'Resources added, removed and changed between two complete snapshots of each scope (default: latest vs about 24 hours before).',
  section: 'inventory',
  params: changesParams,

  async run(ctx, params, page) {
    const list = await pairs(ctx, params);
    const diff = await fetchDiff(ctx, params, list, page.limit, page.offset);
    const rows = diff.rows;
    // An empty page (filtered, or past the end) carries no counts: ask for the first row of all changes.
    const counts = diff.counts ?? (await fetchDiff(ctx, { ...params, change: undefined }, list, 1, 0)).counts ?? { added: 0, removed: 0, changed: 0 };
    const total = counts.added + counts.removed + counts.changed;
    const unmatched = list.filter((x) => x.from_id === null).map((x) => x.scope_key);
    const compared = list.filter((x) => x.from_id !== null);
    const notes = compared.map(
      (x) => `${x.scope_key}: ${formatInstant(x.from_at!)} -> ${formatInstant(x.to_at)} (latest is ${formatAge(ctx.now, x.to_at)} old).`,
    );
    if (unmatched.length > 0) notes.push(`No earlier complete snapshot to compare with in: ${unmatched.join(', ')}.`);
    if (list.length === 0) notes.push(`No complete snapshot of ${SPECS[params.kind].label.toLowerCase()} yet.`);
    notes.push('Only complete snapshots are compared, so a resource missing because a collection failed never shows as removed.');
    return {
      title: `Changes: ${SPECS[params.kind].label}${params.since ? ` since ${formatInstant(params.since)}` : `, last ${params.hours} h`}`,
      summary: [
        { label: 'Added', value: counts.added, kind: 'int' },
        { label: 'Removed', value: counts.removed, kind: 'int' },
        { label: 'Changed', value: counts.changed, kind: 'int' },
      ],
      charts: [],
      columns: columnsOf(params.kind),
      rows,
      totalRows: params.change ? counts[params.change] : total,
      notes,
    };
  },

  async export(ctx, params) {
    const list = await pairs(ctx, params);
    return { columns: columnsOf(params.kind), rows: offsetRows(async (limit, offset) => (await fetchDiff(ctx, params, list, limit, offset)).rows) };
  },

  scoped: true,
  async filters(ctx, params) {
    return [
      { name: 'kind', label: 'Kind', type: 'select', value: params.kind, options: CHANGE_KINDS.map((k) => ({ value: k, label: SPECS[k].label })) },
      { name: 'hours', label: 'Compared with hours before', type: 'number', value: String(params.hours) },
      // Shown (not carried hidden) because it overrides the hours: clearing it brings them back.
      { name: 'since', label: 'Or since (e.g. 2025-03-01T12:00Z; overrides hours)', type: 'text', value: params.since ? params.since.toISOString() : '' },
      optionalSelect('change', 'Change', params.change, [['added', 'Added'], ['removed', 'Removed'], ['changed', 'Changed']], 'All'),
      ...(await scopeFilterFields(ctx.db, params)),
    ];
  },
}, { cached: true });

/**
 * Inventory per kind (instances, GPU clusters and their servers, all priced resources, ports,
 * keypairs, storage keys, image tags, free features) from the latest complete snapshot of each
 * scope, with filters (project, region, status, tag key=value, text...), sorting, paging, first
 * and last seen per resource, and each priced resource's hourly and monthly cost.
 */
import { z } from 'zod';
import { Binds } from '../db/binds.js';
import { formatInstanceRef } from '../read-models/refs.js';
import { PRICED_KINDS } from '../costing/pricing.js';
import { snapshotKeysSql, snapshotsRowsSql, versionedTable } from '../db/versions.js';
import { pricedSnapshotsSql, snapshotSourcesSql } from '../costing/snapshot-sources.js';
import type { Queryable } from '../db/connection.js';
import type { Config } from '../config/index.js';
import { normaliseTagKey } from '../tags/normalise.js';
import type { Column, ExportSql, FilterField, Row } from './report.js';
import { detailRows, keysetRows } from './shared/batches.js';
import { appUrl, stopConfirmPath } from './shared/links.js';
import { dirParam, idParam, instantParam, repeated, tagFilterParam, tagKeyParam, textParam } from './shared/params.js';
import { formatAge } from './shared/format.js';
import { latestSnapshots, SNAPSHOT_COLUMNS, type SnapshotInfo } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';
import type { AccessScope } from '../auth/access-scope.js';
import { scopeCondition, scopeOf } from './shared/access-scope.js';
import { totalRow } from './shared/totals.js';
import { ALL_SORT_KEYS, FILTER_NAMES, INVENTORY_KINDS, KINDS, rowsOf, type FilterName, type InventoryKind, type KindSpec, type SortSpec } from './inventory-kinds.js';
import { rollupSummary, tagFilterValues, type RollupSummary } from './inventory-rollups.js';
import { optionalSelect, pricedKindSelect, repeatedTextFields, scopeFilterFields } from './shared/fields.js';

export const inventoryParams = z
  .strictObject({
    kind: z.enum(INVENTORY_KINDS, { error: `kind must be one of ${INVENTORY_KINDS.join(', ')}` }).default('instances'),
    project: idParam('project'),
    region: idParam('region'),
    status: textParam('status', 40),
    state: z.enum(['running', 'stopped'], { error: 'state must be running or stopped' }).optional(),
    type: z.enum(PRICED_KINDS, { error: `type must be one of ${PRICED_KINDS.join(', ')}` }).optional(),
    flavor: textParam('flavor'),
    currency: z.string().regex(/^[A-Za-z]{3,10}$/, { error: 'currency must be a currency code such as EUR' }).optional(),
    priced: z.enum(['yes', 'no'], { error: 'priced must be yes or no' }).optional(),
    tag: repeated(tagFilterParam),
    missing_tag: repeated(tagKeyParam('missing_tag')),
    q: textParam('q', 100),
    sort: z.enum(ALL_SORT_KEYS, { error: 'sort must name a sortable column of this kind' }).optional(),
    dir: dirParam,
    /** The inventory as it was collected then: each scope's latest complete collection at or before this time. */
    at: instantParam('at'),
  })
  .superRefine((p, ctx) => {
    const spec = KINDS[p.kind];
    for (const name of FILTER_NAMES) {
      if (p[name] !== undefined && !spec.filters.includes(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: `${name} does not apply to kind ${p.kind}` });
      }
    }
    if (p.sort !== undefined && !(p.sort in spec.sorts)) {
      ctx.addIssue({ code: 'custom', path: ['sort'], message: `kind ${p.kind} sorts by ${Object.keys(spec.sorts).sort().join(', ')}` });
    }
  });
export type InventoryParams = z.infer<typeof inventoryParams>;

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/**
 * Which rows of a kind a scoped user sees: resources by their own tags, ports through their
 * instance (in the latest complete instance snapshot of the port's scope); kinds that carry no
 * tags (keypairs, storage keys, image tags, free features) belong to no team: none.
 */
function inScopeSql(kind: InventoryKind, scope: AccessScope, binds: Binds): string {
  switch (kind) {
    case 'instances':
    case 'clusters':
    case 'resources':
    case 'servers':
      return scopeCondition(scope, 'b', binds);
    case 'ports':
      // The instances of the scope that are the user's (scopeInstancesSql, with the base).
      return `exists (select 1 from scope_instances si where si.scope_key = b.scope_key and si.instance_id = b.instance_id)`;
    default:
      return 'false';
  }
}

/** WHERE conditions over `b` for the parameters (every value bound, keys normalised through config). */
function conditions(spec: KindSpec, p: InventoryParams, ctx: ReportCtx, binds: Binds): string[] {
  const config = ctx.config;
  const where: string[] = scopeOf(ctx) ? [inScopeSql(p.kind, scopeOf(ctx)!, binds)] : [];
  const has = (f: FilterName) => spec.filters.includes(f);
  if (p.project !== undefined && has('project')) where.push(`b.project_id = ${binds.add(p.project)}::int`);
  if (p.region !== undefined && has('region')) where.push(`b.region_id = ${binds.add(p.region)}::int`);
  if (p.status !== undefined && has('status')) where.push(`upper(b.status) = upper(${binds.add(p.status)}::text)`);
  if (p.state !== undefined && has('state')) where.push(p.state === 'running' ? 'b.running' : 'not coalesce(b.running, false)');
  if (p.type !== undefined && has('type')) where.push(`b.kind = ${binds.add(p.type)}::text`);
  if (p.flavor !== undefined && has('flavor')) where.push(`b.flavor = ${binds.add(p.flavor)}::text`);
  if (p.currency !== undefined && has('currency')) where.push(`b.currency = upper(${binds.add(p.currency)}::text)`);
  if (p.priced !== undefined && has('priced')) where.push(p.priced === 'yes' ? 'b.currency is not null' : 'b.currency is null');
  for (const t of p.tag ?? []) {
    // `|| '{}'` keeps the planner off the tags GIN index: it indexes every snapshot ever kept, so a
    // common tag matches hundreds of thousands of rows of history, where filtering the latest
    // snapshots' rows as they are read is cheap (100,000 instances, a day of hourly history: the
    // slowest query of a filtered page 880 ms -> 290 ms).
    const filter = tagFilterValues(t, config);
    const key = binds.add(filter.key);
    const values = filter.values;
    where.push(`(${values.map((v) => `(b.tags || '{}'::jsonb) @> jsonb_build_object(${key}::text, ${binds.add(v)}::text)`).join(' or ')})`);
  }
  for (const key of p.missing_tag ?? []) where.push(`not (b.tags ? ${binds.add(normaliseTagKey(key, config))}::text)`);
  if (p.q !== undefined && p.q !== '') {
    const pattern = binds.add(likePattern(p.q));
    where.push(`(${spec.search.map((c) => `${c} ilike ${pattern}::text`).join(' or ')})`);
  }
  return where;
}

/**
 * The rows of a kind with presence (first/last seen) and, for instances and servers, statuses
 * changed by a stop through cloudtally since the latest snapshot (they cost 0 from then on).
 * Snapshots read: these ids (the latest, as of `at`, read first: latestSnapshotIds), or the one
 * snapshot given, whose scope then bounds the presence read (an index range of one scope, and on
 * Citus one shard). The ids are read before the statement because Citus refuses the recursive
 * latest-snapshots walk inside a statement over sharded tables. The views' rows are read as CTEs
 * (KindSpec.reads): Citus, which cannot plan the statement with them inlined, computes them first.
 */
type SnapshotSource = number[] | Pick<SnapshotInfo, 'id' | 'scope_key'>;

/**
 * CTE `scope_instances` (scope_key, instance_id): the instances in the latest complete instance
 * snapshot of each scope of `latest` whose tags put them in the user's scope; a port is the user's
 * when its instance is. Read from the versions and kept tables (snapshotsRowsSql), the latest
 * instance snapshots found per scope from `snapshots` alone: what Citus plans.
 */
function scopeInstancesSql(scope: AccessScope, binds: Binds): string {
  return `scope_instance_snapshots as (
      select x.id, x.kind, x.scope_key, x.taken_at, x.versioned from snapshots x
      where x.id in (select (select i.id from snapshots i where i.complete and i.kind = 'instance' and i.scope_key = l.scope_key
                             order by i.taken_at desc, i.id desc limit 1)
                     from (select distinct scope_key from latest) l)),
    scope_instances as (
      select s.scope_key, r.instance_id
      from (${snapshotsRowsSql(versionedTable('instances'), ['instance_id', 'tags'], 'scope_instance_snapshots')}) r
      join scope_instance_snapshots s on s.id = r.snapshot_id
      where ${scopeCondition(scope, 'r', binds)})`;
}

function baseSql(spec: KindSpec, binds: Binds, source: SnapshotSource, at: Date | undefined, scope: AccessScope | null = null): string {
  // Phase 2 reads exactly the snapshots phase 1 read, even if a newer one completed in between.
  const one = Array.isArray(source) ? undefined : `${binds.add(source.id)}::int`;
  const ids = one ? `(${one})` : `(select unnest(${binds.add(source)}::int[]))`;
  const snapshots = spec.reads.priced ? pricedSnapshotsSql(ids) : `select ${SNAPSHOT_COLUMNS.join(', ')} from snapshots where id in ${ids}`;
  const rows = [
    ...(spec.reads.views ?? []).map((view) => `${rowsOf(view)} as (${snapshotsRowsSql(versionedTable(view), versionedTable(view).columns, 'latest')})`),
    ...(spec.reads.priced ? [snapshotSourcesSql(spec.reads.priced, one ? { one: 'latest', id: one } : { many: 'latest' })] : []),
    ...(scope && spec === KINDS.ports ? [scopeInstancesSql(scope, binds)] : []),
  ];
  // As of a past time, rows are as collected then: no stop or scheduled stop made since.
  const current = spec.overridable && !at;
  const override = current
    ? `left join instance_status_overrides o on src.kind in ('instance', 'cluster_server')
         and o.instance_id = src.resource_id and o.project_id = src.project_id and o.region_id = src.region_id`
    : '';
  // An open scheduled stop (pending, or being executed) shows its due time on the row.
  const scheduled = current
    ? `left join scheduled_stops ss on ss.status in ('pending', 'running') and src.kind in ('instance', 'cluster_server')
         and ss.instance_id = src.resource_id and ss.project_id = src.project_id and ss.region_id = src.region_id`
    : '';
  const overridden = current
    ? `, coalesce(o.status, src.status) as status_now, o.status is not null as stopped_since_snapshot, ss.due_at as scheduled_stop_at`
    : spec.overridable
      ? `, null::text as status_now, false as stopped_since_snapshot, null::timestamptz as scheduled_stop_at`
      : `, null::text as status_now, false as stopped_since_snapshot`;
  const sameScope = Array.isArray(source) ? '' : ` and p.scope_key = ${binds.add(source.scope_key)}::text`;
  return `latest as (${snapshots}),
    ${rows.join(',\n    ')},
    src as (${spec.source(one ? 'one' : 'many')}),
    b as (
      select src.*, p.first_seen_at as first_seen, p.last_seen_at as last_seen ${overridden}
      from src
      left join resource_presence_seen p on p.kind = src.presence_kind and p.scope_key = src.scope_key and p.resource_id = src.presence_id${sameScope}
      ${override}
      ${scheduled}
    )`;
}

interface Ordering {
  terms: SortSpec[];
  dir: 'asc' | 'desc';
}

/**
 * The order of a list: the asked sort column, then (scope, snapshot, row key), which is unique.
 * The default starts with the scope key rather than the snapshot id on purpose: ordering by
 * (snapshot_id, id) matches the primary key, and the planner then merge-joins the whole index
 * from its first row instead of reading only the latest snapshots.
 */
function orderingOf(spec: KindSpec, p: InventoryParams): Ordering {
  // Byte order ("C") for the tie-break keys: several times cheaper to sort than a linguistic collation.
  const tiebreak: SortSpec[] = [
    { expr: 'b.scope_key collate "C"', type: 'text' },
    { expr: 'b.snapshot_id', type: 'int' },
    { expr: 'b.row_key collate "C"', type: 'text' },
  ];
  if (!p.sort) return { terms: tiebreak, dir: 'asc' };
  const column = spec.columns.find((c) => c.key === p.sort);
  const numeric = column && ['int', 'money', 'decimal', 'percent', 'timestamp'].includes(column.kind);
  const dir = p.dir ?? (numeric ? 'desc' : 'asc');
  const sort = spec.sorts[p.sort]!;
  // Unknown values (an unpriced resource's cost, a missing name) last in both directions, as the
  // cost reports do: a flag term that the direction turns so that NULLs come after the rest.
  const nullsLast: SortSpec[] = sort.nullable ? [{ expr: `(${sort.nullable} ${dir === 'asc' ? 'is null' : 'is not null'})`, type: 'bool' }] : [];
  return { terms: [...nullsLast, sort, ...tiebreak], dir };
}

function orderBy(o: Ordering): string {
  return o.terms.map((t) => `${t.expr} ${o.dir}`).join(', ');
}

interface PageRequest {
  limit: number;
  offset?: number;
  /** Keyset position: the sort terms' values of the last row already produced. */
  after?: unknown[];
  /** Only the rows of these snapshots (the latest complete snapshot of each scope, or fewer). */
  snapshotIds: number[];
}

/**
 * Phase 1: only the keys of the rows of one page, in order. Columns a query does not use are
 * pruned and the joins that would only produce them (flavors, presence, overrides) removed by
 * the planner, so a page of 100,000 instances reads the keys, not every joined row.
 */
function keysQuery(ctx: ReportCtx, p: InventoryParams, page: PageRequest) {
  const spec = KINDS[p.kind];
  const binds = new Binds();
  const base = baseSql(spec, binds, page.snapshotIds, p.at, scopeOf(ctx));
  const where = conditions(spec, p, ctx, binds);
  const ordering = orderingOf(spec, p);
  if (page.after) {
    const tuple = ordering.terms.map((t, i) => `${binds.add(page.after![i])}::${t.type}${t.expr.endsWith('collate "C"') ? ' collate "C"' : ''}`).join(', ');
    where.push(`(${ordering.terms.map((t) => t.expr).join(', ')}) ${ordering.dir === 'asc' ? '>' : '<'} (${tuple})`);
  }
  const keys = ordering.terms.map((t, i) => `${t.expr} as __k${i}`).join(', ');
  const sql = `with ${base}
    select b.snapshot_id as __sid, b.row_key as __rk, ${keys} from b
    ${where.length ? `where ${where.join(' and ')}` : ''}
    order by ${orderBy(ordering)}
    limit ${binds.add(page.limit)}::int offset ${binds.add(page.offset ?? 0)}::int`;
  return { sql, values: binds.values };
}

/**
 * Phase 1 of a page in the default order (scope key, snapshot, row key): the snapshots in that
 * order, each read by a statement of its own that gives only its first `offset + limit` keys,
 * until the page is full: the page reads the first rows of one or two snapshots (a later one is
 * only started) instead of sorting every row, and each statement reads one scope (on Citus, one
 * shard of each table). With `snapshots` the ones the page spans (the rows before them counted
 * out of the offset), only those.
 */
async function firstPageKeys(ctx: ReportCtx, p: InventoryParams, page: { limit: number; offset: number }, snapshots: readonly SnapshotInfo[]): Promise<Record<string, unknown>[]> {
  const keys: Record<string, unknown>[] = [];
  let skip = page.offset;
  for (const snapshot of inDefaultOrder(snapshots)) {
    const query = keysOfSnapshotQuery(ctx, p, snapshot, skip + page.limit - keys.length);
    const found = await ctx.db.query<Record<string, unknown>>(query.sql, query.values);
    keys.push(...found.slice(skip));
    skip = Math.max(0, skip - found.length);
    if (keys.length >= page.limit) break;
  }
  return keys.slice(0, page.limit);
}

/** Snapshots in the default order's first terms: scope key in byte order ("C"), then id. */
function inDefaultOrder(snapshots: readonly SnapshotInfo[]): SnapshotInfo[] {
  return [...snapshots].sort((a, b) => Buffer.compare(Buffer.from(a.scope_key), Buffer.from(b.scope_key)) || a.id - b.id);
}

/**
 * The first `first` keys (__sid, __rk) of one snapshot's rows matching the filters, in row key
 * order. Without filters, and where the kind says which view's rows the source rows are
 * (rowsOf), read straight from that view's versions in order, stopping after `first` (an index
 * walk); otherwise the snapshot's rows are built, filtered and the first ones kept.
 */
function keysOfSnapshotQuery(ctx: ReportCtx, p: InventoryParams, snapshot: SnapshotInfo, first: number) {
  const spec = KINDS[p.kind];
  const binds = new Binds();
  const limit = `${binds.add(first)}::int`;
  const filtered = conditions(spec, p, ctx, new Binds()).length > 0;
  const rows = spec.rowsOf?.[snapshot.kind];
  if (!filtered && rows) {
    const id = `${binds.add(snapshot.id)}::int`;
    const scopeKey = snapshot.versioned ? `${binds.add(snapshot.scope_key)}::text` : undefined;
    const keys = snapshotKeysSql(versionedTable(rows.view), { id, scopeKey }, rows.key, limit);
    return { sql: `select ${id} as __sid, k.row_key as __rk from (${keys}) k order by k.row_key collate "C"`, values: binds.values };
  }
  const base = baseSql(spec, binds, snapshot, p.at, scopeOf(ctx));
  const where = conditions(spec, p, ctx, binds);
  const sql = `with ${base}
    select b.snapshot_id as __sid, b.row_key as __rk from b
    ${where.length ? `where ${where.join(' and ')}` : ''}
    order by b.row_key collate "C" limit ${limit}`;
  return { sql, values: binds.values };
}

/**
 * The snapshots a page of `limit` rows from `offset` spans, given the rows of each listed
 * snapshot in the list's order, and the offset of the page within the first of them.
 */
function snapshotsSpanned(snapshots: RollupSummary['snapshots'], offset: number, limit: number): { ids: number[]; offset: number } {
  const ids: number[] = [];
  let within = 0;
  let before = 0;
  for (const s of snapshots) {
    if (s.rows > 0 && before + s.rows > offset && before < offset + limit) {
      if (ids.length === 0) within = offset - before;
      ids.push(s.id);
    }
    before += s.rows;
  }
  return { ids, offset: within };
}

/** One page in the default order (firstPageKeys), then the details of its rows. */
async function firstPageRows(
  ctx: ReportCtx,
  p: InventoryParams,
  page: { limit: number; offset: number },
  rolled: RollupSummary | null,
  snapshots: readonly SnapshotInfo[],
): Promise<Record<string, unknown>[]> {
  const spanned = rolled ? snapshotsSpanned(rolled.snapshots, page.offset, page.limit) : null;
  if (spanned && spanned.ids.length === 0) return [];
  const keys = spanned
    ? await firstPageKeys(ctx, p, { limit: page.limit, offset: spanned.offset }, snapshots.filter((s) => spanned.ids.includes(s.id)))
    : await firstPageKeys(ctx, p, page, snapshots);
  return detailsInOrder(ctx.db, p, keys);
}

/** Phase 2: every column of the rows whose keys phase 1 found (index lookups, not a scan). */
function detailsQuery(p: InventoryParams, snapshotIds: number[], rowKeys: string[]) {
  const spec = KINDS[p.kind];
  const binds = new Binds();
  const base = baseSql(spec, binds, snapshotIds, p.at);
  const sql = `with ${base}
    select b.* from b where b.row_key = any(${binds.add(rowKeys)}::text[])`;
  return { sql, values: binds.values };
}

function countQuery(ctx: ReportCtx, p: InventoryParams, latestIds: number[]) {
  const spec = KINDS[p.kind];
  const binds = new Binds();
  const base = baseSql(spec, binds, latestIds, p.at, scopeOf(ctx));
  const where = conditions(spec, p, ctx, binds);
  return { sql: `with ${base} select count(*)::int as n from b ${where.length ? `where ${where.join(' and ')}` : ''}`, values: binds.values };
}

function hasCost(spec: KindSpec): boolean {
  return spec.columns.some((c) => c.key === 'price_per_hour');
}

/**
 * Cost per currency of every row matching the filters (not the page), summed in SQL, a stop
 * through cloudtally since the snapshot counting 0 as on the rows (see toRow).
 */
function totalsQuery(ctx: ReportCtx, p: InventoryParams, latestIds: number[]) {
  const spec = KINDS[p.kind];
  const binds = new Binds();
  const base = baseSql(spec, binds, latestIds, p.at, scopeOf(ctx));
  const where = ['b.currency is not null', ...conditions(spec, p, ctx, binds)];
  // What each row shows (fieldSql): a row stopped through cloudtally since its snapshot costs 0.
  const cost = (column: string) => `sum(${fieldSql(p.kind, column)}) as ${column}`;
  return {
    sql: `with ${base} select b.currency, ${cost('price_per_hour')}, ${cost('price_per_month')} from b where ${where.join(' and ')} group by b.currency order by b.currency`,
    values: binds.values,
  };
}

/** Cost per currency of the rows: from the rollups when they answer (`rolled`), else summed over the rows. */
async function costTotals(ctx: ReportCtx, p: InventoryParams, rolled: RollupSummary | null, latestIds: number[]): Promise<Row[]> {
  const spec = KINDS[p.kind];
  if (!hasCost(spec)) return [];
  const sums: readonly Record<string, unknown>[] = rolled?.totals ?? (await summedRows(ctx, p, latestIds));
  return sums.map((r) => totalRow(spec.columns, { currency: r.currency, price_per_hour: r.price_per_hour, price_per_month: r.price_per_month }));
}

async function summedRows(ctx: ReportCtx, p: InventoryParams, latestIds: number[]): Promise<Record<string, unknown>[]> {
  const query = totalsQuery(ctx, p, latestIds);
  return ctx.db.query<Record<string, unknown>>(query.sql, query.values);
}

/** The number of rows: from the rollups when they answer (`rolled`), else counted. */
async function rowCount(ctx: ReportCtx, p: InventoryParams, rolled: RollupSummary | null, latestIds: number[]): Promise<number> {
  if (rolled) return rolled.count;
  const count = countQuery(ctx, p, latestIds);
  const [counted] = await ctx.db.query<{ n: number }>(count.sql, count.values);
  return counted?.n ?? 0;
}

/** What toRow reads of a source row besides the columns: a cursor export selects only these. */
function rowInputs(kind: InventoryKind): string[] {
  const spec = KINDS[kind];
  const inputs = spec.columns.map((c) => c.key);
  if (spec.overridable) inputs.push('stopped_since_snapshot', 'status_now', 'kind', 'project_id', 'region_id', 'resource_id');
  if (kind === 'ports') inputs.push('instance_id', 'last_known', 'read_at');
  return [...new Set(inputs)];
}

/** `now`: the time ages are counted to (the `at` of an inventory as of then). */
function toRow(kind: InventoryKind, r: Record<string, unknown>, now: Date, asOf = false): Row {
  const row: Row = {};
  for (const column of KINDS[kind].columns) row[column.key] = r[column.key] ?? null;
  if (KINDS[kind].overridable && r.stopped_since_snapshot === true) {
    row.status = r.status_now;
    row.running = false;
    if (row.currency !== null) {
      row.price_per_hour = '0';
      row.price_per_month = '0';
    }
  }
  if (KINDS[kind].overridable && (r.kind === 'instance' || r.kind === 'cluster_server')) {
    // Instances and cluster servers can be stopped (through the instance endpoint): the view offers it to operators.
    const ref = { projectId: Number(r.project_id), regionId: Number(r.region_id), instanceId: String(r.resource_id) };
    row.ref = formatInstanceRef(ref);
    row.stop_href = row.running === true && !asOf ? stopConfirmPath(ref) : null;
  }
  if (kind === 'ports') {
    row.instance_href = appUrl('/reports/inventory', { kind: 'instances', q: String(r.instance_id ?? '') });
    row.last_known = r.last_known === true && r.read_at instanceof Date ? `yes: read ${formatAge(now, r.read_at)} ago` : null;
  }
  return row;
}

/** Phase 2 for keys found by phase 1: their full rows, in the keys' order (each with its keys). */
async function detailsInOrder(db: Queryable, p: InventoryParams, found: readonly Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  if (found.length === 0) return [];
  const details = detailsQuery(
    p,
    [...new Set(found.map((k) => Number(k.__sid)))],
    [...new Set(found.map((k) => String(k.__rk)))],
  );
  const rows = await db.query<Record<string, unknown>>(details.sql, details.values);
  const byKey = new Map(rows.map((r) => [`${r.snapshot_id}|${r.row_key}`, r]));
  return found.map((k) => {
    const row = byKey.get(`${k.__sid}|${k.__rk}`);
    if (!row) throw new Error(`inventory: row ${String(k.__rk)} of snapshot ${String(k.__sid)} was not found again (snapshot deleted by retention meanwhile?)`);
    return row;
  });
}

/** One page of rows: keys first, then their details, in the keys' order. */
async function fetchRows(db: Queryable, ctx: ReportCtx, p: InventoryParams, page: PageRequest): Promise<Record<string, unknown>[]> {
  const keys = keysQuery(ctx, p, page);
  return detailsInOrder(db, p, await db.query<Record<string, unknown>>(keys.sql, keys.values));
}

function columnsOf(kind: InventoryKind): Column[] {
  return KINDS[kind].columns;
}

function describeFilters(p: InventoryParams): string {
  const parts: string[] = [];
  if (p.at) parts.push(`as of ${p.at.toISOString()}`);
  if (p.type) parts.push(p.type);
  if (p.project) parts.push(`project ${p.project}`);
  if (p.region) parts.push(`region ${p.region}`);
  if (p.status) parts.push(`status ${p.status}`);
  if (p.state) parts.push(p.state);
  if (p.flavor) parts.push(`flavor ${p.flavor}`);
  if (p.priced) parts.push(p.priced === 'yes' ? 'priced' : 'without a known price');
  if (p.currency) parts.push(p.currency.toUpperCase());
  for (const t of p.tag ?? []) parts.push(`${t.key}=${t.value}`);
  for (const k of p.missing_tag ?? []) parts.push(`without tag ${k}`);
  if (p.q) parts.push(`"${p.q}"`);
  return parts.join(', ');
}

export const inventoryReport: Report<InventoryParams> = defineReport({
  name: 'inventory',
  title: 'Inventory',
  description: 'Every collected resource of a kind, from the latest complete snapshot of each scope, with first and last seen and (for priced kinds) its cost.',
  section: 'inventory',
  params: inventoryParams,
  view: 'inventory',

  async run(ctx, params, page) {
    const spec = KINDS[params.kind];
    const snapshots = await latestSnapshots(ctx.db, spec.snapshotKinds, params.at);
    const latestIds = snapshots.map((s) => s.id);
    const rolled = await rollupSummary(ctx, params, latestIds);
    const [rows, counted, totals] = await Promise.all([
      params.sort
        ? fetchRows(ctx.db, ctx, params, { limit: page.limit, offset: page.offset, snapshotIds: latestIds })
        : firstPageRows(ctx, params, { limit: page.limit, offset: page.offset ?? 0 }, rolled, snapshots),
      rowCount(ctx, params, rolled, latestIds),
      costTotals(ctx, params, rolled, latestIds),
    ]);
    const filters = describeFilters(params);
    const out = rows.map((r) => toRow(params.kind, r, params.at ?? ctx.now, params.at !== undefined));
    const overridden = rows.filter((r) => r.stopped_since_snapshot === true).length;
    // Lower case for the sentence, but not the acronyms and names (GPU, SSH, Kubernetes).
    const what = spec.label.replace(/^[A-Z][a-z]/, (w) => w.toLowerCase());
    const notes = params.at
      ? [
          `As of ${params.at.toISOString()}: each scope's latest complete collection at or before then, as collected (stops made since are not shown).`,
          ...(snapshots.length === 0 ? [`No complete snapshot of ${what} at or before then.`] : []),
        ]
      : [...freshnessNotes(ctx.now, snapshots, what)];
    if (hasCost(spec)) {
      notes.push('Cost = the flavor price of the scope while running (clusters: x running servers; Kubernetes: the pricing total); stopped resources cost 0; an empty cost means the price is unknown, never zero.');
    }
    if (params.kind === 'ports') notes.push(...(await unreadPortsNotes(ctx.db, snapshots.map((s) => s.id))));
    if (overridden > 0) notes.push(`${overridden} row(s) on this page were stopped through cloudtally after the latest snapshot: shown as stopped; the cost reports follow at the next collection.`);
    return {
      title: `${spec.label}${filters ? `: ${filters}` : ''}`,
      summary: [{ label: 'Rows', value: counted, kind: 'int' }],
      charts: [],
      columns: columnsOf(params.kind),
      rows: out,
      totalRows: counted,
      ...(hasCost(spec) ? { totals } : {}),
      notes,
    };
  },

  async export(ctx, params) {
    // One list of snapshots for the rows, the SQL export and the totals.
    const snapshots = await latestSnapshots(ctx.db, KINDS[params.kind].snapshotKinds, params.at);
    const latestIds = snapshots.map((s) => s.id);
    const sql = exportSql(ctx, params, snapshots);
    return {
      columns: columnsOf(params.kind),
      rows: inventoryRows(ctx, params, undefined, {}, snapshots),
      ...(sql ? { sql } : {}),
      ...(hasCost(KINDS[params.kind]) ? { totals: async () => costTotals(ctx, params, await rollupSummary(ctx, params, latestIds), latestIds) } : {}),
    };
  },

  scoped: true,
  async filters(ctx, params) {
    const spec = KINDS[params.kind];
    const fields: FilterField[] = [
      { name: 'kind', label: 'Kind', type: 'links', value: params.kind, options: INVENTORY_KINDS.map((k) => ({ value: k, label: KINDS[k].label })) },
    ];
    const has = (f: FilterName) => spec.filters.includes(f);
    if (has('q')) fields.push({ name: 'q', label: 'Search', type: 'text', value: params.q ?? '' });
    fields.push({ name: 'at', label: 'As of (UTC, empty: now)', type: 'text', value: params.at?.toISOString() ?? '' });
    fields.push(...(await scopeFilterFields(ctx.db, params)).filter((f) => has(f.name as FilterName)));
    if (has('status')) fields.push({ name: 'status', label: 'Status', type: 'text', value: params.status ?? '' });
    if (has('state')) fields.push(optionalSelect('state', 'Running', params.state, [['running', 'Running'], ['stopped', 'Not running']]));
    if (has('type')) fields.push(pricedKindSelect('type', 'Type', params.type, 'Any'));
    if (has('flavor')) fields.push({ name: 'flavor', label: 'Flavor', type: 'text', value: params.flavor ?? '' });
    if (has('priced')) fields.push(optionalSelect('priced', 'Price', params.priced, [['yes', 'Known'], ['no', 'Unknown']]));
    if (has('currency')) fields.push({ name: 'currency', label: 'Currency', type: 'text', value: params.currency ?? '' });
    if (has('tag')) fields.push(...repeatedTextFields('tag', 'Tag key:value', (params.tag ?? []).map((t) => `${t.key}:${t.value}`)));
    // The tag hygiene report links here with the keys a resource must lack.
    if (has('missing_tag')) fields.push(...repeatedTextFields('missing_tag', 'Without tag key', params.missing_tag ?? []));
    return fields;
  },
}, { cached: true, showsActions: true });

/** What the latest port snapshots could not read: the instances whose last known ports are shown, and those with none known. */
async function unreadPortsNotes(db: Queryable, snapshotIds: number[]): Promise<string[]> {
  if (snapshotIds.length === 0) return [];
  const [counts] = await db.query<{ unread: number; unknown: number }>(
    `with latest as (select ${SNAPSHOT_COLUMNS.join(', ')} from snapshots where id = any($1::int[])),
       known as (select distinct p.snapshot_id, p.instance_id from (${snapshotsRowsSql(versionedTable('instance_ports'), ['instance_id'], 'latest')}) p),
       unread as (select u.snapshot_id, u.instance_id from unread_instance_ports u where u.snapshot_id = any($1::int[]))
     select count(*)::int as unread, (count(*) filter (where k.instance_id is null))::int as unknown
     from unread u left join known k on k.snapshot_id = u.snapshot_id and k.instance_id = u.instance_id`,
    [snapshotIds],
  );
  if (!counts || counts.unread === 0) return [];
  const none = counts.unknown > 0 ? ` ${counts.unknown} of them have no ports known yet and are not listed.` : '';
  return [
    `The ports of ${counts.unread} instance(s) could not be read in the latest collection: their last known ports are shown, marked "last known" with the time they were read, and none of them counts as gone.${none}`,
  ];
}

/** Keys per keyset query of a paged export (PGlite). */
const EXPORT_KEY_PAGE = 20_000;
/** Full rows per details query of a paged export. */
const EXPORT_DETAIL_CHUNK = 1_000;
/** Full rows per FETCH of a cursor export (Postgres). */
const EXPORT_CURSOR_BATCH = 2_000;

export interface ExportSizes {
  keyPage: number;
  detailChunk: number;
  /** Rows per FETCH when the export reads one cursor. */
  cursorBatch?: number;
}

/**
 * The statements a cursor export runs, in turn: every row matching the parameters, in the page
 * order, with the columns toRow reads (a row's keys, history ids and the like are not parsed for
 * nothing); exported for the benchmark's `psql \copy` baseline of the same SQL.
 */
export function inventoryExportQueries(ctx: ReportCtx, p: InventoryParams, snapshots: readonly SnapshotInfo[]): Array<{ sql: string; values: unknown[] }> {
  return exportQueries(ctx, p, rowInputs(p.kind).map((c) => `b.${c}`), snapshots);
}

/**
 * The export's statements. Sorted: one over every snapshot. In the default order (scope key,
 * snapshot, row key): one per snapshot in that order, each building, joining (presence, stops) and
 * filtering one snapshot's rows, so every join and sort holds one snapshot's rows, not all of
 * them (at 100,000 instances in 10 scopes the joins of the whole set spilled to disk and the final
 * sort of the wide rows did too), and each reads one scope (on Citus, one shard of each table).
 */
function exportQueries(ctx: ReportCtx, p: InventoryParams, select: readonly string[], snapshots: readonly SnapshotInfo[]): Array<{ sql: string; values: unknown[] }> {
  const spec = KINDS[p.kind];
  const statement = (source: SnapshotSource, order: string) => {
    const binds = new Binds();
    const base = baseSql(spec, binds, source, p.at, scopeOf(ctx));
    const where = conditions(spec, p, ctx, binds);
    const sql = `with ${base}
    select ${select.join(', ')} from b
    ${where.length ? `where ${where.join(' and ')}` : ''}
    order by ${order}`;
    return { sql, values: binds.values };
  };
  if (p.sort) return [statement(snapshots.map((s) => s.id), orderBy(orderingOf(spec, p)))];
  return inDefaultOrder(snapshots).map((snapshot) => statement(snapshot, 'b.row_key collate "C"'));
}

/**
 * The SQL of a row field as toRow gives it: a row stopped through cloudtally since its snapshot
 * shows the status now, not running, and (when priced) a cost of 0.
 */
function fieldSql(kind: InventoryKind, key: string): string {
  if (!KINDS[kind].columns.some((c) => c.key === key)) throw new Error(`inventory: no column ${key} in ${kind}`);
  if (!KINDS[kind].overridable) return `b.${key}`;
  switch (key) {
    case 'status':
      return '(case when b.stopped_since_snapshot then b.status_now else b.status end)';
    case 'running':
      return '(case when b.stopped_since_snapshot then false else b.running end)';
    case 'price_per_hour':
    case 'price_per_month':
      return `(case when b.stopped_since_snapshot and b.currency is not null then 0 else b.${key} end)`;
    default:
      return `b.${key}`;
  }
}

/**
 * The export as SQL for the database to write (report.ts ExportSql): every kind whose cells
 * toRow computes from the row alone (the ports' "last known" age is written in Node).
 */
function exportSql(ctx: ReportCtx, p: InventoryParams, snapshots: readonly SnapshotInfo[]): ExportSql | undefined {
  const csvCopy = ctx.db.csvCopy;
  if (!csvCopy || p.kind === 'ports') return undefined;
  return {
    queries: (select) => exportQueries(ctx, p, select((key) => fieldSql(p.kind, key)), snapshots).map(({ sql, values }) => ({ text: sql, values })),
    csvCopy,
  };
}

/**
 * Every row matching the parameters, in the page order. On Postgres: one query read through a
 * server-side cursor in batches of 2,000 (one plan, one pass, one snapshot of the data; memory
 * holds two batches). Where the database offers no cursor (PGlite, or `paged`): the keys in large
 * keyset pages (a query that reads only the sort columns, so sorting a snapshot's keys once serves
 * 20,000 rows), then the full rows in chunks of 1,000 looked up by key, the next chunk fetched
 * while one is sent. In the default order (scope, snapshot, row key) the pages go one snapshot at
 * a time, so each reads the rows of one snapshot rather than of every scope; the snapshots are
 * fixed when the export starts.
 */
export async function* inventoryRows(
  ctx: ReportCtx,
  params: InventoryParams,
  sizes: ExportSizes = { keyPage: EXPORT_KEY_PAGE, detailChunk: EXPORT_DETAIL_CHUNK },
  options: { paged?: boolean } = {},
  /** The snapshots to read (default: the latest, as of params.at, read when the export starts). */
  latest?: SnapshotInfo[],
): AsyncGenerator<Row> {
  const now = params.at ?? ctx.now;
  const snapshots = latest ?? (await latestSnapshots(ctx.db, KINDS[params.kind].snapshotKinds, params.at));
  const latestIds = snapshots.map((s) => s.id);
  if (ctx.db.cursorBatches && !options.paged) {
    for (const query of inventoryExportQueries(ctx, params, snapshots)) {
      for await (const batch of ctx.db.cursorBatches<Record<string, unknown>>(query.sql, query.values, sizes.cursorBatch ?? EXPORT_CURSOR_BATCH)) {
        for (const r of batch) yield toRow(params.kind, r, now, params.at !== undefined);
      }
    }
    return;
  }
  if (params.sort) {
    yield* exportBatches(ctx, params, sizes, latestIds);
    return;
  }
  for (const snapshot of inDefaultOrder(snapshots)) yield* exportBatches(ctx, params, sizes, [snapshot.id]);
}

async function* exportBatches(ctx: ReportCtx, params: InventoryParams, sizes: ExportSizes, snapshotIds: number[]): AsyncGenerator<Row> {
  const { terms } = orderingOf(KINDS[params.kind], params);
  const keys = keysetRows<unknown[]>(
    async (after, limit) => {
      const query = keysQuery(ctx, params, { limit, after: after ?? undefined, snapshotIds });
      return ctx.db.query<Record<string, unknown>>(query.sql, query.values);
    },
    (row) => terms.map((_, i) => keyValue(row[`__k${i}`])),
    sizes.keyPage,
  );
  for await (const r of detailRows(keys, (chunk) => detailsInOrder(ctx.db, params, chunk), sizes.detailChunk)) yield toRow(params.kind, r, params.at ?? ctx.now, params.at !== undefined);
}

/** Keyset values travel as text and are cast back in SQL (Dates as ISO instants). */
function keyValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value === null || value === undefined) return null;
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

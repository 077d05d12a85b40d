/**
 * A cost export in the FinOps FOCUS 1.2 column layout: one row per priced resource per UTC day of
 * the period, with the day's cost integrated from the snapshots (each snapshot's run-rate times
 * the time it holds, gaps capped: the same rule as every other cost figure). Own columns carry
 * the `x_` prefix. These are estimates from snapshots, not invoice lines.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { versionedTable } from '../db/versions.js';
import { gapCapsFor } from '../costing/gap-caps.js';
import { pricePieces, type PricePiece } from '../costing/price-pieces.js';
import { PRICED_KINDS, pricedResourcesSql, type PricedKind } from '../costing/pricing.js';
import { pricedSnapshotsSql, snapshotSourcesSql, SOURCES } from '../costing/snapshot-sources.js';
import { scopeOf } from './shared/access-scope.js';
import { tagsInScopeSql } from '../db/access-scope-sql.js';
import type { Column, DatasetMetadata, Row } from './report.js';
import { addDays, monthBounds } from './shared/format.js';
import { idParam } from './shared/params.js';
import { periodCoverage } from './shared/coverage.js';
import { checkPeriodParams, periodField, periodParamShape, resolvePeriod, type ResolvedPeriod } from './shared/period.js';
import { latestSnapshots } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { dailyCostsFor, dividedOnce } from '../costing/cost-over-time.js';
import { gapCapText } from './shared/time.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';
import { totalRow } from './shared/totals.js';
import { scopeFilterFields } from './shared/fields.js';
import { regionNames } from './shared/regions.js';
import { reportMetadataUrl } from '../present/urls.js';
import type { OriginalTag } from '../db/schema.js';
import { FOOTING_CHUNK, RowFooting, type Weighed } from './focus-footing.js';

export const focusParams = z.strictObject({
  ...periodParamShape,
  kind: z.enum(PRICED_KINDS, { error: `kind must be one of ${PRICED_KINDS.join(', ')}` }).optional(),
  project: idParam('project'),
  region: idParam('region'),
}).superRefine(checkPeriodParams);
export type FocusParams = z.infer<typeof focusParams>;

const BATCH = 2_000;

/**
 * Service columns per priced kind. ServiceCategory is "Compute" for all three: FOCUS files virtual,
 * containerized and high-performance computing infrastructure there, and these are machines and
 * clusters rented by the hour whatever runs on them; "AI and Machine Learning" is for AI platform
 * services (managed training, models, inference endpoints), which cloudtally does not price.
 */
const SERVICE: Record<PricedKind, {
  name: string;
  type: string;
  subcategory: string;
  sku: (flavor: string) => string;
  /** One published unit price: the flavor's hourly price in its project and region (the catalogue it is listed in); a Kubernetes cluster's own price. */
  skuPrice: (scopeKey: string, flavor: string, resourceId: string) => string;
  meter: string;
  /** FOCUS-defined SKU price properties known of the flavor; null when none is. */
  details: (flavor: string, gpus: number | null) => Record<string, string | number> | null;
}> = {
  instance: { name: 'GPU Instances', type: 'GPU Instance', subcategory: 'Virtual Machines', sku: (f) => f, skuPrice: (s, f) => `${s}/${f}`, meter: 'GPU Instance Hours', details: flavorDetails },
  // FOCUS has no bare metal subcategory.
  cluster: { name: 'Bare Metal GPU Clusters', type: 'Bare Metal GPU Cluster', subcategory: 'Other (Compute)', sku: (f) => f, skuPrice: (s, f) => `${s}/${f}`, meter: 'GPU Server Hours', details: flavorDetails },
  k8s_price: { name: 'Managed Kubernetes', type: 'Kubernetes Cluster', subcategory: 'Containers', sku: () => 'k8s-cluster', skuPrice: (s, _f, id) => `${s}/k8s-cluster/${id}`, meter: 'Kubernetes Cluster Hours', details: () => null },
};

/** A flavor's SKU price properties: its name and, when its hardware description says, GPUs per unit. */
function flavorDetails(flavor: string, gpus: number | null): Record<string, string | number> {
  return { F_InstanceType: flavor, ...(gpus === null ? {} : { F_GpuCount: gpus }) };
}

/** Where each kind's resource ids live (the versioned table's view and its id), for bounding a batch of ids (trusted constants). */
const ID_SOURCE: Record<PricedKind, { table: string; id: string }> = {
  instance: { table: 'instances', id: 'instance_id' },
  cluster: { table: 'gpu_clusters', id: 'cluster_id' },
  k8s_price: { table: 'k8s_cluster_prices', id: 'cluster_name' },
};

const money = (key: string, hourly = false): Column => ({ key, label: key, kind: 'money', currencyKey: 'BillingCurrency', ...(hourly ? { hourly } : {}) });
const text = (key: string): Column => ({ key, label: key, kind: 'text' });

const timestamp = (key: string): Column => ({ key, label: key, kind: 'timestamp' });
const decimal = (key: string): Column => ({ key, label: key, kind: 'decimal' });

/** The 21 columns FOCUS 1.2 makes mandatory, in the spec's alphabetical order. */
export const FOCUS_MANDATORY_COLUMNS = [
  'BilledCost',
  'BillingAccountId',
  'BillingAccountName',
  'BillingCurrency',
  'BillingPeriodEnd',
  'BillingPeriodStart',
  'ChargeCategory',
  'ChargeClass',
  'ChargeDescription',
  'ChargePeriodEnd',
  'ChargePeriodStart',
  'ContractedCost',
  'EffectiveCost',
  'InvoiceIssuerName',
  'ListCost',
  'PricingQuantity',
  'PricingUnit',
  'ProviderName',
  'PublisherName',
  'ServiceCategory',
  'ServiceName',
] as const;

/** What the HTML table shows by default (the rest behind "More columns"); CSV and JSON carry every column. */
const FOCUS_SHOWN = new Set(['ResourceName', 'ResourceType', 'RegionName', 'ChargePeriodStart', 'BilledCost', 'BillingCurrency', 'Tags']);

export const FOCUS_COLUMNS: Column[] = (<Column[]>[
  money('BilledCost'),
  text('BillingAccountId'),
  text('BillingAccountName'),
  text('BillingCurrency'),
  timestamp('BillingPeriodEnd'),
  timestamp('BillingPeriodStart'),
  text('ChargeCategory'),
  text('ChargeClass'),
  text('ChargeDescription'),
  timestamp('ChargePeriodEnd'),
  timestamp('ChargePeriodStart'),
  money('ContractedCost'),
  money('EffectiveCost'),
  text('InvoiceIssuerName'),
  money('ListCost'),
  decimal('PricingQuantity'),
  text('PricingUnit'),
  text('ProviderName'),
  text('PublisherName'),
  text('ServiceCategory'),
  text('ServiceName'),
  // Conditional and recommended FOCUS columns this data can fill.
  text('ChargeFrequency'),
  text('ServiceSubcategory'),
  text('ResourceId'),
  text('ResourceName'),
  text('ResourceType'),
  text('RegionId'),
  text('RegionName'),
  text('SubAccountId'),
  text('SubAccountName'),
  text('SkuId'),
  text('SkuPriceId'),
  text('SkuMeter'),
  { key: 'SkuPriceDetails', label: 'SkuPriceDetails', kind: 'tags' },
  decimal('ConsumedQuantity'),
  text('ConsumedUnit'),
  money('ListUnitPrice', true),
  money('ContractedUnitPrice', true),
  { key: 'Tags', label: 'Tags', kind: 'tags' },
  // cloudtally's own columns (FOCUS custom columns carry the x_ prefix).
  { key: 'x_NormalizedTags', label: 'x_NormalizedTags', kind: 'tags' },
  text('x_ScopeKey'),
  text('x_ResourceKind'),
  { key: 'x_Snapshots', label: 'x_Snapshots', kind: 'int' },
  text('x_CostSource'),
]).map((c) => ({ ...c, ...(FOCUS_SHOWN.has(c.key) ? {} : { secondary: true }), ...(c.key === 'ResourceName' ? { identifies: true } : {}) }));

/** The FOCUS version whose columns and rules the export follows. */
export const FOCUS_VERSION = '1.2';

/**
 * When the export's schema took its current form (FOCUS metadata CreationDate). Change it with the
 * columns: the schema id follows the columns by itself, and a test pins it.
 */
const FOCUS_SCHEMA_CREATED = '2026-11-28T00:00:00Z';

/** FOCUS metadata data types of the export's column kinds. */
function focusDataType(kind: Column['kind']): string {
  switch (kind) {
    case 'money':
    case 'decimal':
    case 'int':
      return 'DECIMAL';
    case 'timestamp':
      return 'DATETIME';
    case 'tags':
      return 'JSON';
    default:
      return 'STRING';
  }
}

/** A UUID (version 8: custom) derived from `text`, so the same schema always has the same id. */
function uuidOf(text: string): string {
  const hex = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32).split('');
  hex[12] = '8';
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The FOCUS metadata of the export (FOCUS's Schema object: SchemaId, FocusVersion, CreationDate and
 * one ColumnDefinition per column), readable without the rows: the JSON at
 * /api/reports/focus/metadata, its version and schema id in headers of every answer, and a file
 * beside every scheduled delivery.
 */
export function focusMetadata(columns: readonly Column[]): DatasetMetadata {
  const definitions = columns.map((c) => ({ ColumnName: c.key, DataType: focusDataType(c.kind) }));
  const schemaId = uuidOf(JSON.stringify({ FocusVersion: FOCUS_VERSION, ColumnDefinition: definitions }));
  return {
    headers: { 'X-FOCUS-Version': FOCUS_VERSION, 'X-FOCUS-Schema-Id': schemaId },
    document: {
      DataGenerator: { DataGenerator: 'cloudtally' },
      Schema: [{ SchemaId: schemaId, FocusVersion: FOCUS_VERSION, CreationDate: FOCUS_SCHEMA_CREATED, ColumnDefinition: definitions }],
    },
  };
}

/** FOCUS date/time format: 'YYYY-MM-DDTHH:mm:ssZ' (UTC, whole seconds). */
export function focusDateTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

interface Period {
  fromDay: string;
  toDay: string;
}

/** The days of the export: the shared period (default month to date), up to today. */
function periodOf(ctx: ReportCtx, p: FocusParams): Period & { resolved: ResolvedPeriod } {
  const resolved = resolvePeriod(p, ctx.now);
  return { fromDay: resolved.fromDay, toDay: resolved.lastDay, resolved };
}

/**
 * The export's total per currency: the same daily integration the rows are cut from (the rows of a
 * day add up to it), summed in SQL.
 */
async function periodTotals(ctx: ReportCtx, p: FocusParams, period: Period): Promise<Array<{ currency: string; cost: string }>> {
  if (scopeOf(ctx)) return scopedTotals(ctx, p);
  const days = await dailyCostsFor(ctx.db, ctx.config, ctx.now, 'kind', period.fromDay, period.toDay, { kind: p.kind, projectId: p.project, regionId: p.region });
  const priced = days.filter((d) => d.currency !== null && d.price_seconds !== null);
  if (priced.length === 0) return [];
  return ctx.db.query<{ currency: string; cost: string }>(
    `select currency, ${dividedOnce('sum(secs)')}::text as cost from unnest($1::text[], $2::numeric[]) as d(currency, secs)
     group by currency having sum(secs) > 0 order by currency`,
    [priced.map((d) => d.currency), priced.map((d) => d.price_seconds)],
  );
}

/**
 * A scoped user's totals: the daily aggregates hold every team's cost, so the scope's rows
 * themselves are summed (in SQL, exact), which is what the file adds up to.
 */
async function scopedTotals(ctx: ReportCtx, p: FocusParams): Promise<Array<{ currency: string; cost: string }>> {
  const currencies: string[] = [];
  const costs: string[] = [];
  for await (const row of focusRows(ctx, p)) {
    currencies.push(String(row.BillingCurrency));
    costs.push(String(row.BilledCost));
  }
  if (costs.length === 0) return [];
  return ctx.db.query<{ currency: string; cost: string }>(
    `select currency, trim_scale(sum(cost))::text as cost from unnest($1::text[], $2::numeric[]) as d(currency, cost)
     group by currency having sum(cost) > 0 order by currency`,
    [currencies, costs],
  );
}

interface Group {
  day: string;
  kind: PricedKind;
  scopeKey: string;
  pieces: PricePiece[];
}

/**
 * The pieces grouped per (day, kind, scope), in export order, after the filters, one day at a
 * time: the first page needs the first day's pieces only, not the integration of the whole
 * period (a day's pieces do not depend on the range they are read in).
 */
async function* groupsByDay(ctx: ReportCtx, p: FocusParams, period: Period): AsyncGenerator<Group[]> {
  const read = async (fromDay: string, toDay: string) =>
    (await pricePieces(ctx.db, { fromDay, toDay, now: ctx.now, maxGapHours: gapCapsFor(ctx.config) })).filter(
      (piece) => (!p.kind || piece.kind === p.kind) && (!p.project || piece.project_id === p.project) && (!p.region || piece.region_id === p.region),
    );
  // The first day alone, then the rest of the period in one read.
  const ranges: Array<[string, string]> = period.toDay > period.fromDay ? [[period.fromDay, period.fromDay], [addDays(period.fromDay, 1), period.toDay]] : [[period.fromDay, period.toDay]];
  for (const [fromDay, toDay] of ranges) {
    const byDay = new Map<string, Map<string, Group>>();
    for (const piece of await read(fromDay, toDay)) {
      const groups = byDay.get(piece.day) ?? new Map<string, Group>();
      const key = `${piece.kind}|${piece.scope_key}`;
      const group = groups.get(key) ?? { day: piece.day, kind: piece.kind, scopeKey: piece.scope_key, pieces: [] };
      group.pieces.push(piece);
      groups.set(key, group);
      byDay.set(piece.day, groups);
    }
    for (const groups of byDay.values()) yield [...groups.values()];
  }
}

/**
 * The upper bound of `group`'s next batch of resource ids after `after`: the `size`-th of the ids
 * that any of its snapshots can hold (the scope's versions current at some time between its first
 * and last snapshot, and the snapshots' kept rows), or null for "the rest". Each snapshot then
 * holds at most `size` resources of the batch. Read in order from the versions' primary key
 * (scope_key, id, ...), stopping at the `size`-th, rather than sorting all of them; one statement
 * with the scope as a constant, which Citus routes to the scope's shard.
 */
async function batchBound(ctx: ReportCtx, group: Group, after: string | null, size: number): Promise<string | null> {
  const source = ID_SOURCE[group.kind];
  const table = versionedTable(source.table);
  const id = `"${source.id}"`;
  const rows = await ctx.db.query<{ bound: string | null }>(
    `with s as (select min(taken_at) as first_at, max(taken_at) as last_at, bool_or(versioned) as versioned from snapshots where id = any($1::int[]))
     select u.id as bound from (
       (select distinct v.${id} as id from "${table.versions}" v, s
         where s.versioned and v.scope_key = $4 and v.valid_from <= s.last_at and coalesce(v.valid_to, 'infinity'::timestamptz) > s.first_at
           and ($2::text is null or v.${id} > $2)
         order by 1 limit $3::int + 1)
       union
       (select distinct t.${id} from "${table.kept}" t where t.snapshot_id = any($1::int[]) and ($2::text is null or t.${id} > $2) order by 1 limit $3::int + 1)
     ) u order by u.id offset $3 limit 1`,
    [[...new Set(group.pieces.map((x) => x.snapshot_id))], after, size - 1, group.scopeKey],
  );
  return rows[0]?.bound ?? null;
}

/**
 * Whether all of a group's rows fit in one batch of `size`: every one of its snapshots has fewer
 * rows (row_count, written with the snapshot's completion). Only decides how rows are read
 * together, never which: a group taken for small is read whole in one query.
 */
function fitsOneBatch(group: Group, size: number): boolean {
  return group.pieces.every((x) => x.row_count < size);
}

/**
 * The tags as the provider gave them (FOCUS passes tags on unaltered): the first of repeated keys,
 * and `true` for a tag without a value (FOCUS's rule for valueless tags).
 */
export function providerTags(original: readonly OriginalTag[] | null): Record<string, string | true> {
  const tags = Object.create(null) as Record<string, string | true>;
  for (const tag of original ?? []) if (!Object.hasOwn(tags, tag.key)) tags[tag.key] = tag.value ?? true;
  return { ...tags };
}

type SegmentSums = {
  scope_key: string;
  resource_id: string;
  currency: string;
  price_seconds: string;
  quantity_hours: string;
  unit_price: string;
  starts_at: Date | string;
  ends_at: Date | string;
  snapshots: number;
  last_id: number;
};

type SegmentDetails = {
  snapshot_id: number;
  resource_id: string;
  name: string | null;
  flavor: string;
  tags: Record<string, string>;
  tags_original: OriginalTag[] | null;
  project_id: number | null;
  region_id: number | null;
  region_name: string | null;
  gpus: number | null;
};

/**
 * One batch of rows of `groups` (one day and kind; several only with after and bound null): per
 * resource, currency and segment of the day its cost, ids in (after, bound], in the groups' order.
 * A segment is a stretch of time in which the resource ran without a break with the same tags (as
 * received and normalised), flavor and unit price: a retag or a new price starts a new row, so each
 * row carries one set of tags (the rows summed by a tag give the cost report by that tag) and one
 * published unit price (ListUnitPrice x PricingQuantity = ListCost).
 */
async function batchRows(ctx: ReportCtx, groups: readonly Group[], after: string | null, bound: string | null): Promise<Unfooted[]> {
  const { day, kind } = groups[0]!;
  const pieces = groups.flatMap((g) => g.pieces);
  const scope = scopeOf(ctx);
  // The sums over narrow rows, then each segment's details from its last snapshot by index
  // lookups (carrying names through the aggregation would make it sort wider rows).
  const sums = await ctx.db.query<SegmentSums>(
    `with p as (select * from unnest($1::int[], $2::numeric[], $3::text[], $6::timestamptz[], $7::timestamptz[]) as p(id, secs, currency, starts_at, ends_at)),
      latest as (${pricedSnapshotsSql('(select id from p)')}),
      ${snapshotSourcesSql(kind, { many: 'latest' }, { resources: '($4::text is null or $id > $4) and ($5::text is null or $id <= $5)', materialized: true })},
      held as (
        select x.scope_key, x.resource_id, x.snapshot_id, x.taken_at, x.currency, x.unit_price_per_hour, x.flavor, x.tags, x.tags_original,
          x.price_per_hour, x.quantity, p.secs, p.starts_at, p.ends_at
        from (${pricedResourcesSql('latest', [kind], { sources: SOURCES })}) x
        join p on p.id = x.snapshot_id and (p.currency is null or p.currency = x.currency)
        where x.currency is not null and x.price_per_hour > 0
          and ($8::text is null or ${tagsInScopeSql('x.tags', '$8::text', '$9::text[]')})
      ),
      marked as (
        select h.*, case when lag(h.ends_at) over w >= h.starts_at - interval '1 millisecond'
            and lag(h.currency) over w = h.currency and lag(h.unit_price_per_hour) over w = h.unit_price_per_hour
            and lag(h.flavor) over w = h.flavor and lag(h.tags) over w = h.tags and lag(h.tags_original) over w = h.tags_original
          then 0 else 1 end as starts
        from held h
        window w as (partition by h.scope_key, h.resource_id order by h.starts_at, h.snapshot_id)
      ),
      segments as (
        select m.*, sum(m.starts) over (partition by m.scope_key, m.resource_id order by m.starts_at, m.snapshot_id rows unbounded preceding) as segment
        from marked m
      )
     select scope_key, resource_id, currency, min(unit_price_per_hour)::text as unit_price,
       trim_scale(sum(price_per_hour * secs))::text as price_seconds,
       ${dividedOnce('sum(quantity * secs)')}::text as quantity_hours,
       min(starts_at) as starts_at, max(ends_at) as ends_at,
       count(*)::int as snapshots,
       (max(array[extract(epoch from taken_at), snapshot_id]))[2]::int as last_id
     from segments
     group by scope_key, resource_id, currency, segment
     order by resource_id, min(starts_at), currency`,
    [pieces.map((x) => x.snapshot_id), pieces.map((x) => x.secs), pieces.map((x) => x.currency), after, bound, pieces.map((x) => x.starts_at), pieces.map((x) => x.ends_at), scope?.key ?? null, scope ? [...scope.values] : null],
  );
  if (sums.length === 0) return [];
  const position = new Map(groups.map((group, index) => [group.scopeKey, { group, index }]));
  // The groups' order (scopes as pricePieces sorted them), ids in the database's order within each.
  const sorted = groups.length === 1 ? sums : [...sums].sort((a, b) => position.get(a.scope_key)!.index - position.get(b.scope_key)!.index);
  const details = await ctx.db.query<SegmentDetails>(
    `with latest as (${pricedSnapshotsSql('(select unnest($1::int[]))')}),
      ${snapshotSourcesSql(kind, { many: 'latest' }, { resources: '$id = any($2::text[])', materialized: true })}
     select x.snapshot_id, x.resource_id, x.name, x.flavor, x.tags, x.tags_original, x.project_id, x.region_id, x.region_name, x.gpus
     from (${pricedResourcesSql('latest', [kind], { sources: SOURCES })}) x`,
    [[...new Set(sums.map((r) => r.last_id))], [...new Set(sums.map((r) => r.resource_id))]],
  );
  const detail = new Map(details.map((d) => [`${d.snapshot_id}|${d.resource_id}`, d]));
  const found = sorted.map((r) => {
    const d = detail.get(`${r.last_id}|${r.resource_id}`);
    if (!d) throw new Error(`focus: resource ${r.resource_id} is missing from snapshot ${r.last_id} it was just read from`);
    return { ...r, ...d };
  });
  // Records without a region name (Kubernetes prices never carry one) take their region's name from
  // the instances and clusters collected there.
  const unnamed = [...new Set(found.filter((r) => !r.region_name && r.region_id !== null).map((r) => r.region_id!))];
  const names = await regionNames(ctx.db, unnamed);
  const service = SERVICE[kind];
  const focus = ctx.config.focus;
  // The billing period is the calendar month holding the charge (end-exclusive).
  const month = monthBounds(new Date(`${day}T00:00:00Z`));
  return found.map((r) => {
    const { group } = position.get(r.scope_key)!;
    const unit = String(r.unit_price);
    const flavor = String(r.flavor);
    const row: Row = {
      BilledCost: null,
      BillingAccountId: focus.billingAccountId,
      BillingAccountName: focus.billingAccountName,
      BillingCurrency: r.currency,
      BillingPeriodEnd: focusDateTime(month.end),
      BillingPeriodStart: focusDateTime(month.start),
      ChargeCategory: 'Usage',
      // Null: no row is a correction of an invoiced billing period.
      ChargeClass: null,
      ChargeDescription: `${service.type} ${r.name ?? r.resource_id}, ${flavor}, estimated from snapshots`,
      // FOCUS gives whole seconds: a stretch's start rounds down and its end up, so a stretch
      // shorter than a second (two collections within one second) still has start < end.
      ChargePeriodEnd: focusDateTime(new Date(Math.ceil(new Date(r.ends_at).getTime() / 1000) * 1000)),
      ChargePeriodStart: focusDateTime(new Date(r.starts_at)),
      // List prices, no discounts known: every cost column is the same amount (set by the footing).
      ContractedCost: null,
      EffectiveCost: null,
      InvoiceIssuerName: focus.invoiceIssuerName,
      ListCost: null,
      PricingQuantity: r.quantity_hours,
      PricingUnit: 'Hours',
      ProviderName: focus.providerName,
      PublisherName: focus.publisherName,
      ServiceCategory: 'Compute',
      ServiceName: service.name,
      ChargeFrequency: 'Usage-Based',
      ServiceSubcategory: service.subcategory,
      ResourceId: group.kind === 'k8s_price' ? `${group.scopeKey}/${r.resource_id}` : r.resource_id,
      ResourceName: r.name,
      ResourceType: service.type,
      RegionId: r.region_id === null ? null : String(r.region_id),
      RegionName: r.region_name || (r.region_id === null ? null : (names[String(r.region_id)] ?? null)),
      SubAccountId: r.project_id === null ? null : String(r.project_id),
      SubAccountName: r.project_id === null ? null : `project ${r.project_id}`,
      SkuId: service.sku(flavor),
      SkuPriceId: service.skuPrice(group.scopeKey, flavor, r.resource_id),
      SkuMeter: service.meter,
      SkuPriceDetails: service.details(flavor, r.gpus),
      ConsumedQuantity: r.quantity_hours,
      ConsumedUnit: 'Hours',
      ListUnitPrice: unit,
      ContractedUnitPrice: unit,
      // As received; a Kubernetes cluster's are the configuration's (the API gives none), as given there.
      Tags: providerTags(r.tags_original),
      x_NormalizedTags: r.tags ?? {},
      x_ScopeKey: group.scopeKey,
      x_ResourceKind: group.kind,
      x_Snapshots: r.snapshots,
      x_CostSource: group.pieces.some((x) => x.currency !== null) ? 'estimate (sealed daily total)' : 'estimate (snapshots)',
    };
    return { row, currency: r.currency, priceSeconds: String(r.price_seconds) };
  });
}

/** A row read, before its cost is footed (focus-footing.ts). */
interface Unfooted extends Weighed {
  row: Row;
}

/** The rows of `chunk` with their footed cost in every cost column (list prices, no discounts known: one amount). */
function footed(footing: RowFooting, chunk: readonly Unfooted[]): Row[] {
  const costs = footing.foot(chunk);
  return chunk.map(({ row }, i) => ({ ...row, BilledCost: costs[i]!, ContractedCost: costs[i]!, EffectiveCost: costs[i]!, ListCost: costs[i]! }));
}

/**
 * Every row of the period in order, its costs footed (focus-footing.ts): the rows of the file add
 * up, per currency, to the period's total exactly. The footing goes by chunks of rows in the
 * file's order, not by the batches they are read in, so any batch size gives the same figures.
 */
export async function* focusRows(ctx: ReportCtx, p: FocusParams, batch = BATCH): AsyncGenerator<Row> {
  const footing = new RowFooting();
  let chunk: Unfooted[] = [];
  for await (const row of unfootedRows(ctx, p, batch)) {
    chunk.push(row);
    if (chunk.length === FOOTING_CHUNK) {
      yield* footed(footing, chunk);
      chunk = [];
    }
  }
  yield* footed(footing, chunk);
}

/**
 * focusRows before the footing of their costs: day by day, the groups (kind, scope), then
 * id-bounded batches within each group. Consecutive groups of a kind that fit in one batch each
 * are read together (the many small cluster and Kubernetes groups of a day: two queries instead of
 * three per group).
 */
async function* unfootedRows(ctx: ReportCtx, p: FocusParams, batch: number): AsyncGenerator<Unfooted> {
  const period = periodOf(ctx, p);
  for await (const groups of groupsByDay(ctx, p, period)) {
    for (let i = 0; i < groups.length; ) {
      let j = i;
      while (j < groups.length && fitsOneBatch(groups[j]!, batch) && groups[j]!.kind === groups[i]!.kind) j++;
      if (j > i) {
        yield* await batchRows(ctx, groups.slice(i, j), null, null);
        i = j;
        continue;
      }
      const group = groups[i++]!;
      let after: string | null = null;
      for (;;) {
        const bound = await batchBound(ctx, group, after, batch);
        if (bound !== null && bound === after) throw new Error(`focus: the batch bound of ${group.kind} ${group.scopeKey} on ${group.day} did not advance past ${after}`);
        yield* await batchRows(ctx, [group], after, bound);
        if (bound === null) break;
        after = bound;
      }
    }
  }
}

async function pageOfRows(ctx: ReportCtx, params: FocusParams, page: { limit: number; offset: number }): Promise<Row[]> {
  const rows: Row[] = [];
  let skipped = 0;
  // Batches sized to the page, so the first page reads only the first resources of the first day.
  for await (const row of focusRows(ctx, params, Math.min(BATCH, Math.max(100, page.offset + page.limit)))) {
    if (skipped < page.offset) {
      skipped++;
      continue;
    }
    rows.push(row);
    if (rows.length >= page.limit) break;
  }
  return rows;
}

export const focusReport: Report<FocusParams> = defineReport({
  name: 'focus',
  title: 'FOCUS cost export',
  description: 'Estimated cost per resource and day in the FinOps FOCUS 1.2 column layout, for loading next to invoices.',
  section: 'cost',
  params: focusParams,
  datasetMetadata: focusMetadata(FOCUS_COLUMNS),

  async run(ctx, params, page) {
    const period = periodOf(ctx, params);
    // The page's rows are read while the totals and the coverage are summed.
    const [snapshots, totals, coverage, rows] = await Promise.all([
      latestSnapshots(ctx.db, PRICED_KINDS),
      periodTotals(ctx, params, { fromDay: period.fromDay, toDay: period.toDay }),
      periodCoverage(ctx, period.resolved),
      pageOfRows(ctx, params, page),
    ]);
    return {
      title: `FOCUS cost export, ${period.fromDay} to ${period.toDay}`,
      summary: [
        { label: 'From', value: period.fromDay, kind: 'date' },
        { label: 'To', value: period.toDay, kind: 'date' },
        ...totals.map((t) => ({ label: `BilledCost (${t.currency})`, value: t.cost, kind: 'money' as const, currency: t.currency, hint: 'the sum of every row of the export' })),
      ],
      charts: [],
      columns: FOCUS_COLUMNS,
      rows,
      totalRows: null,
      // The costs of every row of the period (BilledCost = EffectiveCost = ListCost = ContractedCost).
      totals: totals.map((t) => totalRow(FOCUS_COLUMNS, { BillingCurrency: t.currency, BilledCost: t.cost, EffectiveCost: t.cost, ListCost: t.cost, ContractedCost: t.cost })),
      coverage,
      notes: [
        ...freshnessNotes(ctx.now, snapshots, 'priced resources'),
        `Estimated cost, not invoice data: each resource's hourly price from the collected flavor prices, held from one snapshot to the next (${gapCapText(ctx.config)} capped, not extrapolated), summed per UTC day. BilledCost = EffectiveCost = ListCost = ContractedCost.`,
        'One row per priced resource and unbroken stretch of a day with the same tags and unit price (a retag, a new price or a gap starts a new row; ChargePeriodStart/End say which stretch), with a cost above zero; stopped resources cost nothing and resources without a known price are left out (see the overview\'s coverage). Tags are the provider\'s, x_NormalizedTags what cloudtally groups by. Columns starting with x_ are cloudtally\'s own.',
        `FOCUS ${FOCUS_VERSION}: the schema (columns and types) is at ${reportMetadataUrl('focus')}.`,
        'Days whose hourly detail was thinned by retention are spread over the resources of the day\'s last snapshot so that they add up to the stored daily cost (x_CostSource says which).',
      ],
    };
  },

  async export(ctx, params) {
    const period = periodOf(ctx, params);
    // A file for FOCUS tools: exact costs (rounded rows would not add up to the period's cost) and
    // no "Total" rows, which a tool would load as charges and count twice.
    return { columns: FOCUS_COLUMNS, rows: focusRows(ctx, params), exactMoney: true, coverage: await periodCoverage(ctx, period.resolved) };
  },

  scoped: true,
  async filters(ctx, params) {
    return [
      periodField(params, ctx.now),
      {
        name: 'kind',
        label: 'Resource kind',
        type: 'select',
        value: params.kind ?? '',
        options: [{ value: '', label: 'All kinds' }, ...PRICED_KINDS.map((k) => ({ value: k, label: SERVICE[k].name }))],
      },
      ...(await scopeFilterFields(ctx.db, params)),
    ];
  },
}, { cached: true });

/**
 * The GPU flavor catalogue per scope (latest complete flavor snapshot): prices, capacity,
 * disabled, and how many priced resources use each flavor; plus how a chosen flavor's price and
 * capacity moved over time.
 */
import { z } from 'zod';
import { PRICED_KINDS, pricedResourcesSql } from '../costing/pricing.js';
import { pricedSnapshotsSql, snapshotSourcesSql, SOURCES } from '../costing/snapshot-sources.js';
import { tagsInScopeSql } from '../db/access-scope-sql.js';
import { scopeOf } from './shared/access-scope.js';
import { gpuCountSql } from '../db/gpu-count.js';
import type { ChartSpec, Column, Row } from './report.js';
import { offsetRows } from './shared/batches.js';
import { addDays, chartNumber, isoDay } from './shared/format.js';
import { appUrl } from './shared/links.js';
import { dirParam, idParam, intParam, sortParam, textParam } from './shared/params.js';
import { latestSnapshotIds, latestSnapshots, snapshotsByIdSql } from '../db/latest-snapshots.js';
import { viewRowsSql } from '../db/versions.js';
import { freshnessNotes } from './shared/snapshots.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';
import { scopeFilterFields } from './shared/fields.js';

const SORTS = ['scope', 'flavor_name', 'price_per_hour', 'price_per_month', 'capacity', 'in_use', 'disabled'] as const;

export const flavorsParams = z.strictObject({
  project: idParam('project'),
  region: idParam('region'),
  /** Flavor name whose history the charts show (default: the most used one). */
  flavor: textParam('flavor'),
  days: intParam('days', 1, 366).default(30),
  sort: sortParam(SORTS),
  dir: dirParam,
});
export type FlavorsParams = z.infer<typeof flavorsParams>;

const ORDER: Record<(typeof SORTS)[number], string> = {
  scope: 'scope_key',
  flavor_name: "coalesce(flavor_name, '')",
  price_per_hour: 'coalesce(price_per_hour, -1)',
  price_per_month: 'coalesce(price_per_month, -1)',
  capacity: 'coalesce(capacity, -1)',
  in_use: 'in_use',
  disabled: 'disabled',
};

/**
 * Resources using each flavor per scope: the rollups' counts, or for a scoped user ($7 key, $8
 * values) the scope's resources counted from the priced resources themselves.
 */
function inUseSql(scoped: boolean): string {
  return scoped
    ? `select r.scope_key, r.flavor as group_value, count(*)::int as n
        from (${pricedResourcesSql('priced', ['instance', 'cluster'], { sources: SOURCES })}) r
        where ${tagsInScopeSql('r.tags', '$7::text', '$8::text[]')}
        group by r.scope_key, r.flavor`
    : `select r.scope_key, r.group_value, sum(r.resource_count)::int as n
        from cost_rollups r join priced l on l.id = r.snapshot_id
        where r.dimension = 'flavor' and r.kind in ('instance', 'cluster')
        group by r.scope_key, r.group_value`;
}

function catalogueSql(p: FlavorsParams, scoped: boolean): string {
  const dir = p.dir ?? (p.sort && !['scope', 'flavor_name'].includes(p.sort) ? 'desc' : 'asc');
  const order = p.sort ? `${ORDER[p.sort]} ${dir}, scope_key, flavor_id` : 'scope_key, coalesce(flavor_name, flavor_id), flavor_id';
  return `with latest as (${snapshotsByIdSql('$1')}),
      priced as (${pricedSnapshotsSql('(select unnest($2::int[]))')}),${scoped ? `
      ${snapshotSourcesSql(['instance', 'cluster'], { many: 'priced' })},` : ''}
      in_use as (${inUseSql(scoped)}),
      rows as (
        select l.scope_key, coalesce(f.project_id, l.project_id) as project_id, coalesce(f.region_id, l.region_id) as region_id,
          f.flavor_id, f.flavor_name, f.disabled, f.capacity, upper(f.currency_code) as currency, f.price_per_hour, f.price_per_month,
          f.price_status, f.resource_class, f.hardware ->> 'gpu' as gpu, ${gpuCountSql(`f.hardware ->> 'gpu'`)} as gpu_count, f.hardware, coalesce(u.n, 0) as in_use, l.taken_at
        from latest l join ${viewRowsSql('gpu_flavors', snapshotsByIdSql('$1'))} f on f.snapshot_id = l.id
        left join in_use u on u.scope_key = l.scope_key and u.group_value = f.flavor_name
        where ($3::int is null or coalesce(f.project_id, l.project_id) = $3) and ($4::int is null or coalesce(f.region_id, l.region_id) = $4)
      )
      select *, count(*) over ()::int as total_rows,
        -- As the cost model reads a flavor: without a currency or any price, it prices nothing.
        (count(*) filter (where currency is null or coalesce(price_per_hour, price_per_month) is null) over ())::int as unpriced_rows
      from rows order by ${order} limit $5 offset $6`;
}

/**
 * The snapshots a catalogue reads, read once per request or export: the latest flavor snapshots,
 * and the latest priced ones (whose resources are counted as in use). Read before the statement:
 * Citus refuses the recursive walk in a statement over sharded tables.
 */
interface CatalogueSnapshots {
  flavorIds: number[];
  pricedIds: number[];
}

async function catalogueSnapshots(ctx: ReportCtx, flavorIds: number[]): Promise<CatalogueSnapshots> {
  return { flavorIds, pricedIds: await latestSnapshotIds(ctx.db, PRICED_KINDS) };
}

/** A page of the catalogues of the flavor snapshots. */
async function catalogue(ctx: ReportCtx, p: FlavorsParams, snaps: CatalogueSnapshots, limit: number, offset: number): Promise<{ rows: Row[]; total: number; unpriced: number }> {
  const scope = scopeOf(ctx);
  const found = await ctx.db.query<Record<string, unknown>>(catalogueSql(p, scope !== null), [
    snaps.flavorIds, snaps.pricedIds, p.project ?? null, p.region ?? null, limit, offset, ...(scope ? [scope.key, [...scope.values]] : []),
  ]);
  return {
    rows: found.map((r) => ({
      scope: r.scope_key,
      project_id: r.project_id,
      region_id: r.region_id,
      flavor_id: r.flavor_id,
      flavor_name: r.flavor_name,
      gpu: r.gpu,
      gpu_count: r.gpu_count,
      disabled: r.disabled,
      capacity: r.capacity,
      currency: r.currency,
      price_per_hour: r.price_per_hour,
      price_per_month: r.price_per_month,
      price_status: r.price_status,
      resource_class: r.resource_class,
      in_use: r.in_use,
      hardware: r.hardware,
      history_href: appUrl('/reports/flavors', { flavor: String(r.flavor_name ?? r.flavor_id), project: p.project, region: p.region, days: p.days }),
      in_use_href: appUrl('/reports/inventory', { kind: 'resources', flavor: String(r.flavor_name ?? r.flavor_id), project: Number(r.project_id) || undefined, region: Number(r.region_id) || undefined }),
    })),
    total: Number(found[0]?.total_rows ?? 0),
    unpriced: Number(found[0]?.unpriced_rows ?? 0),
  };
}

const COLUMNS: Column[] = [
  { key: 'scope', label: 'Scope', kind: 'text', sortable: true },
  { key: 'flavor_name', label: 'Flavor', kind: 'text', hrefKey: 'history_href', sortable: true },
  { key: 'flavor_id', label: 'Flavor ID', kind: 'text', secondary: true },
  { key: 'gpu', label: 'GPU', kind: 'text' },
  /** Read from the GPU description (db/gpu-count.ts): empty when it cannot be read, never 0. */
  { key: 'gpu_count', label: 'GPUs', kind: 'int' },
  { key: 'disabled', label: 'Disabled', kind: 'bool', sortable: true },
  { key: 'capacity', label: 'Capacity', kind: 'int', sortable: true },
  { key: 'price_per_hour', label: 'Price per hour', kind: 'money', currencyKey: 'currency', hourly: true, sortable: true },
  { key: 'price_per_month', label: 'Price per month', kind: 'money', currencyKey: 'currency', sortable: true },
  { key: 'currency', label: 'Currency', kind: 'text', secondary: true },
  { key: 'price_status', label: 'Price status', kind: 'text' },
  { key: 'in_use', label: 'Resources using it', kind: 'int', hrefKey: 'in_use_href', sortable: true },
  { key: 'resource_class', label: 'Resource class', kind: 'text', secondary: true },
  { key: 'hardware', label: 'Hardware', kind: 'json', secondary: true },
];

/** The flavor snapshots of the history: from $1 to $2, of project $4 and region $5 when given. */
const HISTORY_SNAPSHOTS = `(select id, kind, scope_key, taken_at, versioned from snapshots s
  where s.complete and s.kind = 'flavor' and s.taken_at >= $1::date and s.taken_at <= $2
    and ($4::int is null or s.project_id = $4) and ($5::int is null or s.region_id = $5))`;

/** Price per hour and capacity of one flavor name over time, one series per scope. */
async function historyCharts(ctx: ReportCtx, p: FlavorsParams, flavor: string): Promise<ChartSpec[]> {
  const from = addDays(isoDay(ctx.now), -(p.days - 1));
  const rows = await ctx.db.query<{ scope_key: string; taken_at: Date; price_per_hour: string | null; capacity: number | null; currency: string | null }>(
    `select s.scope_key, s.taken_at, f.price_per_hour, f.capacity, upper(f.currency_code) as currency
     from ${viewRowsSql('gpu_flavors', HISTORY_SNAPSHOTS, ['flavor_name', 'price_per_hour', 'capacity', 'currency_code'])} f join snapshots s on s.id = f.snapshot_id
     where f.flavor_name = $3
     order by s.taken_at, s.scope_key`,
    [from, ctx.now, flavor, p.project ?? null, p.region ?? null],
  );
  const labels = [...new Set(rows.map((r) => r.taken_at.toISOString().slice(0, 16).replace('T', ' ')))];
  const index = new Map(labels.map((l, i) => [l, i]));
  const series = (pick: (r: (typeof rows)[number]) => number | null, label: (scope: string, r: (typeof rows)[number]) => string, only = rows) => {
    const byScope = new Map<string, Array<number | null>>();
    for (const r of only) {
      const key = label(r.scope_key, r);
      const data = byScope.get(key) ?? labels.map(() => null);
      data[index.get(r.taken_at.toISOString().slice(0, 16).replace('T', ' '))!] = pick(r);
      byScope.set(key, data);
    }
    return [...byScope].map(([l, data]) => ({ label: l, data }));
  };
  // Prices: one chart per currency (scopes priced in EUR and in USD never share an axis).
  const currencies = [...new Set(rows.map((r) => r.currency).filter((c): c is string => c !== null))].sort();
  return [
    ...currencies.map(
      (currency): ChartSpec => ({
        id: `price-history-${currency}`,
        title: `Price per hour of ${flavor} (${currency})`,
        type: 'line',
        labels,
        datasets: series((r) => chartNumber(r.price_per_hour), (scope) => scope, rows.filter((r) => r.currency === currency)),
        valueLabel: `${currency} per hour`,
        currency,
      }),
    ),
    { id: 'capacity-history', title: `Capacity of ${flavor}`, type: 'line', labels, datasets: series((r) => r.capacity, (scope) => scope), valueLabel: 'available' },
  ];
}

export const flavorsReport: Report<FlavorsParams> = defineReport({
  name: 'flavors',
  title: 'GPU flavors',
  description: 'The GPU flavor catalogue per scope: prices, capacity, disabled, use; price and capacity history of a flavor.',
  section: 'inventory',
  params: flavorsParams,

  async run(ctx, params, page) {
    const snapshots = await latestSnapshots(ctx.db, ['flavor']);
    const snaps = await catalogueSnapshots(ctx, snapshots.map((s) => s.id));
    const table = await catalogue(ctx, params, snaps, page.limit, page.offset);
    let flavor = params.flavor;
    if (!flavor) {
      const all = await catalogue(ctx, { ...params, sort: 'in_use', dir: 'desc' }, snaps, 1, 0);
      flavor = (all.rows[0]?.flavor_name as string | undefined) ?? undefined;
    }
    return {
      title: params.flavor ? `GPU flavors: history of ${params.flavor}` : 'GPU flavors',
      summary: [
        { label: 'Flavors listed', value: table.total, kind: 'int' },
        { label: 'Without a price', value: table.unpriced, kind: 'int', hint: 'no currency or price: resources of these flavors are unpriced' },
      ],
      charts: flavor ? await historyCharts(ctx, params, flavor) : [],
      columns: COLUMNS,
      rows: table.rows,
      totalRows: table.total,
      notes: [
        ...freshnessNotes(ctx.now, snapshots, 'GPU flavors'),
        'A flavor without a price (price hidden) leaves every resource of that flavor unpriced: counted in coverage, never priced at zero.',
        'No totals: this is a price list, and a sum of prices is no amount anybody pays (the cost reports total what runs).',
      ],
    };
  },

  async export(ctx, params) {
    const snaps = await catalogueSnapshots(ctx, await latestSnapshotIds(ctx.db, ['flavor']));
    return { columns: COLUMNS, rows: offsetRows(async (limit, offset) => (await catalogue(ctx, params, snaps, limit, offset)).rows) };
  },

  scoped: true,
  async filters(ctx, params) {
    return [
      ...(await scopeFilterFields(ctx.db, params)),
      { name: 'flavor', label: 'History of flavor', type: 'text', value: params.flavor ?? '' },
      { name: 'days', label: 'History days', type: 'number', value: String(params.days) },
    ];
  },
}, { cached: true });

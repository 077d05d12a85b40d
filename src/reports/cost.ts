/**
 * Cost grouped by a tag key, project, region, resource kind, flavor or state: the current
 * run-rate per group and currency with its share of the currency's total, each number linking to
 * the inventory rows behind it.
 */
import { z } from 'zod';
import { PRICED_KINDS, type PricedKind } from '../db/cost-model.js';
import type { Column, Row } from './report.js';
import { offsetRows } from './shared/batches.js';
import { dimensionOf, GROUPING_HELP, groupingField, groupingParam, latestEffectiveCte, groupNameColumns, groupNames, latestEffectiveParams, latestGroupCosts, latestTotals, type CostFilter } from './shared/costs.js';
import { dimensionLabel, kindLabel } from './shared/format.js';
import { inventoryHref } from './shared/links.js';
import { dirParam, idParam, invalidParameter, sortParam } from './shared/params.js';
import { freshnessNotes, latestSnapshots } from './shared/snapshots.js';
import { runRateSummary, shareCharts } from './shared/summary.js';
import { runRateTotals } from './shared/totals.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';
import { pricedKindSelect, scopeFilterFields } from './shared/fields.js';

const SORTS = ['group', 'currency', 'price_per_hour', 'price_per_month', 'share', 'resources', 'unpriced'] as const;
type CostSort = (typeof SORTS)[number];

export const costParams = z.strictObject({
  by: groupingParam('tag:team'),
  kind: z.enum(PRICED_KINDS, { error: `kind must be one of ${PRICED_KINDS.join(', ')}` }).optional(),
  project: idParam('project'),
  region: idParam('region'),
  sort: sortParam(SORTS),
  dir: dirParam,
});
export type CostParams = z.infer<typeof costParams>;

const ORDER: Record<CostSort, string> = {
  group: 'group_value',
  currency: 'currency',
  price_per_hour: 'price_per_hour',
  price_per_month: 'price_per_month',
  share: 'share',
  resources: 'resources',
  unpriced: 'unpriced',
};

function filterOf(params: CostParams): CostFilter {
  return { kind: params.kind as PricedKind | undefined, projectId: params.project, regionId: params.region };
}

function resolveDimension(ctx: ReportCtx, params: CostParams): string {
  const dimension = dimensionOf(params.by, ctx.config);
  if (!dimension) throw invalidParameter('by', `by must be one of ${GROUPING_HELP}`);
  return dimension;
}

/** The one query behind the page, the JSON and the CSV: groups with their share, in the asked order. */
function costQuery(dimension: string, params: CostParams): { sql: string; values: unknown[] } {
  const dir = params.dir ?? (params.sort === 'group' || params.sort === 'currency' ? 'asc' : 'desc');
  const order = params.sort
    ? `${ORDER[params.sort]} ${dir} nulls last, group_value asc, currency asc nulls last`
    : 'currency asc nulls last, price_per_hour desc, group_value asc';
  return {
    sql: `with ${latestEffectiveCte()},
      groups as (
        select group_value, currency, sum(price_per_hour) as price_per_hour, sum(price_per_month) as price_per_month,
          sum(resource_count)::int as resources, sum(unpriced_count)::int as unpriced
        from eff group by group_value, currency
      )
      select group_value, currency, price_per_hour, price_per_month, resources, unpriced,
        case when currency is not null then round(100 * price_per_hour / nullif(sum(price_per_hour) over (partition by currency), 0), 2) end as share,
        count(*) over ()::int as total_rows
      from groups
      order by ${order}
      limit $7 offset $8`,
    values: latestEffectiveParams(dimension, filterOf(params)),
  };
}

function columns(dimension: string): Column[] {
  return [
    { key: 'group', label: dimensionLabel(dimension), kind: 'text', hrefKey: 'href', sortable: true },
    ...groupNameColumns(dimension),
    { key: 'currency', label: 'Currency', kind: 'text', sortable: true },
    { key: 'price_per_hour', label: 'Run-rate per hour', kind: 'money', currencyKey: 'currency', hourly: true, hrefKey: 'href', sortable: true },
    { key: 'price_per_month', label: 'Run-rate per month', kind: 'money', currencyKey: 'currency', sortable: true },
    { key: 'share', label: 'Share of currency total', kind: 'percent', sortable: true },
    { key: 'resources', label: 'Resources', kind: 'int', sortable: true },
    { key: 'unpriced', label: 'Without price', kind: 'int', sortable: true },
  ];
}

async function fetchRows(ctx: ReportCtx, dimension: string, params: CostParams, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const { sql, values } = costQuery(dimension, params);
  const [found, names] = await Promise.all([
    ctx.db.query<Record<string, unknown>>(sql, [...values, limit, offset]),
    groupNames(ctx.db, dimension),
  ]);
  const filter = filterOf(params);
  const rows = found.map((r) => ({
    group: r.group_value,
    ...(names ? { group_name: names(String(r.group_value)) } : {}),
    currency: r.currency,
    price_per_hour: r.price_per_hour,
    price_per_month: r.price_per_month,
    share: r.share,
    resources: r.resources,
    unpriced: r.unpriced,
    href: inventoryHref(dimension, String(r.group_value), (r.currency as string | null) ?? null, filter),
  }));
  return { rows, total: Number(found[0]?.total_rows ?? 0) };
}

export const costReport: Report<CostParams> = defineReport({
  name: 'cost',
  title: 'Cost by group',
  description: 'Current run-rate per tag value, project, region, resource kind, flavor or state, with each group\'s share of its currency\'s total.',
  section: 'cost',
  params: costParams,

  async run(ctx, params, page) {
    const dimension = resolveDimension(ctx, params);
    const filter = filterOf(params);
    const [{ rows, total }, totals, groups, snapshots] = await Promise.all([
      fetchRows(ctx, dimension, params, page.limit, page.offset),
      latestTotals(ctx.db, filter),
      latestGroupCosts(ctx.db, dimension, filter),
      latestSnapshots(ctx.db, PRICED_KINDS),
    ]);
    const scopeNote = [params.kind ? kindLabel(params.kind) : null, params.project ? `project ${params.project}` : null, params.region ? `region ${params.region}` : null]
      .filter(Boolean)
      .join(', ');
    const unpriced = totals.reduce((n, t) => n + t.unpriced_count, 0);
    return {
      title: `Cost by ${dimensionLabel(dimension)}${scopeNote ? ` (${scopeNote})` : ''}`,
      summary: runRateSummary(totals),
      charts: shareCharts('share', `Share by ${dimensionLabel(dimension)}`, groups),
      columns: columns(dimension),
      rows,
      totalRows: total,
      totals: runRateTotals(columns(dimension), totals),
      notes: [
        ...freshnessNotes(ctx.now, snapshots, 'priced resources (instances, GPU clusters, Kubernetes clusters)'),
        'Run-rate = the sum of current hourly prices. Only running resources cost (instances and cluster servers with status ACTIVE); stopped ones are counted at 0.',
        'Amounts in different currencies are never added together: each share is within its own currency.',
        ...(dimension.startsWith('tag:') ? [`Resources without the tag key "${dimension.slice(4)}" are in the (untagged) group.`] : []),
        ...(unpriced > 0 ? [`${unpriced} resource${unpriced === 1 ? ' has' : 's have'} no known price: they are in the rows without a currency, never priced at zero.`] : []),
      ],
    };
  },

  async export(ctx, params) {
    const dimension = resolveDimension(ctx, params);
    return {
      columns: columns(dimension),
      rows: offsetRows(async (limit, offset) => (await fetchRows(ctx, dimension, params, limit, offset)).rows),
      totals: async () => runRateTotals(columns(dimension), await latestTotals(ctx.db, filterOf(params))),
    };
  },

  async filters(ctx, params) {
    return [
      await groupingField(ctx, params.by, 'Group by'),
      pricedKindSelect('kind', 'Resource kind', params.kind, 'All kinds'),
      ...scopeFilterFields(params),
    ];
  },
}, { cached: true });

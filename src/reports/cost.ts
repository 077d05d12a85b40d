/**
 * Cost grouped by a tag key, project, region, resource kind, flavor or state: per group and
 * currency the spend in a period (default month to date), the spend in the period before and the
 * change, beside the current run-rate and its share of the currency's total, each number linking
 * to the inventory rows behind it.
 */
import { z } from 'zod';
import { PRICED_KINDS, type PricedKind } from '../costing/pricing.js';
import type { Column, Coverage, Row, SummaryItem } from './report.js';
import { listRows } from './shared/batches.js';
import { footRows } from '../present/footing.js';
import { latestTotals, type CostFilter } from '../costing/current-costs.js';
import { dimensionOf, GROUPING_HELP, unknownTagKeyNotes, groupingField, groupNameColumns, groupNames, groupLabels } from './shared/costs.js';
import { changeColumn, comparable, comparisonNote, hasData, periodCoverage, rangeCoverage, spendColumn } from './shared/coverage.js';
import { checkPeriodParams, periodField, resolvePeriod, type ResolvedPeriod } from './shared/period.js';
import { periodGroups, type PeriodGroups } from '../costing/period-groups.js';
import { gapCapText } from './shared/time.js';
import { dimensionLabel, kindLabel } from './shared/format.js';
import { inventoryHref } from './shared/links.js';
import { dirParam, invalidParameter, sortParam } from './shared/params.js';
import { latestSnapshots } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { runRateSummary, shareCharts } from './shared/summary.js';
import { defineReport } from './shared/define.js';
import { groupedSpendParamShape } from './shared/spend-params.js';
import type { Report, ReportCtx } from './shared/types.js';
import { scopedCostNotes, scopeOf } from './shared/access-scope.js';
import { pricedKindSelect, scopeFilterFields } from './shared/fields.js';
import { gpuCells, gpuColumns, gpuNotes } from './shared/gpu.js';

const SORTS = ['group', 'currency', 'cost', 'previous_cost', 'change_percent', 'price_per_hour', 'price_per_month', 'share', 'resources', 'unpriced', 'gpu_hours', 'cost_per_gpu_hour'] as const;
type CostSort = (typeof SORTS)[number];

export const costParams = z
  .strictObject({
    ...groupedSpendParamShape,
    sort: sortParam(SORTS),
    dir: dirParam,
  })
  .superRefine(checkPeriodParams);
export type CostParams = z.infer<typeof costParams>;

const ORDER: Record<CostSort, string> = {
  group: 'group_value',
  currency: 'currency',
  cost: 'cost',
  previous_cost: 'previous_cost',
  change_percent: 'change_percent',
  price_per_hour: 'price_per_hour',
  price_per_month: 'price_per_month',
  share: 'share',
  resources: 'resources',
  unpriced: 'unpriced',
  gpu_hours: 'gpu_hours',
  cost_per_gpu_hour: 'cost_per_gpu_hour',
};

function filterOf(ctx: ReportCtx, params: CostParams): CostFilter {
  return { kind: params.kind as PricedKind | undefined, projectId: params.project, regionId: params.region, scope: scopeOf(ctx) };
}

function resolveDimension(ctx: ReportCtx, params: CostParams): string {
  const dimension = dimensionOf(params.by, ctx.config);
  if (!dimension) throw invalidParameter('by', `by must be one of ${GROUPING_HELP}`);
  return dimension;
}

/** Spend first (the biggest first within each currency), then run-rate; or the asked column. */
function orderOf(params: CostParams): string {
  const dir = params.dir ?? (params.sort === 'group' || params.sort === 'currency' ? 'asc' : 'desc');
  return params.sort
    ? `${ORDER[params.sort]} ${dir} nulls last, group_value asc, currency asc nulls last`
    : 'currency asc nulls last, cost desc, price_per_hour desc, group_value asc';
}

function columns(dimension: string, r: Pick<Resolved, 'period' | 'coverage' | 'previousCoverage'>): Column[] {
  const { period } = r;
  return [
    { key: 'group', label: dimensionLabel(dimension), kind: 'text', hrefKey: 'href', sortable: true },
    ...groupNameColumns(dimension),
    { key: 'currency', label: 'Currency', kind: 'text', sortable: true },
    { ...spendColumn('cost', `Spend ${period.label}`, r.coverage), sortable: true },
    { ...spendColumn('previous_cost', `Spend ${period.previous.fromDay} to ${period.previous.toDay}`, r.previousCoverage), sortable: true },
    changeColumn(r.coverage, r.previousCoverage),
    { key: 'price_per_hour', label: 'Run-rate per hour (now)', kind: 'money', currencyKey: 'currency', hourly: true, hrefKey: 'href', sortable: true },
    { key: 'price_per_month', label: 'Run-rate per month (now)', kind: 'money', currencyKey: 'currency', sortable: true, secondary: true },
    { key: 'share', label: 'Share of currency run-rate', kind: 'percent', sortable: true },
    { key: 'resources', label: 'Resources', kind: 'int', sortable: true },
    { key: 'unpriced', label: 'Without price', kind: 'int', sortable: true, secondary: true },
    ...gpuColumns(true),
  ];
}

interface Resolved {
  dimension: string;
  period: ResolvedPeriod;
  coverage: Coverage;
  previousCoverage: Coverage;
  groups: PeriodGroups;
}

async function resolve(ctx: ReportCtx, params: CostParams): Promise<Resolved> {
  const dimension = resolveDimension(ctx, params);
  const period = resolvePeriod(params, ctx.now);
  // The run-rate is read while the coverages are; the spend waits for them (unknown is never 0).
  const covered = periodCoverage(ctx, period);
  const previousCovered = rangeCoverage(ctx, period.previous);
  const [coverage, previousCoverage, groups] = await Promise.all([
    covered,
    previousCovered,
    periodGroups(ctx, {
      dimension,
      filter: filterOf(ctx, params),
      range: { fromDay: period.fromDay, toDay: period.lastDay },
      previous: period.previous,
      currentKnown: covered.then(hasData),
      previousKnown: previousCovered.then(hasData),
      comparable: Promise.all([covered, previousCovered]).then(([c, p]) => comparable(c, p)),
    }),
  ]);
  return { dimension, period, coverage, previousCoverage, groups };
}

async function fetchRows(ctx: ReportCtx, r: Resolved, params: CostParams, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const [found, names] = await Promise.all([r.groups.page(orderOf(params), limit, offset), groupNames(ctx.db, r.dimension)]);
  const filter = filterOf(ctx, params);
  const rows = found.rows.map((g) => ({
    group: g.group_value,
    ...(names ? { group_name: names(String(g.group_value)) } : {}),
    currency: g.currency,
    cost: g.cost,
    previous_cost: g.previous_cost,
    change_percent: g.change_percent,
    price_per_hour: g.price_per_hour,
    price_per_month: g.price_per_month,
    share: g.share,
    resources: g.resources,
    unpriced: g.unpriced,
    ...gpuCells(g),
    href: inventoryHref(r.dimension, String(g.group_value), (g.currency as string | null) ?? null, filter),
  }));
  return { rows, total: found.total };
}

/**
 * Every row in the asked order with its rounded amounts footed to the totals (present/footing.ts):
 * the footing needs every row of a currency, so a page is cut from all of them (groups are few).
 */
async function footedRows(ctx: ReportCtx, r: Resolved, params: CostParams, totals: Promise<Row[]>): Promise<{ rows: Row[]; total: number }> {
  const [{ rows, total }, sums] = await Promise.all([fetchRows(ctx, r, params, Number.MAX_SAFE_INTEGER, 0), totals]);
  return { rows: footRows(rows, columns(r.dimension, r), sums), total };
}

/** Totals rows with every column key (group_name empty). */
function totalsRows(dimension: string, rows: Row[]): Row[] {
  return rows.map((t) => ({ ...(groupNameColumns(dimension).length > 0 ? { group_name: null } : {}), ...t }));
}

export const costReport: Report<CostParams> = defineReport({
  name: 'cost',
  title: 'Cost by group',
  description: 'Spend in a period per tag value, project, region, resource kind, flavor or state, compared with the period before, beside the current run-rate and each group\'s share of it.',
  section: 'cost',
  params: costParams,
  // Status notices and the coverage in one line that expands, as on the overview.
  foldsNotices: true,

  async run(ctx, params, page) {
    const r = await resolve(ctx, params);
    const filter = filterOf(ctx, params);
    // Every group row and the totals in one statement (footedRows reads the rows from it).
    const totalsNow = r.groups.everyRow(orderOf(params)).then((all) => all.totals);
    const [{ rows: all, total }, totals, currentTotals, groups, snapshots, chartNames] = await Promise.all([
      footedRows(ctx, r, params, totalsNow.then((t) => totalsRows(r.dimension, t))),
      totalsNow,
      latestTotals(ctx.db, filter),
      r.groups.latest, // the run-rate per group, read once by periodGroups
      latestSnapshots(ctx.db, PRICED_KINDS),
      groupLabels(ctx.db, r.dimension),
    ]);
    const scopeNote = [params.kind ? kindLabel(params.kind) : null, params.project ? `project ${params.project}` : null, params.region ? `region ${params.region}` : null]
      .filter(Boolean)
      .join(', ');
    const unpriced = currentTotals.reduce((n, t) => n + t.unpriced_count, 0);
    return {
      title: `Cost by ${dimensionLabel(r.dimension)}, ${r.period.label}${scopeNote ? ` (${scopeNote})` : ''}`,
      summary: [
        ...totals.flatMap((t): SummaryItem[] => [
          {
            label: `Spend ${r.period.label} (${String(t.currency)})`,
            value: t.cost as string | null,
            kind: 'money',
            currency: t.currency as string,
            ...(hasData(r.coverage) ? { hint: 'estimated from snapshots' } : { hint: 'no snapshot covers the period: unknown, not 0', emptyText: 'no data' }),
          },
        ]),
        ...runRateSummary(currentTotals),
      ],
      charts: shareCharts('share', `Share of the run-rate by ${dimensionLabel(r.dimension)}`, groups, chartNames),
      columns: columns(r.dimension, r),
      rows: all.slice(page.offset, page.offset + page.limit),
      totalRows: total,
      totals: totalsRows(r.dimension, totals),
      coverage: r.coverage,
      previousCoverage: r.previousCoverage,
      notes: [
        ...(await scopedCostNotes(ctx)),
        comparisonNote(r.coverage, r.previousCoverage),
        ...(await unknownTagKeyNotes(ctx.db, r.dimension)),
        ...freshnessNotes(ctx.now, snapshots, 'priced resources (instances, GPU clusters, Kubernetes clusters)'),
        `Spend ${r.period.label} = ${r.period.fromDay} to ${r.period.lastDay}${r.period.lastDay < r.period.toDay ? ' (so far)' : ''}, estimated: each snapshot's run-rate holds until the next one, ${gapCapText(ctx.config)} are capped. Compared with ${r.period.previous.fromDay} to ${r.period.previous.toDay}; change % is empty when that spend is 0 or unknown, or when that period is covered by snapshots more than an hour less than this one.`,
        'Run-rate = the sum of current hourly prices. Only running resources cost (instances and cluster servers with status ACTIVE); stopped ones are counted at 0.',
        'Amounts in different currencies are never added together: each share is within its own currency.',
        ...(r.dimension.startsWith('tag:') ? [`Resources without the tag key "${r.dimension.slice(4)}" are in the (untagged) group.`] : []),
        ...(unpriced > 0 ? [`${unpriced} resource${unpriced === 1 ? ' has' : 's have'} no known price: they are in the rows without a currency, never priced at zero.`] : []),
        ...(await gpuNotes(ctx.db, totals.some((t) => t.gpu_hours === null))),
      ],
    };
  },

  async export(ctx, params) {
    const r = await resolve(ctx, params);
    const totals = r.groups.totals().then((t) => totalsRows(r.dimension, t));
    return {
      columns: columns(r.dimension, r),
      rows: listRows((await footedRows(ctx, r, params, totals)).rows),
      totals: () => totals,
      coverage: r.coverage,
      previousCoverage: r.previousCoverage,
    };
  },

  async filters(ctx, params) {
    return [
      periodField(params, ctx.now),
      await groupingField(ctx, params.by, 'Group by'),
      pricedKindSelect('kind', 'Resource kind', params.kind, 'All kinds'),
      ...(await scopeFilterFields(ctx.db, params)),
    ];
  },
  scoped: true,
}, { cached: true });

/**
 * Trend for any grouping: the run-rate at each snapshot time (the last complete snapshot of each
 * scope in each hour or day) and the accumulated cost per day. Reads cost_rollups and the daily
 * integration (cost_daily for sealed days), never raw resource history.
 */
import { z } from 'zod';
import { effectiveRollupsSql } from '../costing/cost-over-time.js';
import { PRICED_KINDS, type PricedKind } from '../costing/pricing.js';
import { arrayParam, queryRows, sql } from '../db/statement.js';
import type { ChartSpec, Column, Row } from './report.js';
import { listRows, offsetRows } from './shared/batches.js';
import type { CostFilter } from '../costing/current-costs.js';
import { dimensionOf, GROUPING_HELP, groupLabels, unknownTagKeyNotes, groupingField, groupingParam } from './shared/costs.js';
import { addDays, chartNumber, dimensionLabel, isoDay, kindLabel } from './shared/format.js';
import { pricedKindSelect } from './shared/fields.js';
import { dirParam, idParam, intParam, invalidParameter } from './shared/params.js';
import { latestSnapshots } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { dailyCostsFor, dividedOnce, type DailyCostRow } from '../costing/cost-over-time.js';
import { daysBetween, gapCapText } from './shared/time.js';
import { periodCoverage } from './shared/coverage.js';
import { checkPeriodParams, periodField, periodGiven, periodParamShape, resolvePeriod } from './shared/period.js';
import { defineReport } from './shared/define.js';
import { scopedCostNotes, scopeOf } from './shared/access-scope.js';
import { dimensionWithin } from '../costing/partitions.js';
import type { Report, ReportCtx } from './shared/types.js';
import { addDecimal } from '../read-models/decimal.js';
import { otherLabel, topAndRest } from './shared/summary.js';
import { sumByCurrency, totalRow } from './shared/totals.js';
import { footRows } from '../present/footing.js';

export const trendParams = z.strictObject({
  by: groupingParam('kind'),
  /** The last `days` days (default 7) when no period is given. */
  days: intParam('days', 1, 366),
  ...periodParamShape,
  measure: z.enum(['run-rate', 'daily-cost'], { error: 'measure must be run-rate or daily-cost' }).default('run-rate'),
  bucket: z.enum(['hour', 'day'], { error: 'bucket must be hour or day' }).optional(),
  kind: z.enum(PRICED_KINDS, { error: `kind must be one of ${PRICED_KINDS.join(', ')}` }).optional(),
  project: idParam('project'),
  region: idParam('region'),
  /** The table is always in time order; `sort` (from the column header) only picks the direction. */
  sort: z.enum(['time', 'day'], { error: 'sort must be time or day' }).optional(),
  dir: dirParam,
}).superRefine((p, ctx) => {
  if (p.days !== undefined && periodGiven(p)) ctx.addIssue({ code: 'custom', path: ['days'], message: 'give either days or period/from/to, not both' });
  checkPeriodParams(p, ctx);
});
export type TrendParams = z.infer<typeof trendParams>;

function resolve(ctx: ReportCtx, p: TrendParams) {
  const dimension = dimensionOf(p.by, ctx.config);
  if (!dimension) throw invalidParameter('by', `by must be one of ${GROUPING_HELP}`);
  // Without a period: the last `days` days, as a custom range (so it has a coverage too).
  const period = periodGiven(p) ? resolvePeriod(p, ctx.now) : resolvePeriod({ from: addDays(isoDay(ctx.now), -((p.days ?? 7) - 1)), to: isoDay(ctx.now) }, ctx.now);
  const fromDay = period.fromDay;
  const toDay = period.lastDay;
  const span = daysBetween(fromDay, toDay).length;
  const bucket = p.bucket ?? (span <= 14 ? 'hour' : 'day');
  const filter: CostFilter = { kind: p.kind as PricedKind | undefined, projectId: p.project, regionId: p.region, scope: scopeOf(ctx) };
  return { dimension, fromDay, toDay, bucket, filter, period, span };
}

/**
 * Run-rate per time bucket, group and currency: per (kind, scope) the last complete snapshot in
 * each bucket. A scope without a snapshot in a bucket (failed collection) is missing from it.
 */
async function runRateRows(ctx: ReportCtx, p: TrendParams, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const { dimension, fromDay, bucket, filter, period } = resolve(ctx, p);
  // Up to the period's end (exclusive), or now (inclusive, as before periods).
  const end = period.end.getTime() === ctx.now.getTime() ? new Date(ctx.now.getTime() + 1) : period.end;
  const inRange = (takenAt: string) => sql`${sql.raw(takenAt)} >= ${fromDay}::date and ${sql.raw(takenAt)} < ${end.toISOString()}::timestamptz`;
  const kind = filter.kind ?? null;
  const projectId = filter.projectId ?? null;
  const regionId = filter.regionId ?? null;
  const found = await queryRows<Record<string, unknown>>(
    ctx.db,
    sql`with ranked as (
        select id, kind, scope_key, project_id, region_id, taken_at, date_trunc(${bucket}, taken_at) as bucket,
          row_number() over (partition by kind, scope_key, date_trunc(${bucket}, taken_at) order by taken_at desc, id desc) as rn
        from snapshots
        where complete and kind = any(${arrayParam(PRICED_KINDS)}::text[]) and ${inRange('taken_at')}
          and (${kind}::text is null or kind = ${kind}::text) and (${projectId}::int is null or project_id = ${projectId}::int)
          and (${regionId}::int is null or region_id = ${regionId}::int)
      ),
      picked as (select * from ranked where rn = 1),
      eff as (${effectiveRollupsSql(sql.raw('picked'), dimensionWithin(filter.scope, dimension), ['bucket'], inRange('r.taken_at'))}),
      g as (
        select e.bucket, e.group_value, e.currency, sum(e.price_per_hour) as price_per_hour, sum(e.price_per_month) as price_per_month,
          sum(e.resource_count)::int as resources, sum(e.unpriced_count)::int as unpriced
        from eff e
        group by e.bucket, e.group_value, e.currency
      )
      select g.*, count(*) over ()::int as total_rows from g
      order by bucket ${sql.raw(p.dir === 'desc' ? 'desc' : 'asc')}, currency nulls last, price_per_hour desc, group_value
      limit ${limit} offset ${offset}`,
  );
  return {
    rows: found.map((r) => ({
      time: r.bucket,
      group: r.group_value,
      currency: r.currency,
      price_per_hour: r.price_per_hour,
      price_per_month: r.price_per_month,
      resources: r.resources,
      unpriced: r.unpriced,
    })),
    total: Number(found[0]?.total_rows ?? 0),
  };
}

/**
 * Cost per day and group in day order, its rounded amounts footed to its totals per currency
 * (present/footing.ts) before any other order is applied, so that every order and format shows
 * the same rounded figures.
 */
async function dailyRows(ctx: ReportCtx, p: TrendParams): Promise<{ rows: Row[]; totals: Row[] }> {
  const { dimension, fromDay, toDay, filter } = resolve(ctx, p);
  const rows = await dailyCostsFor(ctx.db, ctx.config, ctx.now, dimension, fromDay, toDay, filter);
  const out = rows.map((r) => ({
    day: r.day,
    group: r.group_value,
    currency: r.currency,
    cost: r.cost,
    resource_hours: r.resource_hours,
    unpriced_resource_hours: r.unpriced_resource_hours,
  }));
  const totals = await dailyTotals(ctx, p, dimension, rows);
  const footed = footRows(out, columnsFor(p, dimension), totals);
  return { rows: p.dir === 'desc' ? footed.reverse() : footed, totals };
}

/**
 * Totals of the cost-per-day table: cost and resource hours per currency over every day and group
 * of the range. The run-rate table has none: it lists rates at successive times, and a sum of
 * rates over time is no amount of money (the daily cost is that integral, done right).
 */
async function dailyTotals(ctx: ReportCtx, p: TrendParams, dimension: string, daily: readonly DailyCostRow[]): Promise<Row[]> {
  // The cost from the days' exact price-seconds, divided once (as every report's total of it).
  const sums = await sumByCurrency(ctx.db, daily as unknown as Row[], 'currency', ['price_seconds', 'resource_hours', 'unpriced_resource_hours']);
  const costs = await ctx.db.query<{ cost: string }>(`select ${dividedOnce('secs')}::text as cost from unnest($1::numeric[]) with ordinality as t(secs, n) order by n`, [sums.map((t) => t.price_seconds)]);
  return sums.map(({ price_seconds: _, ...t }, i) => totalRow(columnsFor(p, dimension), { ...t, cost: costs[i]!.cost }));
}

function columnsFor(p: TrendParams, dimension: string): Column[] {
  const group: Column = { key: 'group', label: dimensionLabel(dimension), kind: 'text' };
  if (p.measure === 'daily-cost') {
    return [
      { key: 'day', label: 'Day (UTC)', kind: 'date', sortable: true },
      group,
      { key: 'currency', label: 'Currency', kind: 'text' },
      { key: 'cost', label: 'Cost (estimated)', kind: 'money', currencyKey: 'currency' },
      { key: 'resource_hours', label: 'Resource hours', kind: 'decimal' },
      { key: 'unpriced_resource_hours', label: 'Hours without price', kind: 'decimal' },
    ];
  }
  return [
    { key: 'time', label: 'Time (UTC)', kind: 'timestamp', sortable: true },
    group,
    { key: 'currency', label: 'Currency', kind: 'text' },
    { key: 'price_per_hour', label: 'Run-rate per hour', kind: 'money', currencyKey: 'currency', hourly: true },
    { key: 'price_per_month', label: 'Run-rate per month', kind: 'money', currencyKey: 'currency' },
    { key: 'resources', label: 'Resources', kind: 'int' },
    { key: 'unpriced', label: 'Without price', kind: 'int' },
  ];
}

/**
 * One chart per currency: the largest groups as series, the rest summed exactly as "other";
 * `name` gives a group's value its human label (kinds, regions).
 */
function seriesCharts(
  id: string,
  title: string,
  type: 'line' | 'bar',
  labels: string[],
  points: Array<{ label: string; group: string; currency: string | null; value: unknown }>,
  valueLabel: (c: string) => string,
  name: (group: string) => string,
): ChartSpec[] {
  const charts: ChartSpec[] = [];
  const currencies = [...new Set(points.map((p) => p.currency).filter((c): c is string => c !== null))].sort();
  const index = new Map(labels.map((l, i) => [l, i]));
  for (const currency of currencies) {
    const mine = points.filter((p) => p.currency === currency && p.value !== null && p.value !== undefined);
    const totals = new Map<string, string>();
    for (const p of mine) totals.set(p.group, addDecimal(totals.get(p.group) ?? '0', String(p.value)));
    const { shown, rest } = topAndRest([...totals], ([, total]) => chartNumber(total) ?? 0);
    const named = new Set(shown.map(([g]) => g));
    const other = otherLabel(rest.length);
    const series = new Map<string, Array<string | null>>();
    for (const [g] of shown) series.set(g, labels.map(() => null));
    if (rest.length > 0) series.set(other, labels.map(() => null));
    for (const p of mine) {
      const i = index.get(p.label);
      if (i === undefined) continue;
      const data = series.get(named.has(p.group) ? p.group : other)!;
      data[i] = addDecimal(data[i] ?? '0', String(p.value));
    }
    const datasets = [...series].map(([group, data]) => ({ label: group === other ? other : name(group), data: data.map((v) => chartNumber(v)) }));
    charts.push({ id: `${id}-${currency}`, title: `${title} (${currency})`, type, labels, datasets, stacked: type === 'bar', valueLabel: valueLabel(currency), currency });
  }
  return charts;
}

function bucketLabel(value: unknown, bucket: string): string {
  const iso = value instanceof Date ? value.toISOString() : String(value);
  return bucket === 'day' ? iso.slice(0, 10) : iso.slice(0, 13).replace('T', ' ') + ':00';
}

export const trendReport: Report<TrendParams> = defineReport({
  name: 'trend',
  title: 'Trend',
  description: 'Run-rate at each snapshot time and accumulated cost per day, for any grouping.',
  section: 'cost',
  params: trendParams,

  async run(ctx, params, page) {
    const { dimension, fromDay, toDay, bucket, period, span } = resolve(ctx, params);
    // Charts cover the whole range; the table is one page of the chosen measure.
    const [allRate, { rows: daily, totals: dailySums }, snapshots, coverage, name] = await Promise.all([
      runRateRows(ctx, { ...params, dir: 'asc' }, 100_000, 0),
      dailyRows(ctx, { ...params, dir: 'asc' }),
      latestSnapshots(ctx.db, PRICED_KINDS),
      periodCoverage(ctx, period),
      groupLabels(ctx.db, dimension),
    ]);
    const rateLabels = [...new Set(allRate.rows.map((r) => bucketLabel(r.time, bucket)))];
    const charts = [
      ...seriesCharts(
        'run-rate',
        `Run-rate per ${bucket} by ${dimensionLabel(dimension)}`,
        'line',
        rateLabels,
        allRate.rows.map((r) => ({ label: bucketLabel(r.time, bucket), group: String(r.group), currency: r.currency as string | null, value: r.price_per_hour })),
        (c) => `${c} per hour`,
        name,
      ),
      ...seriesCharts(
        'daily-cost',
        `Cost per day by ${dimensionLabel(dimension)}`,
        'bar',
        daysBetween(fromDay, toDay),
        daily.map((r) => ({ label: String(r.day), group: String(r.group), currency: r.currency as string | null, value: r.cost })),
        (c) => `${c} per day`,
        name,
      ),
    ];
    let rows: Row[];
    let total: number;
    if (params.measure === 'daily-cost') {
      const ordered = params.dir === 'desc' ? [...daily].reverse() : daily;
      rows = ordered.slice(page.offset, page.offset + page.limit);
      total = daily.length;
    } else {
      // The chart already read every point of the range: page it here rather than query again.
      // Newest first keeps each time's rows in the SQL order (a stable sort on time only).
      const ordered = params.dir === 'desc' ? [...allRate.rows].sort((a, b) => (b.time as Date).getTime() - (a.time as Date).getTime()) : allRate.rows;
      rows = ordered.slice(page.offset, page.offset + page.limit);
      total = allRate.total;
    }
    const scope = [params.kind ? kindLabel(params.kind) : null, params.project ? `project ${params.project}` : null, params.region ? `region ${params.region}` : null].filter(Boolean).join(', ');
    return {
      title: `Trend by ${dimensionLabel(dimension)}, ${periodGiven(params) ? period.label : `last ${span} day${span === 1 ? '' : 's'}`}${scope ? ` (${scope})` : ''}`,
      summary: [
        { label: 'From', value: fromDay, kind: 'date' },
        { label: 'To', value: toDay, kind: 'date' },
      ],
      charts,
      columns: columnsFor(params, dimension),
      rows,
      totalRows: total,
      ...(params.measure === 'daily-cost' ? { totals: dailySums } : {}),
      coverage,
      notes: [
        ...(await scopedCostNotes(ctx)),
        ...(await unknownTagKeyNotes(ctx.db, dimension)),
        ...freshnessNotes(ctx.now, snapshots, 'priced resources'),
        `Run-rate points: per scope, the last complete snapshot in each ${bucket}; a scope missing from a ${bucket} (failed collection) is missing from that point.`,
        ...(params.measure === 'daily-cost' ? [] : ['The run-rate table has no totals: rates at successive times do not add up to an amount (the cost per day table does, with totals per currency).']),
        `Cost per day is estimated: each snapshot's run-rate holds until the next one, ${gapCapText(ctx.config)} are capped, not extrapolated. Currencies are never added together.`,
      ],
    };
  },

  async export(ctx, params) {
    const { dimension, period } = resolve(ctx, params);
    const coverage = await periodCoverage(ctx, period);
    if (params.measure === 'daily-cost') {
      const { rows, totals } = await dailyRows(ctx, params);
      return { columns: columnsFor(params, dimension), rows: listRows(rows), totals: async () => totals, coverage };
    }
    return { columns: columnsFor(params, dimension), rows: offsetRows(async (limit, offset) => (await runRateRows(ctx, params, limit, offset)).rows), coverage };
  },

  async filters(ctx, params) {
    return [
      periodField(params, ctx.now, 'Last 7 days'),
      await groupingField(ctx, params.by, 'Group by'),
      {
        name: 'measure',
        label: 'Table',
        type: 'select',
        value: params.measure,
        options: [
          { value: 'run-rate', label: 'Run-rate per snapshot time' },
          { value: 'daily-cost', label: 'Cost per day' },
        ],
      },
      ...(periodGiven(params) ? [] : [{ name: 'days', label: 'Days', type: 'number' as const, value: String(params.days ?? 7) }]),
      pricedKindSelect('kind', 'Resource kind', params.kind, 'All kinds'),
    ];
  },
  scoped: true,
}, { cached: true });

/**
 * The dashboard: run-rate per hour and month, month-to-date and projected month-end per currency,
 * cost per day, the top groups of a chosen grouping (default the `team` tag), coverage (what has
 * no known price, by flavor) and how fresh each scope's data is.
 */
import { z } from 'zod';
import type { DailyCostRow } from '../costing/cost-over-time.js';
import { PRICED_KINDS } from '../costing/pricing.js';
import { SNAPSHOT_KINDS } from '../db/schema.js';
import type { Column, Coverage, Row, SummaryItem } from './report.js';
import { changeReason, hasData, periodCoverage, rangeCoverage, spendColumn } from './shared/coverage.js';
import { checkPeriodParams, periodField, periodGiven, periodParamShape, resolvePeriod, type ResolvedPeriod } from './shared/period.js';
import { periodGroups, type PeriodGroups } from '../costing/period-groups.js';
import { listRows } from './shared/batches.js';
import { footRows } from '../present/footing.js';
import { latestEffectiveCte, latestTotals, type CurrencyTotal } from '../costing/current-costs.js';
import { queryRows, sql } from '../db/statement.js';
import { dimensionOf, GROUPING_HELP, unknownTagKeyNotes, groupingField, groupingParam, groupNameColumns, groupNames, groupLabels } from './shared/costs.js';
import { addDays, dimensionLabel, formatAge, isoDay, kindLabel } from './shared/format.js';
import { costReportHref, inventoryHref } from './shared/links.js';
import { intParam, invalidParameter } from './shared/params.js';
import { latestSnapshots, type SnapshotInfo } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { MONTHLY_RUN_RATE_HINT, shareCharts } from './shared/summary.js';
import { dailyCostsFor, dividedOnce } from '../costing/cost-over-time.js';
import { gapCapText, monthToDate } from './shared/time.js';
import { coveredChartRange, stackedDailyCharts, type DailyChartRange } from './overview-daily.js';
import { headlineOf, SPARKLINE_DAYS } from './overview-headline.js';
import { defineReport } from './shared/define.js';
import { daysWithoutData, FORECAST_DAYS, forecastDays, forecastGapNote, forecastHistoryNote, incompleteDays, monthForecasts } from './shared/forecast.js';
import { scopedCostNotes, scopeOf } from './shared/access-scope.js';
import type { Report, ReportCtx } from './shared/types.js';

export const overviewParams = z
  .strictObject({
    by: groupingParam('tag:team'),
    /** Days in the chart when no period is given (default 30). */
    days: intParam('days', 1, 366),
    ...periodParamShape,
  })
  .superRefine((p, ctx) => {
    if (p.days !== undefined && periodGiven(p)) ctx.addIssue({ code: 'custom', path: ['days'], message: 'days sets the chart only without a period: give either days or period/from/to' });
    checkPeriodParams(p, ctx);
  });
export type OverviewParams = z.infer<typeof overviewParams>;

function dimension(ctx: ReportCtx, params: OverviewParams): string {
  const d = dimensionOf(params.by, ctx.config);
  if (!d) throw invalidParameter('by', `by must be one of ${GROUPING_HELP}`);
  return d;
}

interface CurrencyFigures extends CurrencyTotal {
  month_to_date: string;
  projected_month: string;
  /** The daily-history forecast and its band; null when the history is too short. */
  forecast: string | null;
  forecast_low: string | null;
  forecast_high: string | null;
  /** Mean cost of the complete days the forecast is made from. */
  forecast_daily_mean: string | null;
  /** How many of the last FORECAST_DAYS complete days the forecast averages (the fully collected ones). */
  forecast_days: number;
}

/**
 * Month-to-date, the run-rate projection and the daily-history forecast (shared/forecast.ts) per
 * currency, summed in SQL: projected = MTD + rate/h x hours left. `dailyCosts` = the cost per day of
 * a grouping (every group) over at least the month so far and the forecast's days.
 */
async function currencyFigures(ctx: ReportCtx, totals: readonly CurrencyTotal[], dailyCosts: readonly DailyCostRow[], historyEnough: boolean, gapDays: ReadonlySet<string>): Promise<CurrencyFigures[]> {
  const month = monthToDate(ctx.now);
  const none = { forecast: null, forecast_low: null, forecast_high: null, forecast_daily_mean: null, forecast_days: 0 };
  const priced = totals.filter((t): t is CurrencyTotal & { currency: string } => t.currency !== null);
  const forecasts = await monthForecasts(ctx.db, dailyCosts, { now: ctx.now, historyEnough, currencies: priced.map((t) => t.currency), gapDays });
  if (forecasts.length === 0) return totals.filter((t) => t.currency === null).map((t) => ({ ...t, month_to_date: '0', projected_month: '0', ...none }));
  const projected = await ctx.db.query<{ currency: string; projected_month: string }>(
    `select f.currency, ${dividedOnce('f.mtd_seconds + coalesce(r.per_hour, 0) * $5::numeric')} as projected_month
     from unnest($3::text[], $4::numeric[]) as f(currency, mtd_seconds)
       left join unnest($1::text[], $2::numeric[]) as r(currency, per_hour) using (currency)`,
    [priced.map((t) => t.currency), priced.map((t) => t.price_per_hour), forecasts.map((f) => f.currency), forecasts.map((f) => f.month_to_date_seconds), month.secondsLeft],
  );
  const projectedOf = new Map(projected.map((p) => [p.currency, p.projected_month]));
  const byCurrency = new Map(totals.map((t) => [t.currency, t]));
  const figures: CurrencyFigures[] = forecasts.map((r) => ({
    currency: r.currency,
    price_per_hour: byCurrency.get(r.currency)?.price_per_hour ?? '0',
    price_per_month: byCurrency.get(r.currency)?.price_per_month ?? '0',
    resource_count: byCurrency.get(r.currency)?.resource_count ?? 0,
    unpriced_count: 0,
    month_to_date: r.month_to_date,
    projected_month: projectedOf.get(r.currency) ?? r.month_to_date,
    forecast: r.forecast,
    forecast_low: r.forecast_low,
    forecast_high: r.forecast_high,
    forecast_daily_mean: r.forecast_daily_mean,
    forecast_days: r.forecast_days,
  }));
  const unpriced = byCurrency.get(null);
  if (unpriced) figures.push({ ...unpriced, month_to_date: '0', projected_month: '0', ...none });
  return figures;
}

/** Display text of a forecast band (the card's value stays exact). */
const bandText = (v: string | null) => (v === null ? 'n/a' : Number(v).toFixed(2));

function summaryOf(
  figures: readonly CurrencyFigures[],
  month: string,
  historyNote: string | null,
  periodSpend: ReadonlyArray<{ currency: string; cost: string | null }>,
  periodLabel: string | null,
  periodKnown: boolean,
  monthKnown: boolean,
): SummaryItem[] {
  const items: SummaryItem[] = [];
  for (const f of figures) {
    if (f.currency === null) continue;
    const c = f.currency;
    items.push({ label: `Run-rate per hour (${c})`, value: f.price_per_hour, kind: 'money', currency: c, hourly: true });
    items.push({ label: `Run-rate per month (${c})`, value: f.price_per_month, kind: 'money', currency: c, hint: MONTHLY_RUN_RATE_HINT });
    const spend = periodSpend.find((s) => s.currency === c);
    if (periodLabel !== null) {
      items.push(
        periodKnown
          ? { label: `Spend ${periodLabel} (${c})`, value: spend?.cost ?? '0', kind: 'money', currency: c, hint: 'estimated from snapshots' }
          : { label: `Spend ${periodLabel} (${c})`, value: null, kind: 'money', currency: c, hint: 'no snapshot covers the period: unknown, not 0', emptyText: 'no data' },
      );
    }
    if (!monthKnown) {
      // No snapshot covers an hour of this month yet (a backfill still on earlier days, collection
      // stopped): its spend, and every projection built on it, is unknown, not 0.
      const unknown = { value: null, kind: 'money' as const, currency: c, hint: 'no snapshot covers an hour of this month yet: unknown, not 0', emptyText: 'no data' };
      items.push({ label: `Month to date ${month} (${c})`, ...unknown });
      items.push({ label: `Projected ${month}, run-rate method (${c})`, ...unknown });
      items.push({ label: `Projected ${month}, daily history (${c})`, ...unknown });
      continue;
    }
    items.push({ label: `Month to date ${month} (${c})`, value: f.month_to_date, kind: 'money', currency: c, hint: 'estimated from snapshots' });
    items.push({ label: `Projected ${month}, run-rate method (${c})`, value: f.projected_month, kind: 'money', currency: c, hint: 'month to date + the current run-rate until month end' });
    items.push({
      label: `Projected ${month}, daily history (${c})`,
      value: f.forecast,
      kind: 'money',
      currency: c,
      hint:
        f.forecast === null
          ? (historyNote ?? 'not enough history')
          : `month to date + the mean of ${f.forecast_days === FORECAST_DAYS ? `the last ${FORECAST_DAYS}` : `${f.forecast_days} fully collected days of the last ${FORECAST_DAYS}`} complete days x the days left; range ${bandText(f.forecast_low)} to ${bandText(f.forecast_high)} (their cheapest and dearest day)`,
    });
  }
  items.push({ label: 'Resources', value: figures.reduce((n, f) => n + f.resource_count, 0), kind: 'int', hint: 'instances, GPU clusters and Kubernetes clusters, running or stopped' });
  items.push({ label: 'Without a known price', value: figures.reduce((n, f) => n + f.unpriced_count, 0), kind: 'int', hint: 'see the coverage note' });
  return items;
}

/** The days of the chart: the period's, else the last `days` days (default 30). */
function chartRange(ctx: ReportCtx, params: OverviewParams, period: ResolvedPeriod): DailyChartRange {
  if (periodGiven(params)) return { fromDay: period.fromDay, toDay: period.lastDay, title: `Cost per day, ${period.label}` };
  const days = params.days ?? 30;
  return { fromDay: addDays(isoDay(ctx.now), -(days - 1)), toDay: isoDay(ctx.now), title: `Cost per day, last ${days} days` };
}

/** A read of cost per day over [fromDay, toDay]. */
interface DailyRead {
  fromDay: string;
  toDay: string;
  rows: Promise<DailyCostRow[]>;
}

/**
 * The overview's costs per day: for the chart (the grouping's, with their seconds: the groups'
 * spend in the period is summed from them when they cover it, PeriodGroupsInput.currentDays), and
 * for the figures per currency (the month to date, the forecast and the sparkline, from the month's
 * first day, the forecast's and the sparkline's to today). When the chart's days meet the figures'
 * (always without a period: its last `days` days end today), one read of the grouping over both
 * serves all of them: every grouping puts each priced resource in exactly one group, so its days
 * summed per currency are the figures whatever the grouping, and a day's cost does not depend on
 * the range it is read in; today's hours are then integrated once, not three times. A period apart
 * from the last weeks (a past month) is read alone, and the figures from the `kind` dimension (a
 * few groups), so that a fine-grained grouping is not read over every day in between.
 */
function dailyReads(ctx: ReportCtx, dim: string, chart: DailyChartRange): { chart: DailyRead; figures: DailyRead } {
  const today = isoDay(ctx.now);
  const figuresFrom = [monthToDate(ctx.now).fromDay, forecastDays(ctx.now).fromDay, addDays(today, -SPARKLINE_DAYS)].sort()[0]!;
  const read = (dimension: string, fromDay: string, toDay: string, withSeconds: boolean): DailyRead => ({
    fromDay,
    toDay,
    rows: dailyCostsFor(ctx.db, ctx.config, ctx.now, dimension, fromDay, toDay, { scope: scopeOf(ctx) }, { withSeconds }),
  });
  if (chart.fromDay <= addDays(today, 1) && chart.toDay >= addDays(figuresFrom, -1)) {
    const both = read(dim, chart.fromDay < figuresFrom ? chart.fromDay : figuresFrom, chart.toDay > today ? chart.toDay : today, true);
    return { chart: both, figures: both };
  }
  return { chart: read(dim, chart.fromDay, chart.toDay, true), figures: read('kind', figuresFrom, today, false) };
}

/** Unpriced resources by flavor (the `flavor` dimension's rows without a currency). */
async function coverage(ctx: ReportCtx): Promise<Array<{ flavor: string; count: number }>> {
  const rows = await queryRows<{ group_value: string; n: number }>(
    ctx.db,
    sql`with ${latestEffectiveCte('flavor', { scope: scopeOf(ctx) })}
     select group_value, sum(unpriced_count)::int as n from eff where currency is null group by group_value order by n desc, group_value`,
  );
  return rows.map((r) => ({ flavor: r.group_value, count: r.n }));
}

/** Per scope: the age of its newest complete snapshot of any kind, and its oldest kind. */
function freshnessByScope(now: Date, snapshots: readonly SnapshotInfo[]): string[] {
  const byScope = new Map<string, SnapshotInfo[]>();
  for (const s of snapshots) byScope.set(s.scope_key, [...(byScope.get(s.scope_key) ?? []), s]);
  const lines: string[] = [];
  for (const [scope, list] of [...byScope].sort(([a], [b]) => a.localeCompare(b))) {
    const oldest = list.reduce((a, b) => (a.taken_at < b.taken_at ? a : b));
    const newest = list.reduce((a, b) => (a.taken_at > b.taken_at ? a : b));
    lines.push(`${scope}: ${formatAge(now, newest.taken_at)} old${oldest !== newest && newest.taken_at.getTime() - oldest.taken_at.getTime() > 3600_000 ? ` (${kindLabel(oldest.kind).toLowerCase()} ${formatAge(now, oldest.taken_at)})` : ''}`);
  }
  return lines;
}

function columnsFor(dim: string, period: ResolvedPeriod, coverage: Coverage): Column[] {
  return [
    { key: 'group', label: dimensionLabel(dim), kind: 'text', hrefKey: 'href' },
    ...groupNameColumns(dim),
    { key: 'currency', label: 'Currency', kind: 'text' },
    { key: 'price_per_hour', label: 'Run-rate per hour', kind: 'money', currencyKey: 'currency', hourly: true },
    { key: 'price_per_month', label: 'Run-rate per month', kind: 'money', currencyKey: 'currency' },
    spendColumn('cost', `Spend ${period.label}`, coverage),
    { key: 'share', label: 'Share of currency run-rate', kind: 'percent' },
    { key: 'resources', label: 'Resources', kind: 'int' },
    { key: 'unpriced', label: 'Without price', kind: 'int' },
  ];
}

interface Resolved {
  dim: string;
  period: ResolvedPeriod;
  coverage: Coverage;
  previousCoverage: Coverage;
  groups: PeriodGroups;
}

/** The order of the top groups: by currency, the largest run-rate first. */
const GROUP_ORDER = 'currency asc nulls last, price_per_hour desc, cost desc, group_value';

/** `days`: the grouping's cost per day with their seconds; the groups' spend is summed from them when they cover the period (PeriodGroupsInput.currentDays). */
async function resolve(ctx: ReportCtx, params: OverviewParams, days?: DailyRead): Promise<Resolved> {
  const dim = dimension(ctx, params);
  const period = resolvePeriod(params, ctx.now);
  // The previous period is read for the headline's change, given only when it is honest.
  const covered = periodCoverage(ctx, period);
  const previousCovered = rangeCoverage(ctx, period.previous);
  const [coverage, previousCoverage, groups] = await Promise.all([
    covered,
    previousCovered,
    periodGroups(ctx, {
      dimension: dim,
      filter: { scope: scopeOf(ctx) },
      range: { fromDay: period.fromDay, toDay: period.lastDay },
      previous: period.previous,
      currentKnown: covered.then(hasData),
      previousKnown: previousCovered.then(hasData),
      comparable: Promise.all([covered, previousCovered]).then(([c, p]) => changeReason(c, p) === null),
      everyRowAhead: GROUP_ORDER,
      currentDays: days && days.fromDay <= period.fromDay && days.toDay >= period.lastDay ? days.rows : undefined,
    }),
  ]);
  return { dim, period, coverage, previousCoverage, groups };
}

/** The period parameters as given, for links to the cost report of the same period. */
function periodLink(params: OverviewParams): { period?: string; from?: string; to?: string } {
  return { period: params.period, from: params.from, to: params.to };
}

/** Top groups of the chosen grouping: run-rate, share and spend in the period per currency. */
async function groupRows(ctx: ReportCtx, r: Resolved): Promise<{ rows: Row[]; total: number }> {
  const [found, names] = await Promise.all([r.groups.page(GROUP_ORDER, Number.MAX_SAFE_INTEGER, 0), groupNames(ctx.db, r.dim)]);
  // A group seen only in the previous period (read for the headline's change) is no top group.
  const listed = found.rows.filter((g) => g.current_group !== false);
  const rows = listed.map((g) => ({
    group: g.group_value,
    ...(names ? { group_name: names(String(g.group_value)) } : {}),
    currency: g.currency,
    price_per_hour: g.price_per_hour,
    price_per_month: g.price_per_month,
    cost: g.cost,
    share: g.share,
    resources: g.resources,
    unpriced: g.unpriced,
    href: inventoryHref(r.dim, String(g.group_value), (g.currency as string | null) ?? null, {}),
  }));
  return { rows, total: rows.length };
}

/**
 * Every group row with its rounded amounts footed to the totals (present/footing.ts): the footing
 * needs every row of a currency, so a page is cut from all of them.
 */
async function footedGroupRows(ctx: ReportCtx, r: Resolved, totals: Promise<Row[]>): Promise<{ rows: Row[]; total: number }> {
  const [{ rows, total }, sums] = await Promise.all([groupRows(ctx, r), totals]);
  return { rows: footRows(rows, columnsFor(r.dim, r.period, r.coverage), sums), total };
}

function totalsOf(r: Resolved, totals: Row[]): Row[] {
  return totals.map((t) => ({
    group: 'Total',
    ...(groupNameColumns(r.dim).length > 0 ? { group_name: null } : {}),
    currency: t.currency,
    price_per_hour: t.price_per_hour,
    price_per_month: t.price_per_month,
    cost: t.cost,
    share: t.currency === null ? null : '100.00',
    resources: t.resources,
    unpriced: t.unpriced,
  }));
}

export const overviewReport: Report<OverviewParams> = defineReport({
  name: 'overview',
  title: 'Overview',
  description: 'Run-rate, spend in a period, month to date and two month projections per currency, cost per day, top groups, coverage and data freshness.',
  section: 'cost',
  params: overviewParams,
  // The answer first: headline cards and the daily chart above the fold, the notices in one line.
  view: 'overview',
  foldsNotices: true,

  async run(ctx, params, page) {
    const month = monthToDate(ctx.now);
    const wholeChart = chartRange(ctx, params, resolvePeriod(params, ctx.now));
    const dim = dimension(ctx, params);
    // Everything that does not need the period's coverage is read beside it, not after it: each
    // wait would add to the answer's. The chart's days are cut to the covered ones afterwards
    // (stackedDailyCharts keeps only the rows of its days).
    // The grouping's cost per day serves the chart and the groups' spend in the period (its days
    // are the chart's, or among them), and usually the figures per currency too (dailyReads).
    const reads = dailyReads(ctx, dim, wholeChart);
    const resolved = resolve(ctx, params, reads.chart);
    // Every group row and the totals in one statement (groupRows reads the rows from it).
    const totalsNow = resolved.then((r) => r.groups.everyRow(GROUP_ORDER)).then((all) => all.totals);
    const [r, groupDays, figureDays, totals, table, groupTotals, uncovered, allLatest, chartNames, gapDays, scopedNotes, tagKeyNotes] = await Promise.all([
      resolved,
      reads.chart.rows,
      reads.figures.rows,
      latestTotals(ctx.db, { scope: scopeOf(ctx) }),
      resolved.then((r) => footedGroupRows(ctx, r, totalsNow.then((t) => totalsOf(r, t)))),
      totalsNow,
      coverage(ctx),
      latestSnapshots(ctx.db, SNAPSHOT_KINDS),
      groupLabels(ctx.db, dim),
      // Days not fully collected, over the sparkline's days (which hold the forecast's): left out of both.
      incompleteDays(ctx.db, ctx.config, { fromDay: addDays(isoDay(ctx.now), -SPARKLINE_DAYS), toDay: addDays(isoDay(ctx.now), -1) }),
      scopedCostNotes(ctx),
      unknownTagKeyNotes(ctx.db, dim),
    ]);
    const groups = r.groups.latest; // the run-rate per group, read once by periodGroups
    const chartDays = coveredChartRange(wholeChart, r.coverage.first_snapshot_at?.slice(0, 10) ?? null);
    const missingHistory = forecastHistoryNote(ctx.now, r.coverage);
    if (missingHistory === null) for (const day of daysWithoutData(figureDays, forecastDays(ctx.now))) gapDays.add(day);
    const figures = await currencyFigures(ctx, totals, figureDays, missingHistory === null, gapDays);
    const gapNote = forecastGapNote(ctx.now, gapDays);
    const daily = stackedDailyCharts(chartDays, groupDays, r.dim, chartNames);
    const priced = allLatest.filter((s) => (PRICED_KINDS as readonly string[]).includes(s.kind));
    const unpricedTotal = uncovered.reduce((n, c) => n + c.count, 0);
    const showPeriod = periodGiven(params) && r.period.label !== `month to date (${month.month})`;
    const monthCoverage = showPeriod ? await rangeCoverage(ctx, month) : r.coverage;
    const notes = [
      ...scopedNotes,
      ...tagKeyNotes,
      ...freshnessNotes(ctx.now, priced, 'priced resources'),
      `Data age per scope: ${freshnessByScope(ctx.now, allLatest).join('; ') || 'no data yet'}.`,
      unpricedTotal > 0
        ? `Coverage: ${unpricedTotal} resource${unpricedTotal === 1 ? '' : 's'} without a known price (never counted as zero), by flavor: ${uncovered.map((c) => `${c.flavor} (${c.count})`).join(', ')}.`
        : 'Coverage: every collected resource has a known price.',
      `Spend, month to date and cost per day are estimates: each snapshot's run-rate is assumed to hold until the next one, ${gapCapText(ctx.config)} are capped, not extrapolated.`,
      `Two projections of ${month.month}: the run-rate method adds the current run-rate until month end to the month to date; the daily-history forecast adds the mean cost of the last ${FORECAST_DAYS} complete days (before today) for each day left, with a range from the cheapest and the dearest of those days.` +
        (missingHistory ? ` The forecast is not given: it ${missingHistory}.` : ''),
      ...(gapNote ? [gapNote] : []),
      'Only running resources cost (status ACTIVE). Amounts in different currencies are never added together.',
    ];
    return {
      title: `Overview, ${showPeriod ? r.period.label : month.month}`,
      summary: summaryOf(
        figures,
        month.month,
        missingHistory,
        groupTotals.map((t) => ({ currency: String(t.currency), cost: t.cost === null ? null : String(t.cost) })),
        showPeriod ? r.period.label : null,
        hasData(r.coverage),
        hasData(monthCoverage),
      ),
      headline: headlineOf({
        period: r.period,
        coverage: r.coverage,
        previousCoverage: r.previousCoverage,
        month: month.month,
        monthCoverage,
        totals: groupTotals,
        figures,
        dailyCosts: figureDays,
        incompleteDays: gapDays,
        today: isoDay(ctx.now),
      }),
      charts: [...daily, ...shareCharts('top', `Top groups by ${dimensionLabel(r.dim)}`, groups, chartNames, (g) => costReportHref(r.dim, g, periodLink(params)))],
      columns: columnsFor(r.dim, r.period, r.coverage),
      rows: table.rows.slice(page.offset, page.offset + page.limit),
      totalRows: table.total,
      totals: totalsOf(r, groupTotals),
      coverage: r.coverage,
      previousCoverage: r.previousCoverage,
      notes,
    };
  },

  async export(ctx, params) {
    const r = await resolve(ctx, params);
    const totals = r.groups.totals().then((t) => totalsOf(r, t));
    return {
      columns: columnsFor(r.dim, r.period, r.coverage),
      rows: listRows((await footedGroupRows(ctx, r, totals)).rows),
      totals: () => totals,
      coverage: r.coverage,
    };
  },

  async filters(ctx, params) {
    return [
      periodField(params, ctx.now),
      await groupingField(ctx, params.by, 'Top groups by'),
      // With a period the chart shows its days; `days` only sets the chart without one.
      ...(periodGiven(params) ? [] : [{ name: 'days', label: 'Days in the chart', type: 'number' as const, value: String(params.days ?? 30) }]),
    ];
  },
  scoped: true,
}, { cached: true });

/**
 * The dashboard: run-rate per hour and month, month-to-date and projected month-end per currency,
 * cost per day, the top groups of a chosen grouping (default the `team` tag), coverage (what has
 * no known price, by flavor) and how fresh each scope's data is.
 */
import { z } from 'zod';
import { PRICED_KINDS, type DailyCostRow } from '../db/cost-model.js';
import { SNAPSHOT_KINDS } from '../db/schema.js';
import type { ChartSpec, Column, Row, SummaryItem } from './report.js';
import { offsetRows } from './shared/batches.js';
import { dimensionOf, GROUPING_HELP, groupingField, groupingParam, latestEffectiveCte, latestEffectiveParams, latestGroupCosts, latestTotals, groupNameColumns, groupNames, type CurrencyTotal } from './shared/costs.js';
import { addDays, chartNumber, dimensionLabel, formatAge, isoDay, kindLabel } from './shared/format.js';
import { inventoryHref } from './shared/links.js';
import { intParam, invalidParameter } from './shared/params.js';
import { freshnessNotes, latestSnapshots, type SnapshotInfo } from './shared/snapshots.js';
import { MONTHLY_RUN_RATE_HINT, shareCharts } from './shared/summary.js';
import { runRateTotals } from './shared/totals.js';
import { dailyCostsFor, daysBetween, gapCapText, monthToDate } from './shared/time.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';

export const overviewParams = z.strictObject({
  by: groupingParam('tag:team'),
  days: intParam('days', 1, 366).default(30),
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
}

/**
 * Month-to-date and projection per currency, summed in SQL: projected = MTD + rate/h x hours left.
 * `kindDays` = the cost per day of the `kind` dimension over at least the month so far.
 */
async function currencyFigures(ctx: ReportCtx, totals: readonly CurrencyTotal[], kindDays: readonly DailyCostRow[]): Promise<CurrencyFigures[]> {
  const month = monthToDate(ctx.now);
  const days = kindDays.filter((d) => d.day >= month.fromDay && d.day <= month.toDay);
  const currencies = [...new Set([...totals.map((t) => t.currency), ...days.map((d) => d.currency)])].filter((c): c is string => c !== null).sort();
  if (currencies.length === 0) return totals.filter((t) => t.currency === null).map((t) => ({ ...t, month_to_date: '0', projected_month: '0' }));
  const rows = await ctx.db.query<{ currency: string; month_to_date: string; projected_month: string }>(
    `with rate as (select * from unnest($1::text[], $2::numeric[]) as r(currency, per_hour)),
          mtd as (select currency, sum(cost) as cost from unnest($3::text[], $4::numeric[]) as d(currency, cost) group by currency)
     select c.currency, trim_scale(coalesce(m.cost, 0)) as month_to_date,
       trim_scale(coalesce(m.cost, 0) + coalesce(r.per_hour, 0) * $5::numeric / 3600) as projected_month
     from unnest($6::text[]) as c(currency) left join rate r using (currency) left join mtd m using (currency)
     order by c.currency`,
    [
      totals.filter((t) => t.currency !== null).map((t) => t.currency),
      totals.filter((t) => t.currency !== null).map((t) => t.price_per_hour),
      days.filter((d) => d.currency !== null).map((d) => d.currency),
      days.filter((d) => d.currency !== null).map((d) => d.cost),
      month.secondsLeft,
      currencies,
    ],
  );
  const byCurrency = new Map(totals.map((t) => [t.currency, t]));
  const figures: CurrencyFigures[] = rows.map((r) => ({
    currency: r.currency,
    price_per_hour: byCurrency.get(r.currency)?.price_per_hour ?? '0',
    price_per_month: byCurrency.get(r.currency)?.price_per_month ?? '0',
    resource_count: byCurrency.get(r.currency)?.resource_count ?? 0,
    unpriced_count: 0,
    month_to_date: r.month_to_date,
    projected_month: r.projected_month,
  }));
  const unpriced = byCurrency.get(null);
  if (unpriced) figures.push({ ...unpriced, month_to_date: '0', projected_month: '0' });
  return figures;
}

function summaryOf(figures: readonly CurrencyFigures[], month: string): SummaryItem[] {
  const items: SummaryItem[] = [];
  for (const f of figures) {
    if (f.currency === null) continue;
    const c = f.currency;
    items.push({ label: `Run-rate per hour (${c})`, value: f.price_per_hour, kind: 'money', currency: c, hourly: true });
    items.push({ label: `Run-rate per month (${c})`, value: f.price_per_month, kind: 'money', currency: c, hint: MONTHLY_RUN_RATE_HINT });
    items.push({ label: `Month to date ${month} (${c})`, value: f.month_to_date, kind: 'money', currency: c, hint: 'estimated from snapshots' });
    items.push({ label: `Projected ${month} (${c})`, value: f.projected_month, kind: 'money', currency: c, hint: 'month to date + current run-rate until month end' });
  }
  items.push({ label: 'Resources', value: figures.reduce((n, f) => n + f.resource_count, 0), kind: 'int', hint: 'instances, GPU clusters and Kubernetes clusters, running or stopped' });
  items.push({ label: 'Without a known price', value: figures.reduce((n, f) => n + f.unpriced_count, 0), kind: 'int', hint: 'see the coverage note' });
  return items;
}

/** The first day of the chart of the last `days` days. */
function chartFrom(ctx: ReportCtx, days: number): string {
  return addDays(isoDay(ctx.now), -(days - 1));
}

/**
 * Cost per day of the `kind` dimension (every priced resource) from the earlier of the chart's
 * first day and the month's: one integration serves both the chart and the month to date (a
 * day's cost does not depend on the range it is read in).
 */
function kindDailyCosts(ctx: ReportCtx, days: number): Promise<DailyCostRow[]> {
  const from = [chartFrom(ctx, days), monthToDate(ctx.now).fromDay].sort()[0]!;
  return dailyCostsFor(ctx.db, ctx.config, ctx.now, 'kind', from, isoDay(ctx.now));
}

/** Cost per day, one chart per currency (never two currencies on one axis), every day of the range on the axis. */
function dailyCharts(ctx: ReportCtx, days: number, kindDays: readonly DailyCostRow[]): ChartSpec[] {
  const toDay = isoDay(ctx.now);
  const fromDay = chartFrom(ctx, days);
  const rows = kindDays.filter((r) => r.day >= fromDay && r.day <= toDay);
  const labels = daysBetween(fromDay, toDay);
  const currencies = [...new Set(rows.map((r) => r.currency).filter((c): c is string => c !== null))].sort();
  return currencies.map((currency): ChartSpec => {
    const perDay = new Map<string, number>();
    for (const r of rows) if (r.currency === currency) perDay.set(r.day, (perDay.get(r.day) ?? 0) + (chartNumber(r.cost) ?? 0));
    // A day without any data (before the history starts, or a gap) is a gap, not a day that cost 0.
    const data = labels.map((d) => perDay.get(d) ?? null);
    return {
      id: `cost-per-day-${currency}`,
      title: `Cost per day, last ${days} days (${currency}, estimated)`,
      type: 'bar',
      labels,
      datasets: [{ label: currency, data }],
      valueLabel: `${currency} per day`,
      currency,
    };
  });
}

/** Unpriced resources by flavor (the `flavor` dimension's rows without a currency). */
async function coverage(ctx: ReportCtx): Promise<Array<{ flavor: string; count: number }>> {
  const rows = await ctx.db.query<{ group_value: string; n: number }>(
    `with ${latestEffectiveCte()}
     select group_value, sum(unpriced_count)::int as n from eff where currency is null group by group_value order by n desc, group_value`,
    latestEffectiveParams('flavor', {}),
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

const COLUMNS: Column[] = [
  { key: 'group', label: 'Group', kind: 'text', hrefKey: 'href' },
  { key: 'currency', label: 'Currency', kind: 'text' },
  { key: 'price_per_hour', label: 'Run-rate per hour', kind: 'money', currencyKey: 'currency', hourly: true },
  { key: 'price_per_month', label: 'Run-rate per month', kind: 'money', currencyKey: 'currency' },
  { key: 'month_to_date', label: 'Month to date', kind: 'money', currencyKey: 'currency' },
  { key: 'share', label: 'Share of currency total', kind: 'percent' },
  { key: 'resources', label: 'Resources', kind: 'int' },
  { key: 'unpriced', label: 'Without price', kind: 'int' },
];

/** Top groups of the chosen grouping: run-rate, share and month-to-date per currency. */
async function groupRows(ctx: ReportCtx, dim: string, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const month = monthToDate(ctx.now);
  const [mtd, names] = await Promise.all([dailyCostsFor(ctx.db, ctx.config, ctx.now, dim, month.fromDay, month.toDay), groupNames(ctx.db, dim)]);
  const found = await ctx.db.query<Record<string, unknown>>(
    `with ${latestEffectiveCte()},
      now_groups as (
        select group_value, currency, sum(price_per_hour) as price_per_hour, sum(price_per_month) as price_per_month,
          sum(resource_count)::int as resources, sum(unpriced_count)::int as unpriced
        from eff group by group_value, currency
      ),
      mtd as (select g as group_value, c as currency, sum(v) as cost from unnest($7::text[], $8::text[], $9::numeric[]) as m(g, c, v) group by g, c),
      joined as (
        select coalesce(n.group_value, m.group_value) as group_value, coalesce(n.currency, m.currency) as currency,
          case when coalesce(n.currency, m.currency) is not null then coalesce(n.price_per_hour, 0) end as price_per_hour,
          case when coalesce(n.currency, m.currency) is not null then coalesce(n.price_per_month, 0) end as price_per_month,
          case when coalesce(n.currency, m.currency) is not null then coalesce(m.cost, 0) end as month_to_date, coalesce(n.resources, 0) as resources, coalesce(n.unpriced, 0) as unpriced
        from now_groups n full join mtd m on m.group_value = n.group_value and m.currency is not distinct from n.currency
      )
      select *, case when currency is not null then round(100 * price_per_hour / nullif(sum(price_per_hour) over (partition by currency), 0), 2) end as share,
        count(*) over ()::int as total_rows
      from joined
      order by currency asc nulls last, price_per_hour desc, month_to_date desc, group_value
      limit $10 offset $11`,
    [
      ...latestEffectiveParams(dim, {}),
      mtd.map((m) => m.group_value),
      mtd.map((m) => m.currency),
      mtd.map((m) => m.cost),
      limit,
      offset,
    ],
  );
  const rows = found.map((r) => ({
    group: r.group_value,
    ...(names ? { group_name: names(String(r.group_value)) } : {}),
    currency: r.currency,
    price_per_hour: r.price_per_hour,
    price_per_month: r.price_per_month,
    month_to_date: r.month_to_date,
    share: r.share,
    resources: r.resources,
    unpriced: r.unpriced,
    href: inventoryHref(dim, String(r.group_value), (r.currency as string | null) ?? null, {}),
  }));
  return { rows, total: Number(found[0]?.total_rows ?? 0) };
}

function columnsFor(dim: string): Column[] {
  return COLUMNS.flatMap((c) => (c.key === 'group' ? [{ ...c, label: dimensionLabel(dim) }, ...groupNameColumns(dim)] : [c]));
}

/**
 * The group table's totals per currency: the run-rate and month to date of every priced resource
 * (each is in exactly one group), as on the summary cards.
 */
function groupTotals(dim: string, figures: readonly CurrencyFigures[]): Row[] {
  return runRateTotals(columnsFor(dim), figures, (f) => ({ month_to_date: f.month_to_date }));
}

export const overviewReport: Report<OverviewParams> = defineReport({
  name: 'overview',
  title: 'Overview',
  description: 'Run-rate, month to date and projected month per currency, cost per day, top groups, coverage and data freshness.',
  section: 'cost',
  params: overviewParams,

  async run(ctx, params, page) {
    const dim = dimension(ctx, params);
    const month = monthToDate(ctx.now);
    const [kindDays, totals, groups, table, uncovered, allLatest] = await Promise.all([
      kindDailyCosts(ctx, params.days),
      latestTotals(ctx.db),
      latestGroupCosts(ctx.db, dim),
      groupRows(ctx, dim, page.limit, page.offset),
      coverage(ctx),
      latestSnapshots(ctx.db, SNAPSHOT_KINDS),
    ]);
    const figures = await currencyFigures(ctx, totals, kindDays);
    const daily = dailyCharts(ctx, params.days, kindDays);
    const priced = allLatest.filter((s) => (PRICED_KINDS as readonly string[]).includes(s.kind));
    const unpricedTotal = uncovered.reduce((n, c) => n + c.count, 0);
    const notes = [
      ...freshnessNotes(ctx.now, priced, 'priced resources'),
      `Data age per scope: ${freshnessByScope(ctx.now, allLatest).join('; ') || 'no data yet'}.`,
      unpricedTotal > 0
        ? `Coverage: ${unpricedTotal} resource${unpricedTotal === 1 ? '' : 's'} without a known price (never counted as zero), by flavor: ${uncovered.map((c) => `${c.flavor} (${c.count})`).join(', ')}.`
        : 'Coverage: every collected resource has a known price.',
      `Month to date and cost per day are estimates: each snapshot's run-rate is assumed to hold until the next one, ${gapCapText(ctx.config)} are capped, not extrapolated.`,
      'Only running resources cost (status ACTIVE). Amounts in different currencies are never added together.',
    ];
    return {
      title: `Overview, ${month.month}`,
      summary: summaryOf(figures, month.month),
      charts: [...daily, ...shareCharts('top', `Top groups by ${dimensionLabel(dim)}`, groups)],
      columns: columnsFor(dim),
      rows: table.rows,
      totalRows: table.total,
      totals: groupTotals(dim, figures),
      notes,
    };
  },

  async export(ctx, params) {
    const dim = dimension(ctx, params);
    return {
      columns: columnsFor(dim),
      rows: offsetRows(async (limit, offset) => (await groupRows(ctx, dim, limit, offset)).rows),
      totals: async () => {
        const [kindDays, totals] = await Promise.all([kindDailyCosts(ctx, params.days), latestTotals(ctx.db)]);
        return groupTotals(dim, await currencyFigures(ctx, totals, kindDays));
      },
    };
  },

  async filters(ctx, params) {
    return [
      await groupingField(ctx, params.by, 'Top groups by'),
      { name: 'days', label: 'Days in the chart', type: 'number', value: String(params.days) },
    ];
  },
}, { cached: true });

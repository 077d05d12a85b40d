/**
 * A budget's figures for its period (the calendar month, quarter or year that holds the month
 * asked for): the amount, the spend (the cost model's cost per day over the period so far, the
 * same integration as the cost report), part 1's forecast for the period's end
 * (shared/forecast.ts) on the budget's group, the percentages used and the status. Shared by the
 * budgets report and the threshold alerts. Money stays exact: sums, percentages and comparisons
 * run in SQL on numeric.
 */
import type { DailyCostRow } from '../../costing/cost-over-time.js';
import { PRICED_KINDS, pricedResourcesSql, NO_VALUE, TAG_DIMENSION_PREFIX } from '../../costing/pricing.js';
import { UNTAGGED } from '../../db/schema.js';
import type { Budget } from '../../read-models/budgets.js';
import type { BudgetPeriod } from '../../config/index.js';
import type { Coverage } from '../report.js';
import { periodCoverage } from './coverage.js';
import { dimensionOf } from './costs.js';
import { daysWithoutData, forecastDays, forecastGapDays, forecastGapNote, forecastHistoryNote, monthForecasts } from './forecast.js';
import { addDays, dimensionLabel, isoDay } from './format.js';
import { resolvePeriod, type ResolvedPeriod } from './period.js';
import { latestSnapshotsSql } from '../../db/latest-snapshots.js';
import { dailyCostsFor, dividedOnce } from '../../costing/cost-over-time.js';
import { daysBetween } from './time.js';
import type { ReportCtx } from './types.js';

export const BUDGET_STATUSES = ['on track', 'at risk', 'over'] as const;
export type BudgetStatus = (typeof BUDGET_STATUSES)[number];

/** The period of a budget that holds the month asked for. */
export interface BudgetWindow {
  period: BudgetPeriod;
  /** "2026-11", "2026-Q4" or "2026": the `period=` of the cost report over the same days. */
  label: string;
  resolved: ResolvedPeriod;
  coverage: Coverage;
  /** The period has ended (the forecast is then its spend). */
  ended: boolean;
  /** Why there is no forecast (too little history), or null. */
  historyNote: string | null;
}

export interface BudgetFigures {
  budget: Budget;
  window: BudgetWindow;
  /** The budget's dimension in the cost model (`kind` for the total, whose groups are summed). */
  dimension: string;
  /** Spend in the budget's period up to now (the whole period when it has ended), exact. */
  spend: string;
  /** Forecast for the period's end; the spend when it has ended; null without history enough. */
  forecast: string | null;
  /** 100 x spend / amount, two decimals. */
  percentUsed: string;
  forecastPercent: string | null;
  /** over: spend >= amount; at risk: forecast >= amount; else on track. */
  status: BudgetStatus;
  /** Spend per day of the period and its running sum (exact), days with no data as null. */
  days: Array<{ day: string; cost: string | null; cumulative: string | null }>;
}

export interface BudgetMonth {
  /** YYYY-MM */
  month: string;
  period: ResolvedPeriod;
  coverage: Coverage;
  /** The month has ended (the forecast is then its spend). */
  ended: boolean;
  /** Why there is no forecast (too little history), or null. */
  historyNote: string | null;
  /** Which days of the forecast's window were left out (not fully collected), or null. */
  gapNote: string | null;
  figures: BudgetFigures[];
}

/** The label of the budget period of `period` that holds `month` (YYYY-MM): "2026-11", "2026-Q4", "2026". */
export function windowLabel(period: BudgetPeriod, month: string): string {
  if (period === 'month') return month;
  if (period === 'year') return month.slice(0, 4);
  return `${month.slice(0, 4)}-Q${Math.floor((Number(month.slice(5, 7)) - 1) / 3) + 1}`;
}

/**
 * The figures of each budget for its period that holds `month` (YYYY-MM; default the current
 * one): a monthly budget's month, a quarterly budget's quarter, a yearly budget's year.
 */
export async function budgetMonth(ctx: ReportCtx, budgets: readonly Budget[], month?: string): Promise<BudgetMonth> {
  const monthLabel = month ?? isoDay(ctx.now).slice(0, 7);
  const periods = new Set<BudgetPeriod>(['month', ...budgets.map((b) => b.period)]);
  const windows = new Map<BudgetPeriod, BudgetWindow>();
  await Promise.all([...periods].map(async (period) => windows.set(period, await windowOf(ctx, period, monthLabel))));
  const forecastFrom = forecastDays(ctx.now).fromDay;
  const spans = new Map<string, { fromDay: string; lastDay: string }>();
  for (const b of budgets) {
    const w = windows.get(b.period)!.resolved;
    const dim = budgetDimension(ctx, b);
    const fromDay = windows.get(b.period)!.ended ? w.fromDay : [w.fromDay, forecastFrom].sort()[0]!;
    const span = spans.get(dim);
    spans.set(dim, span ? { fromDay: [span.fromDay, fromDay].sort()[0]!, lastDay: [span.lastDay, w.lastDay].sort()[1]! } : { fromDay, lastDay: w.lastDay });
  }
  // Only the fully collected days of its window count in a forecast (none at all once every period has ended).
  const gapDays = [...windows.values()].some((w) => !w.ended && w.historyNote === null) ? await forecastGapDays(ctx.db, ctx.config, ctx.now) : new Set<string>();
  const dimensions = new Map<string, DailyCostRow[]>();
  await Promise.all([...spans].map(async ([dim, span]) => dimensions.set(dim, await dailyCostsFor(ctx.db, ctx.config, ctx.now, dim, span.fromDay, span.lastDay))));
  // A day of the forecast's window without any row of a budget's dimension had no data at all (collection stopped).
  const window = forecastDays(ctx.now);
  for (const [dim, rows] of dimensions) {
    const span = spans.get(dim)!;
    if (span.fromDay <= window.fromDay && span.lastDay >= window.toDay) for (const day of daysWithoutData(rows, window)) gapDays.add(day);
  }
  const figures: BudgetFigures[] = [];
  for (const budget of budgets) {
    const dimension = budgetDimension(ctx, budget);
    const rows = (dimensions.get(dimension) ?? []).filter((r) => r.currency === budget.currency && (budget.by === null || r.group_value === budget.value));
    figures.push(await figuresOf(ctx, budget, dimension, rows, windows.get(budget.period)!, gapDays));
  }
  const m = windows.get('month')!;
  return { month: monthLabel, period: m.resolved, coverage: m.coverage, ended: m.ended, historyNote: m.historyNote, gapNote: forecastGapNote(ctx.now, gapDays), figures };
}

async function windowOf(ctx: ReportCtx, period: BudgetPeriod, month: string): Promise<BudgetWindow> {
  const label = windowLabel(period, month);
  const resolved = resolvePeriod({ period: label }, ctx.now);
  const coverage = await periodCoverage(ctx, resolved);
  const ended = resolved.toDay < isoDay(ctx.now);
  return { period, label, resolved, coverage, ended, historyNote: ended ? null : forecastHistoryNote(ctx.now, coverage) };
}

/**
 * The budgets a user sees: every one without a scope; with one, the budgets of one of the scope's
 * own groups (by its tag key, a value it holds), whose spend is its resources' alone. A budget over
 * the total, a project or another team holds other teams' spend, so it is not shown.
 */
export function budgetsInScope<B extends Pick<Budget, 'by' | 'value'>>(ctx: Pick<ReportCtx, 'config' | 'scope'>, budgets: readonly B[]): B[] {
  const scope = ctx.scope;
  if (!scope) return [...budgets];
  return budgets.filter((b) => b.by !== null && dimensionOf(b.by, ctx.config) === scope.by && b.value !== null && scope.values.includes(b.value));
}

/** The cost model's dimension of a budget; the total reads `kind` (every priced resource is in one of its groups). */
export function budgetDimension(ctx: Pick<ReportCtx, 'config'>, budget: Pick<Budget, 'by'>): string {
  return budget.by === null ? 'kind' : (dimensionOf(budget.by, ctx.config) ?? budget.by);
}

async function figuresOf(ctx: ReportCtx, budget: Budget, dimension: string, rows: DailyCostRow[], window: BudgetWindow, gapDays: ReadonlySet<string>): Promise<BudgetFigures> {
  const { resolved: period, ended } = window;
  const inMonth = rows.filter((r) => r.day >= period.fromDay && r.day <= period.lastDay);
  let forecast: string | null;
  if (ended) {
    forecast = null; // the period's spend, filled in below
  } else {
    const endsAt = new Date(Date.parse(`${addDays(period.toDay, 1)}T00:00:00Z`));
    const [f] = await monthForecasts(ctx.db, rows, { now: ctx.now, historyEnough: window.historyNote === null, currencies: [budget.currency], window: { fromDay: period.fromDay, endsAt }, gapDays });
    forecast = f?.forecast ?? null;
  }
  // Per day, its running sum, the period's spend, percentages and status: one statement on numeric.
  const labels = daysBetween(period.fromDay, period.lastDay);
  const [head] = await ctx.db.query<{ spend: string; percent_used: string; forecast: string | null; forecast_percent: string | null; over: boolean; at_risk: boolean; days: Array<{ day: string; cost: string | null; cumulative: string | null }> }>(
    `with d as (select day, sum(secs) as secs, ${dividedOnce('sum(secs)')} as cost from unnest($1::text[], $2::numeric[]) as t(day, secs) group by day),
          axis as (select day, ord from unnest($3::text[]) with ordinality as a(day, ord)),
          series as (
            select a.day, a.ord, d.cost, ${dividedOnce('sum(coalesce(d.secs, 0)) over (order by a.ord)')} as cumulative
            from axis a left join d using (day)
          ),
          -- Summed in price-seconds and divided once, as the other reports' figures of the month.
          s as (select coalesce(${dividedOnce('sum(secs)')}, 0) as spend from d),
          f as (select case when $6::boolean then s.spend else $5::numeric end as forecast from s)
     select trim_scale(s.spend)::text as spend,
       round(100 * s.spend / $4::numeric, 2)::text as percent_used,
       trim_scale(f.forecast)::text as forecast,
       round(100 * f.forecast / $4::numeric, 2)::text as forecast_percent,
       s.spend >= $4::numeric as over,
       coalesce(f.forecast >= $4::numeric, false) as at_risk,
       (select coalesce(json_agg(json_build_object('day', day, 'cost', trim_scale(cost)::text,
          'cumulative', case when cost is null and not exists (select 1 from d d2 where d2.day <= series.day) then null else trim_scale(cumulative)::text end) order by ord), '[]'::json)
        from series) as days
     from s cross join f`,
    [inMonth.map((r) => r.day), inMonth.map((r) => r.price_seconds), labels, budget.amount, forecast, ended],
  );
  const status: BudgetStatus = head!.over ? 'over' : head!.at_risk ? 'at risk' : 'on track';
  return {
    budget,
    window,
    dimension,
    spend: head!.spend,
    forecast: head!.forecast,
    percentUsed: head!.percent_used,
    forecastPercent: head!.forecast_percent,
    status,
    days: head!.days,
  };
}

/** One of the resources that cost a budget the most per hour now. */
export interface BudgetContributor {
  kind: string;
  resource_id: string;
  name: string | null;
  project_id: number | null;
  region_id: number | null;
  flavor: string | null;
  price_per_hour: string;
  price_per_month: string;
}

/**
 * The `limit` running resources of a budget with the highest run-rate now (the latest complete
 * snapshot of each priced kind and scope), in the budget's currency.
 */
export async function budgetContributors(ctx: ReportCtx, budget: Budget, limit = 3): Promise<BudgetContributor[]> {
  const dimension = budgetDimension(ctx, budget);
  const params: unknown[] = [[...PRICED_KINDS], budget.currency, limit];
  let where = 'true';
  if (budget.by !== null) {
    params.push(budget.value);
    const v = `$${params.length}`;
    if (dimension.startsWith(TAG_DIMENSION_PREFIX)) {
      params.push(dimension.slice(TAG_DIMENSION_PREFIX.length), UNTAGGED);
      const key = `$${params.length - 1}`;
      where = `coalesce(r.tags ->> ${key}, $${params.length}) = ${v}`;
    } else if (dimension === 'project') where = `coalesce(r.project_id::text, '${NO_VALUE}') = ${v}`;
    else if (dimension === 'region') where = `coalesce(r.region_id::text, '${NO_VALUE}') = ${v}`;
    else if (dimension === 'kind') where = `r.kind = ${v}`;
    else if (dimension === 'flavor') where = `r.flavor = ${v}`;
    else return [];
  }
  return ctx.db.query<BudgetContributor & Record<string, unknown>>(
    `with latest as (${latestSnapshotsSql('$1')})
     select r.kind, r.resource_id, r.name, r.project_id, r.region_id, r.flavor,
       trim_scale(r.price_per_hour)::text as price_per_hour, trim_scale(r.price_per_month)::text as price_per_month
     from (${pricedResourcesSql('latest')}) r
     where r.currency = $2 and r.running and r.price_per_hour > 0 and ${where}
     order by r.price_per_hour desc, r.name nulls last, r.resource_id
     limit $3`,
    params,
  );
}

/** What a budget covers, for people: "Total (every priced resource)" or "Tag team = ml". */
export function coversText(budget: Pick<Budget, 'by' | 'value'>): string {
  if (budget.by === null) return 'Total (every priced resource)';
  const label = dimensionLabel(budget.by);
  return `${label.charAt(0).toUpperCase()}${label.slice(1)} = ${budget.value}`;
}

/** Every day of a budget's period, for the burn-up chart's axis. */
export function windowDays(window: Pick<BudgetWindow, 'resolved'>): string[] {
  return daysBetween(window.resolved.fromDay, window.resolved.toDay);
}

/** "per month", "per quarter", "per year". */
export function perPeriod(period: BudgetPeriod): string {
  return `per ${period}`;
}

/**
 * Part 1's forecast for the month end, for the total or for one group of a dimension: month to
 * date + the mean cost of the last FORECAST_DAYS complete days (before today) x the days left in
 * the month (fractional), with a range from the cheapest and the dearest of those days. Sums and
 * products run in SQL on numeric. Used by the overview and the budgets report, which also asks it
 * for a quarter's or a year's end (`window`: the same method over the budget's own period).
 */
import { dividedOnce, type DailyCostRow } from '../../costing/cost-over-time.js';
import type { Queryable } from '../../db/connection.js';
import { arrayParam, queryRows, sql } from '../../db/statement.js';
import type { Coverage } from '../report.js';
import { addDays, isoDay } from './format.js';
import { dailyGaps } from '../../costing/coverage.js';
import type { GapCapSettings } from '../../costing/gap-caps.js';
import { daysBetween, monthToDate, periodToDate } from './time.js';

/** Complete days the daily-history forecast averages. */
export const FORECAST_DAYS = 7;

/** The complete days the forecast reads: the FORECAST_DAYS days before today. */
export function forecastDays(now: Date): { fromDay: string; toDay: string } {
  const today = isoDay(now);
  return { fromDay: addDays(today, -FORECAST_DAYS), toDay: addDays(today, -1) };
}

/** Why the forecast cannot be made (too little history before its days), or null when it can. */
export function forecastHistoryNote(now: Date, coverage: Pick<Coverage, 'first_snapshot_at'>): string | null {
  const needFrom = Date.parse(`${forecastDays(now).fromDay}T00:00:00Z`);
  if (coverage.first_snapshot_at !== null && Date.parse(coverage.first_snapshot_at) <= needFrom) return null;
  const since = coverage.first_snapshot_at === null ? 'nothing has been collected yet' : `collection began ${coverage.first_snapshot_at.slice(0, 16).replace('T', ' ')} UTC`;
  return `needs ${FORECAST_DAYS} complete days of history before today; ${since}`;
}

export interface MonthForecast {
  currency: string;
  month_to_date: string;
  /** month_to_date x 3600, exact: what a projection adds to before its one division. */
  month_to_date_seconds: string;
  /** null when the history is too short. */
  forecast: string | null;
  forecast_low: string | null;
  forecast_high: string | null;
  /** Mean cost of the complete days the forecast is made from. */
  forecast_daily_mean: string | null;
  /** How many of the FORECAST_DAYS days it is made from: the fully collected ones (0: no forecast). */
  forecast_days: number;
}

export interface ForecastOptions {
  now: Date;
  /** Whether there is history enough (forecastHistoryNote gave null); else the forecast is null. */
  historyEnough: boolean;
  /** Only the rows of this group (the rows' dimension); all rows (the total) when absent. */
  group?: string;
  /** Currencies to answer for even without a row (0 month to date). */
  currencies?: readonly string[];
  /** Another period than the current month: its first day and its end (exclusive). */
  window?: { fromDay: string; endsAt: Date };
  /** Days of the forecast's window not fully collected (forecastGapDays, daysWithoutData): left out of the mean, never counted as 0. */
  gapDays?: ReadonlySet<string>;
}

/**
 * The days of the forecast's window that snapshots do not cover in full (a failed collection, a
 * gap longer than the cap): their cost is partial, so the forecast leaves them out of its mean.
 */
export function forecastGapDays(q: Queryable, settings: GapCapSettings, now: Date): Promise<Set<string>> {
  return incompleteDays(q, settings, forecastDays(now));
}

/**
 * The days of `range` for which `days` (a dimension's cost per day, every group: each priced
 * resource is in one of them, stopped ones at 0) has no row at all: no snapshot covers any of it,
 * e.g. after collection stopped (which dailyGaps does not flag: nothing was expected after it).
 */
export function daysWithoutData(days: readonly DailyCostRow[], range: { fromDay: string; toDay: string }): Set<string> {
  const seen = new Set(days.map((d) => d.day));
  return new Set(daysBetween(range.fromDay, range.toDay).filter((day) => !seen.has(day)));
}

/** The days of `range` that snapshots do not cover in full (costing/coverage.ts dailyGaps, the anomalies' rule). */
export async function incompleteDays(q: Queryable, settings: GapCapSettings, range: { fromDay: string; toDay: string }): Promise<Set<string>> {
  return new Set((await dailyGaps(q, settings, range, FORECAST_DAYS)).map((g) => g.day));
}

/** "made from 5 of the last 7 complete days: 2025-03-04, 2025-03-06 were not fully collected", or null when every day counts. */
export function forecastGapNote(now: Date, gapDays: ReadonlySet<string>): string | null {
  const window = forecastDays(now);
  const days = [...gapDays].filter((d) => d >= window.fromDay && d <= window.toDay).sort();
  if (days.length === 0) return null;
  const used = FORECAST_DAYS - days.length;
  return used === 0
    ? `No forecast: none of the last ${FORECAST_DAYS} complete days was fully collected (${days.join(', ')}).`
    : `The forecast is made from ${used} of the last ${FORECAST_DAYS} complete days: ${days.join(', ')} ${days.length === 1 ? 'was' : 'were'} not fully collected, so ${days.length === 1 ? 'it is' : 'they are'} left out, not counted as 0.`;
}

/**
 * Month to date and forecast per currency from a dimension's cost per day covering at least the
 * month so far and the forecast's days (rows without a currency are left out).
 */
export async function monthForecasts(q: Queryable, days: readonly DailyCostRow[], opts: ForecastOptions): Promise<MonthForecast[]> {
  const month = opts.window ? periodToDate(opts.now, opts.window.fromDay, opts.window.endsAt) : monthToDate(opts.now);
  const recent = forecastDays(opts.now);
  const rows = days.filter((d) => d.currency !== null && d.price_seconds !== null && (opts.group === undefined || d.group_value === opts.group));
  const inMonth = rows.filter((d) => d.day >= month.fromDay && d.day <= month.toDay);
  const gaps = opts.gapDays ?? new Set<string>();
  const history = opts.historyEnough ? rows.filter((d) => d.day >= recent.fromDay && d.day <= recent.toDay && !gaps.has(d.day)) : [];
  const usedDays = FORECAST_DAYS - [...gaps].filter((d) => d >= recent.fromDay && d <= recent.toDay).length;
  const currencies = [...new Set([...(opts.currencies ?? []), ...inMonth.map((d) => d.currency!)])].sort();
  if (currencies.length === 0) return [];
  const secondsLeft = sql`${month.secondsLeft}::numeric`;
  const enough = sql`${opts.historyEnough && usedDays > 0}::boolean`;
  const used = sql`${Math.max(usedDays, 1)}::int`;
  return queryRows<MonthForecast & Record<string, unknown>>(
    q,
    sql`with mtd_seconds as (
            select currency, sum(secs) as secs
            from unnest(${arrayParam(inMonth.map((d) => d.currency))}::text[], ${arrayParam(inMonth.map((d) => d.price_seconds))}::numeric[]) as d(currency, secs)
            group by currency
          ),
          mtd as (select currency, secs, ${sql.raw(dividedOnce('secs'))} as cost from mtd_seconds),
          per_day as (
            select currency, day, ${sql.raw(dividedOnce('sum(secs)'))} as cost
            from unnest(${arrayParam(history.map((d) => d.currency))}::text[], ${arrayParam(history.map((d) => d.day))}::text[], ${arrayParam(history.map((d) => d.price_seconds))}::numeric[]) as h(currency, day, secs)
            group by currency, day
          ),
          hist as (
            select currency, sum(cost) / ${used} as mean, min(cost) as low, max(cost) as high, count(*) as n
            from per_day group by currency
          )
     select c.currency, trim_scale(coalesce(m.cost, 0)) as month_to_date, trim_scale(coalesce(m.secs, 0)) as month_to_date_seconds,
       case when ${enough} then trim_scale(round(coalesce(h.mean, 0), 10)) end as forecast_daily_mean,
       case when ${enough} then ${used} else 0 end as forecast_days,
       case when ${enough} then trim_scale(round(coalesce(m.cost, 0) + coalesce(h.mean, 0) * ${secondsLeft} / 86400, 10)) end as forecast,
       -- A day of the window without any cost of this currency cost 0 in it.
       case when ${enough} then trim_scale(round(coalesce(m.cost, 0) + (case when coalesce(h.n, 0) < ${used} then least(coalesce(h.low, 0), 0) else h.low end) * ${secondsLeft} / 86400, 10)) end as forecast_low,
       case when ${enough} then trim_scale(round(coalesce(m.cost, 0) + coalesce(h.high, 0) * ${secondsLeft} / 86400, 10)) end as forecast_high
     from unnest(${arrayParam(currencies)}::text[]) as c(currency) left join mtd m using (currency) left join hist h using (currency)
     order by c.currency`,
  );
}

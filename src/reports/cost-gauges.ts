/**
 * The figures of the cost gauges of /metrics, read once after each collection (never at scrape
 * time): the run-rate per hour per currency in total and per group of each configured grouping,
 * and the month to date per currency, from the same read models as the overview (latestTotals,
 * latestGroupCosts, the `kind` dimension's cost per day), so the gauges equal its cards.
 */
import { dailyCostsFor } from '../costing/cost-over-time.js';
import { latestGroupCosts, latestTotals } from '../costing/current-costs.js';
import { hasData, rangeCoverage } from './shared/coverage.js';
import { dimensionOf } from './shared/costs.js';
import { monthForecasts } from './shared/forecast.js';
import { monthToDate } from './shared/time.js';
import type { ReportCtx } from './shared/types.js';

/** Exact decimals as text; `groupBy` is `total` for the currency's total, else a dimension (`tag:team`). */
export interface CostGaugeFigures {
  perHour: Array<{ currency: string; groupBy: string; group: string; value: string }>;
  /** Empty while no snapshot covers an hour of this month (unknown, not 0), as on the overview. */
  monthToDate: Array<{ currency: string; value: string }>;
}

export const TOTAL_GROUPING = 'total';

export async function costGaugeFigures(ctx: ReportCtx, groupings: readonly string[]): Promise<CostGaugeFigures> {
  const dimensions = groupings.map((by) => {
    const dimension = dimensionOf(by, ctx.config);
    if (!dimension) throw new TypeError(`metrics cost grouping ${JSON.stringify(by)} is not a grouping`);
    return dimension;
  });
  const month = monthToDate(ctx.now);
  const [totals, groups, coverage, days] = await Promise.all([
    latestTotals(ctx.db),
    Promise.all(dimensions.map(async (dimension) => ({ dimension, rows: await latestGroupCosts(ctx.db, dimension) }))),
    rangeCoverage(ctx, month),
    dailyCostsFor(ctx.db, ctx.config, ctx.now, 'kind', month.fromDay, month.toDay),
  ]);
  const priced = totals.flatMap((t) => (t.currency !== null && t.price_per_hour !== null ? [{ currency: t.currency, value: t.price_per_hour }] : []));
  const perHour = [
    ...priced.map((t) => ({ ...t, groupBy: TOTAL_GROUPING, group: TOTAL_GROUPING })),
    ...groups.flatMap(({ dimension, rows }) =>
      rows.flatMap((g) => (g.currency !== null && g.price_per_hour !== null ? [{ currency: g.currency, groupBy: dimension, group: g.group_value, value: g.price_per_hour }] : [])),
    ),
  ];
  if (!hasData(coverage)) return { perHour, monthToDate: [] };
  const figures = await monthForecasts(ctx.db, days, { now: ctx.now, historyEnough: false, currencies: priced.map((t) => t.currency) });
  return { perHour, monthToDate: figures.map((m) => ({ currency: m.currency, value: m.month_to_date })) };
}

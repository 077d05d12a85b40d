/**
 * The overview's cost per day: over the known days only (the chart starts at the first covered
 * day, not with empty bars from before collection began), one chart per currency, the top groups
 * of the chosen grouping stacked so that a spike shows who caused it, every bar linking to the
 * cost report of its day (and group where the cost report can filter by it).
 */
import type { DailyCostRow } from '../costing/cost-over-time.js';
import type { ChartSpec } from './report.js';
import { chartNumber, dimensionLabel } from './shared/format.js';
import { costReportHref } from './shared/links.js';
import { otherLabel, topAndRest } from './shared/summary.js';
import { daysBetween } from './shared/time.js';

export interface DailyChartRange {
  fromDay: string;
  toDay: string;
  title: string;
}

/** The chart's days from the later of its first day and the first covered day (null: nothing collected). */
export function coveredChartRange(range: DailyChartRange, firstCoveredDay: string | null): DailyChartRange {
  if (firstCoveredDay === null || firstCoveredDay <= range.fromDay || firstCoveredDay > range.toDay) return range;
  return { ...range, fromDay: firstCoveredDay, title: `Cost per day since collection began (${firstCoveredDay})` };
}

interface Series {
  label: string;
  /** The group's value; null for the "other" series. */
  group: string | null;
  at: (day: string) => number;
}

/**
 * The links of a chart's bars, unless every bar leads where its day does (a grouping the cost
 * report cannot narrow to, a tag value say): a click beside a link of its own falls back to the
 * day's (public/charts.js), and the spec would repeat the day's link once per group (a third of
 * the overview page at 8 groups).
 */
function barHrefs(hrefs: Array<Array<string | null>>, labelHrefs: readonly string[]): { hrefs?: Array<Array<string | null>> } {
  return hrefs.every((row) => row.every((href, i) => href === null || href === labelHrefs[i])) ? {} : { hrefs };
}

/** Cost per day of each group of `dimension` (rows of dailyCosts), stacked, one chart per currency. */
export function stackedDailyCharts(range: DailyChartRange, rows: readonly DailyCostRow[], dimension: string, label: (value: string) => string): ChartSpec[] {
  const labels = daysBetween(range.fromDay, range.toDay);
  const inRange = rows.filter((r) => r.currency !== null && r.day >= range.fromDay && r.day <= range.toDay);
  const currencies = [...new Set(inRange.map((r) => r.currency as string))].sort();
  const dayHref = (day: string, group: string | null) => costReportHref(dimension, group, { from: day, to: day });
  const labelHrefs = labels.map((d) => dayHref(d, null));
  return currencies.map((currency): ChartSpec => {
    const perGroup = new Map<string, Map<string, number>>();
    const known = new Set<string>();
    for (const r of inRange) {
      if (r.currency !== currency) continue;
      known.add(r.day);
      const days = perGroup.get(r.group_value) ?? new Map<string, number>();
      days.set(r.day, (days.get(r.day) ?? 0) + (chartNumber(r.cost) ?? 0));
      perGroup.set(r.group_value, days);
    }
    const groups = [...perGroup].map(([group, days]) => ({ group, days, total: [...days.values()].reduce((a, b) => a + b, 0) }));
    const { shown, rest } = topAndRest(groups, (g) => g.total);
    const series: Series[] = shown.map((g) => ({ label: label(g.group), group: g.group, at: (d) => g.days.get(d) ?? 0 }));
    if (rest.length > 0) series.push({ label: otherLabel(rest.length), group: null, at: (d) => rest.reduce((n, g) => n + (g.days.get(d) ?? 0), 0) });
    return {
      id: `cost-per-day-${currency}`,
      title: `${range.title}, by ${dimensionLabel(dimension)} (${currency}, estimated)`,
      type: 'bar',
      stacked: true,
      labels,
      // A day without any data (a gap in collection) is a gap, not a day that cost 0.
      datasets: series.map((s) => ({ label: s.label, data: labels.map((d) => (known.has(d) ? s.at(d) : null)) })),
      ...barHrefs(series.map((s) => labels.map((d) => (known.has(d) ? dayHref(d, s.group) : null))), labelHrefs),
      labelHrefs,
      valueLabel: `${currency} per day`,
      currency,
    };
  });
}

/** Summary cards and charts shared by the cost reports. */
import type { ChartSpec, SummaryItem } from '../report.js';
import type { CurrencyTotal, GroupCost } from '../../costing/current-costs.js';
import { addDecimal } from '../../read-models/decimal.js';
import { chartNumber } from './format.js';

/** How a monthly run-rate is made, said the same way on every page. */
export const MONTHLY_RUN_RATE_HINT = 'hourly price x 730, unless the API gives a monthly price';

/** One card per currency for the hourly and monthly run-rate. */
export function runRateItems(totals: readonly CurrencyTotal[]): SummaryItem[] {
  return totals.flatMap((t): SummaryItem[] =>
    t.currency === null
      ? []
      : [
          { label: `Run-rate per hour (${t.currency})`, value: t.price_per_hour, kind: 'money', currency: t.currency, hourly: true },
          { label: `Run-rate per month (${t.currency})`, value: t.price_per_month, kind: 'money', currency: t.currency, hint: MONTHLY_RUN_RATE_HINT },
        ],
  );
}

/** The run-rate cards, then resources and unpriced. */
export function runRateSummary(totals: readonly CurrencyTotal[]): SummaryItem[] {
  const resources = totals.reduce((n, t) => n + t.resource_count, 0);
  const unpriced = totals.reduce((n, t) => n + t.unpriced_count, 0);
  return [
    ...runRateItems(totals),
    { label: 'Resources', value: resources, kind: 'int', hint: 'instances, GPU clusters and Kubernetes clusters, running or stopped; only running ones cost' },
    { label: 'Without a known price', value: unpriced, kind: 'int', hint: 'counted, never priced at zero' },
  ];
}

/** Most slices or series a chart shows by name; the rest are summed into one "other" (so at most 8). */
export const MAX_NAMED = 7;

/** The label of the sum of the groups a chart does not name, e.g. "other (12)". */
export function otherLabel(count: number): string {
  return `other (${count})`;
}

/**
 * The groups a chart names: the `max` largest by `size`, and the rest as one "other" (only when
 * it stands for two groups or more: a single one is shown under its own name).
 */
export function topAndRest<T>(items: readonly T[], size: (item: T) => number, max = MAX_NAMED): { shown: T[]; rest: T[] } {
  const sorted = [...items].sort((a, b) => size(b) - size(a));
  const shown = sorted.length <= max + 1 ? sorted : sorted.slice(0, max);
  return { shown, rest: sorted.slice(shown.length) };
}

/** Exact sum of decimal texts (null counts as nothing), as a chart number. */
function exactSum(values: ReadonlyArray<string | null>): number | null {
  const present = values.filter((v): v is string => v !== null);
  return present.length === 0 ? null : chartNumber(present.reduce((sum, v) => addDecimal(sum, v), '0'));
}

/**
 * A doughnut per currency of the groups' hourly run-rate: the largest seven by name, the rest
 * summed exactly as "other". `label` names a group's value for people (kinds, regions).
 */
export function shareCharts(
  idPrefix: string,
  title: string,
  groups: readonly GroupCost[],
  label: (value: string) => string = (v) => v,
  /** Where a click on a slice leads (group null: the "other" slice). */
  href?: (group: string | null) => string,
): ChartSpec[] {
  const byCurrency = new Map<string, GroupCost[]>();
  for (const g of groups) {
    if (g.currency === null) continue;
    const list = byCurrency.get(g.currency) ?? [];
    list.push(g);
    byCurrency.set(g.currency, list);
  }
  const charts: ChartSpec[] = [];
  for (const [currency, list] of byCurrency) {
    const { shown, rest } = topAndRest(list, (g) => chartNumber(g.price_per_hour) ?? 0);
    const labels = shown.map((g) => label(g.group_value));
    const data = shown.map((g) => chartNumber(g.price_per_hour));
    if (rest.length > 0) {
      labels.push(otherLabel(rest.length));
      data.push(exactSum(rest.map((g) => g.price_per_hour)));
    }
    charts.push({
      id: `${idPrefix}-${currency}`,
      title: `${title} (${currency} per hour)`,
      type: 'doughnut',
      labels,
      datasets: [{ label: `${currency} per hour`, data }],
      valueLabel: `${currency} per hour`,
      currency,
      ...(href ? { hrefs: [[...shown.map((g) => href(g.group_value)), ...(rest.length > 0 ? [href(null)] : [])]] } : {}),
    });
  }
  return charts;
}

/** Summary cards and charts shared by the cost reports. */
import type { ChartSpec, SummaryItem } from '../report.js';
import type { CurrencyTotal, GroupCost } from './costs.js';
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

/** A doughnut per currency of the groups' hourly run-rate: the largest `top`, the rest as "other". */
export function shareCharts(idPrefix: string, title: string, groups: readonly GroupCost[], top = 8): ChartSpec[] {
  const byCurrency = new Map<string, GroupCost[]>();
  for (const g of groups) {
    if (g.currency === null) continue;
    const list = byCurrency.get(g.currency) ?? [];
    list.push(g);
    byCurrency.set(g.currency, list);
  }
  const charts: ChartSpec[] = [];
  for (const [currency, list] of byCurrency) {
    const sorted = [...list].sort((a, b) => (chartNumber(b.price_per_hour) ?? 0) - (chartNumber(a.price_per_hour) ?? 0));
    // "other" only for two groups or more: a single one is shown under its own name.
    const shown = sorted.length <= top + 1 ? sorted : sorted.slice(0, top);
    const rest = sorted.slice(shown.length);
    const labels = shown.map((g) => g.group_value);
    const data = shown.map((g) => chartNumber(g.price_per_hour));
    if (rest.length > 0) {
      labels.push(`other (${rest.length})`);
      data.push(rest.reduce((n, g) => n + (chartNumber(g.price_per_hour) ?? 0), 0));
    }
    charts.push({
      id: `${idPrefix}-${currency}`,
      title: `${title} (${currency} per hour)`,
      type: 'doughnut',
      labels,
      datasets: [{ label: `${currency} per hour`, data }],
      valueLabel: `${currency} per hour`,
      currency,
    });
  }
  return charts;
}

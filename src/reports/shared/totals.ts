/**
 * Totals per currency for the tables with money (ReportOutput.totals, ReportExport.totals): one
 * row per currency, the same keys as the columns, "Total" in the first text column that is not
 * the currency, money summed exactly (numeric in SQL) over every matching row, never a page.
 */
import type { Queryable } from '../../db/connection.js';
import type { Column, Row } from '../report.js';
import type { CurrencyTotal } from '../../costing/current-costs.js';

export const TOTAL_LABEL = 'Total';

/** The key of the column that says "Total": the first text column that does not hold a currency. */
export function totalLabelKey(columns: readonly Column[]): string | undefined {
  const currencyKeys = new Set(columns.map((c) => c.currencyKey).filter(Boolean));
  return columns.find((c) => c.kind === 'text' && !currencyKeys.has(c.key))?.key;
}

/** A totals row: "Total" in its label column, the given values, and nothing else. */
export function totalRow(columns: readonly Column[], values: Row): Row {
  const label = totalLabelKey(columns);
  return label ? { [label]: TOTAL_LABEL, ...values } : { ...values };
}

/**
 * Sums `keys` (decimal text or numbers) of in-memory rows per currency in SQL (numeric, exact),
 * skipping rows without a currency; one result per currency, in currency order, each key as
 * exact decimal text (null when every value was null).
 */
export async function sumByCurrency(q: Queryable, rows: readonly Row[], currencyKey: string, keys: readonly string[]): Promise<Array<Record<string, string | null> & { currency: string }>> {
  const priced = rows.filter((r) => typeof r[currencyKey] === 'string');
  if (priced.length === 0) return [];
  const columns = keys.map((_, i) => `v${i}`);
  const text = (v: unknown): string | null => (v === null || v === undefined || v === '' ? null : String(v));
  const found = await q.query<Record<string, string | null>>(
    `select currency, ${columns.map((c) => `trim_scale(sum(${c}))::text as ${c}`).join(', ')}
     from unnest($1::text[], ${columns.map((_, i) => `$${i + 2}::numeric[]`).join(', ')}) as t(currency, ${columns.join(', ')})
     group by currency order by currency`,
    [priced.map((r) => r[currencyKey]), ...keys.map((k) => priced.map((r) => text(r[k])))],
  );
  return found.map((r) => {
    const out: Record<string, string | null> & { currency: string } = { currency: String(r.currency) };
    keys.forEach((k, i) => (out[k] = r[`v${i}`] ?? null));
    return out;
  });
}

/**
 * The totals of the run-rate tables (cost, overview) from the per-currency run-rate, which the
 * cost model sums in SQL over every resource matching the filter, so the footer equals the sum of
 * the group rows (each resource is in exactly one group, "(untagged)" included) and the summary
 * cards. A currency's total is 100.00 % of itself.
 */
export function runRateTotals<T extends CurrencyTotal>(columns: readonly Column[], totals: readonly T[], extra: (t: T) => Row = () => ({})): Row[] {
  const keys = new Set(columns.map((c) => c.key));
  return totals
    .filter((t) => t.currency !== null)
    .map((t) => {
      const values: Row = { currency: t.currency, price_per_hour: t.price_per_hour, price_per_month: t.price_per_month, ...extra(t) };
      if (keys.has('share')) values.share = '100.00';
      if (keys.has('resources')) values.resources = t.resource_count;
      if (keys.has('unpriced')) values.unpriced = t.unpriced_count;
      return totalRow(columns, values);
    });
}

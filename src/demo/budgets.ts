import type { BudgetSettings } from '../config/index.js';

/** The inference project's (380103) spend per day at list prices: USD 279.0875 an hour, all kinds. */
const INFERENCE_PROJECT_USD_PER_DAY = 6698.1;
const DAY_MS = 86_400_000;

/**
 * The demo's budgets (simulator mode, when the configuration names none), so a newcomer sees one
 * budget of each status at once. Amounts from the demo company's list prices
 * (src/simulator/catalog.ts, the demo history's H100 training clusters):
 * - team ml runs about EUR 506 an hour at list prices (EUR 369,767 a month: bare metal H100 and
 *   A100 servers at EUR 24.58 to 25.60 an hour each): EUR 5,000 a month is spent within the
 *   month's first ten hours, so it is **over**;
 * - the platform project (380102) runs about EUR 99,538 a month in EUR: EUR 150,000 stays
 *   **on track** (about two thirds used at the month end);
 * - the inference project (380103) spends a steady USD 6,698.10 a day: its amount is set when the
 *   demo starts, halfway between the spend so far and the month's forecast (rounded to USD 100),
 *   so it is **at risk**: not reached yet, reached by the forecast.
 */
export function demoBudgets(now: Date): readonly BudgetSettings[] {
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const elapsedDays = (now.getTime() - monthStart) / DAY_MS;
  const leftDays = (monthEnd - now.getTime()) / DAY_MS;
  const atRisk = Math.round((INFERENCE_PROJECT_USD_PER_DAY * (elapsedDays + leftDays / 2)) / 100) * 100;
  return Object.freeze([
    { name: 'ML team (demo)', by: 'tag:team', value: 'ml', currency: 'EUR', period: 'month', amount: '5000', thresholds: [50, 80, 100], notify: [] },
    { name: 'Platform project (demo)', by: 'project', value: '380102', currency: 'EUR', period: 'month', amount: '150000', thresholds: [50, 80, 100], notify: [] },
    { name: 'Inference project (demo)', by: 'project', value: '380103', currency: 'USD', period: 'month', amount: String(atRisk), thresholds: [50, 80, 100], notify: [] },
  ]);
}

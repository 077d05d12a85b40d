import type { BudgetSettings } from '../config/index.js';

/**
 * The demo's two budgets (simulator mode, when the configuration names none), so a newcomer sees
 * one budget on track and one over at once. Amounts from the demo company's list prices
 * (src/simulator/catalog.ts, the demo history's H100 training clusters):
 * - team ml runs about EUR 506 an hour at list prices (EUR 369,767 a month: bare metal H100 and
 *   A100 servers at EUR 24.58 to 25.60 an hour each): EUR 5,000 a month is spent within the
 *   month's first ten hours, so it is **over**;
 * - the platform project (380102) runs about EUR 99,538 a month in EUR: EUR 150,000 stays
 *   **on track** (about two thirds used at the month end).
 */
export const DEMO_BUDGETS: readonly BudgetSettings[] = Object.freeze([
  { name: 'ML team (demo)', by: 'tag:team', value: 'ml', currency: 'EUR', amountPerMonth: '5000', thresholds: [50, 80, 100], notify: [] },
  { name: 'Platform project (demo)', by: 'project', value: '380102', currency: 'EUR', amountPerMonth: '150000', thresholds: [50, 80, 100], notify: [] },
]);

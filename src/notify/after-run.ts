/**
 * The collectors' afterRun hook (collect/run.ts runs it once a run has finished, before its
 * `run-finished` event): the alerts a collection can raise go into the outbox, budget thresholds
 * first, then the opt-in anomaly alerts. `start` and `collect` share it; the dispatcher sends them.
 */
import { budgetAlertsAfterRun, type BudgetAlertDeps } from '../budgets/alerts.js';
import { runAnomalyAlerts } from './anomaly-alerts.js';

export function alertsAfterRun(deps: BudgetAlertDeps): (finishedAt: Date) => Promise<void> {
  const budgetAlerts = budgetAlertsAfterRun(deps);
  return async (finishedAt) => {
    await budgetAlerts(finishedAt);
    await runAnomalyAlerts({ ...deps, now: finishedAt });
  };
}

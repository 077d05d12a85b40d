/**
 * The collectors' afterRun hook (collect/run.ts runs it once a run has finished, before its
 * `run-finished` event): the anomaly explanations the reports show by default are stored, then
 * the alerts a collection can raise go into the outbox, budget thresholds first, then the opt-in
 * anomaly alerts (which read the stored explanations). `start` and `collect` share it; the
 * dispatcher sends the alerts.
 */
import { budgetAlertsAfterRun, type BudgetAlertDeps } from '../budgets/alerts.js';
import { storeDefaultExplanations } from '../reports/anomalies.js';
import { runAnomalyAlerts } from './anomaly-alerts.js';

export function workAfterRun(deps: BudgetAlertDeps): (finishedAt: Date) => Promise<void> {
  const budgetAlerts = budgetAlertsAfterRun(deps);
  return async (finishedAt) => {
    await storeExplanationsAfterRun({ ...deps, now: finishedAt });
    await budgetAlerts(finishedAt);
    await runAnomalyAlerts({ ...deps, now: finishedAt });
  };
}

/** Stores the default anomaly explanations; a failure is logged and never fails the run (the report explains live meanwhile). */
async function storeExplanationsAfterRun(deps: BudgetAlertDeps & { now: Date }): Promise<void> {
  const started = performance.now();
  try {
    const counts = await storeDefaultExplanations({ db: deps.db, config: deps.config, now: deps.now });
    if (counts.explained > 0) deps.logger.info({ component: 'anomalies', ...counts, durationMs: Math.round(performance.now() - started) }, 'anomaly explanations stored');
  } catch (err) {
    deps.logger.error({ err, component: 'anomalies' }, 'storing anomaly explanations failed (the report explains those days live)');
  }
}

/**
 * The collectors' afterRun hook (collect/run.ts runs it once a run has finished, before its
 * `run-finished` event): the read models built from the new snapshots are refreshed (the current
 * instances the idle list reads, the anomaly explanations the reports show by default), then the
 * alerts a collection can raise go into the outbox, budget thresholds first, then the opt-in
 * anomaly alerts (which read the stored explanations). `start` and `collect` share it; the
 * dispatcher sends the alerts. Each step's failure is logged and never fails the run: readers of
 * a read model not refreshed read the snapshots meanwhile.
 */
import { budgetAlertsAfterRun, type BudgetAlertDeps } from '../budgets/alerts.js';
import { storeDefaultExplanations } from '../reports/anomalies.js';
import { refreshCurrentInstances } from '../read-models/current-instances-store.js';
import { runAnomalyAlerts } from './anomaly-alerts.js';

export function workAfterRun(deps: BudgetAlertDeps): (finishedAt: Date) => Promise<void> {
  const budgetAlerts = budgetAlertsAfterRun(deps);
  return async (finishedAt) => {
    await refreshCurrentInstancesAfterRun(deps);
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

/** Refreshes current_instances when the snapshots or the idle settings changed (also run at start-up). */
export async function refreshCurrentInstancesAfterRun(deps: BudgetAlertDeps): Promise<void> {
  const started = performance.now();
  try {
    const refreshed = await refreshCurrentInstances(deps.db, deps.config);
    if (refreshed !== null) deps.logger.info({ component: 'idle', ...refreshed, durationMs: Math.round(performance.now() - started) }, 'current instances refreshed');
  } catch (err) {
    deps.logger.error({ err, component: 'idle' }, 'refreshing the current instances failed (the idle list reads the snapshots meanwhile)');
  }
}

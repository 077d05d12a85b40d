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

/**
 * Runs one read-model step of the hook, logs what it did (when `done` says anything) and how long
 * it took; a failure is logged and never fails the run (`fallback` says what readers do meanwhile).
 */
async function loggedStep<T>(deps: BudgetAlertDeps, component: string, step: () => Promise<T>, done: (result: T) => [object, string] | null, fallback: string): Promise<void> {
  const started = performance.now();
  try {
    const said = done(await step());
    if (said) deps.logger.info({ component, ...said[0], durationMs: Math.round(performance.now() - started) }, said[1]);
  } catch (err) {
    deps.logger.error({ err, component }, fallback);
  }
}

/** Stores the default anomaly explanations (the report explains live meanwhile). */
function storeExplanationsAfterRun(deps: BudgetAlertDeps & { now: Date }): Promise<void> {
  return loggedStep(
    deps,
    'anomalies',
    () => storeDefaultExplanations({ db: deps.db, config: deps.config, now: deps.now }),
    (counts) => (counts.explained > 0 ? [counts, 'anomaly explanations stored'] : null),
    'storing anomaly explanations failed (the report explains those days live)',
  );
}

/** Refreshes current_instances when the snapshots or the idle settings changed (also run at start-up). */
export function refreshCurrentInstancesAfterRun(deps: BudgetAlertDeps): Promise<void> {
  return loggedStep(
    deps,
    'idle',
    () => refreshCurrentInstances(deps.db, deps.config),
    (refreshed) => (refreshed !== null ? [refreshed, 'current instances refreshed'] : null),
    'refreshing the current instances failed (the idle list reads the snapshots meanwhile)',
  );
}

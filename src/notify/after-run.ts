/**
 * The collectors' afterRun hook (collect/run.ts runs it once a run has finished, before its
 * `run-finished` event): first what is derived from the new snapshots (costing/derive), then the
 * alerts a collection can raise go into the outbox, budget thresholds first, then the opt-in
 * anomaly alerts (which read the stored explanations). `start` and `collect` share it; the
 * dispatcher sends the alerts.
 */
import { budgetAlertsAfterRun, type BudgetAlertDeps } from '../budgets/alerts.js';
import { deriveAfterRun, refreshCurrentInstancesLogged, type DeriveDeps } from '../costing/derive/after-run.js';
import { idleTagExtraction } from '../read-models/idle-rules-sql.js';
import { explanationSource } from '../reports/anomalies.js';
import { runAnomalyAlerts } from './anomaly-alerts.js';

export function workAfterRun(deps: BudgetAlertDeps): (finishedAt: Date) => Promise<void> {
  const budgetAlerts = budgetAlertsAfterRun(deps);
  const derive = deriveDeps(deps);
  return async (finishedAt) => {
    await deriveAfterRun(derive, finishedAt);
    await budgetAlerts(finishedAt);
    await runAnomalyAlerts({ ...deps, now: finishedAt });
  };
}

/** Refreshes current_instances when the snapshots or the idle settings changed (run at start-up). */
export function refreshCurrentInstancesAfterRun(deps: BudgetAlertDeps): Promise<void> {
  return refreshCurrentInstancesLogged(deriveDeps(deps));
}

function deriveDeps(deps: BudgetAlertDeps): DeriveDeps {
  return {
    db: deps.db,
    logger: deps.logger,
    tagExtraction: idleTagExtraction(deps.config),
    explanations: (now) => explanationSource({ db: deps.db, config: deps.config, now }),
  };
}

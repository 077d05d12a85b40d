/**
 * What is derived from the snapshots after each collection run (and at start-up): fresh table
 * statistics (db/analyse.ts), the current instances the idle list reads and the anomaly
 * explanations the reports show by default. Each step's failure is logged and never fails the
 * run: readers of a derived table not refreshed read the snapshots meanwhile.
 */
import { analyseChangedTables } from '../../db/analyse.js';
import type { Database } from '../../db/connection.js';
import type { Logger } from '../../logger.js';
import { storeExplanations, type ExplanationSource } from './anomaly-explanations.js';
import { refreshCurrentInstances, type TagExtraction } from './current-instances.js';

export interface DeriveDeps {
  db: Database;
  logger: Logger;
  /** The idle rules' tag inputs current_instances extracts. */
  tagExtraction: TagExtraction;
  /** What to explain after a run finished at `now` (the anomalies report's defaults). */
  explanations(now: Date): ExplanationSource;
}

/** Analyses the tables the run changed, refreshes the current instances, then stores the default anomaly explanations. */
export async function deriveAfterRun(deps: DeriveDeps, finishedAt: Date): Promise<void> {
  await loggedStep(
    deps.logger,
    'statistics',
    () => analyseChangedTables(deps.db),
    (tables) => (tables.length > 0 ? [{ tables }, 'tables analysed'] : null),
    'analysing the changed tables failed (plans use the older statistics)',
  );
  await refreshCurrentInstancesLogged(deps);
  await loggedStep(
    deps.logger,
    'anomalies',
    () => storeExplanations(deps.db, finishedAt, deps.explanations(finishedAt)),
    (counts) => (counts.explained > 0 ? [counts, 'anomaly explanations stored'] : null),
    'storing anomaly explanations failed (the report explains those days live)',
  );
}

/** Refreshes current_instances when the snapshots or the idle settings changed (also run at start-up). */
export function refreshCurrentInstancesLogged(deps: Pick<DeriveDeps, 'db' | 'logger' | 'tagExtraction'>): Promise<void> {
  return loggedStep(
    deps.logger,
    'idle',
    () => refreshCurrentInstances(deps.db, deps.tagExtraction),
    (refreshed) => (refreshed !== null ? [refreshed, 'current instances refreshed'] : null),
    'refreshing the current instances failed (the idle list reads the snapshots meanwhile)',
  );
}

/**
 * Runs one step, logs what it did (when `done` says anything) and how long it took; a failure is
 * logged and never thrown (`fallback` says what readers do meanwhile).
 */
async function loggedStep<T>(logger: Logger, component: string, step: () => Promise<T>, done: (result: T) => [object, string] | null, fallback: string): Promise<void> {
  const started = performance.now();
  try {
    const said = done(await step());
    if (said) logger.info({ component, ...said[0], durationMs: Math.round(performance.now() - started) }, said[1]);
  } catch (err) {
    logger.error({ err, component }, fallback);
  }
}

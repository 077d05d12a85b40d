/** Collection: collectors, runs, scheduling, retention and the `collect` command. */
export { runCollection, startCollection, defaultRunnerId, type StartedCollection } from './run.js';
export {
  createCollectionService,
  lastGoodCollectionAt,
  DEFAULT_PRUNE_SCHEDULE,
  type CollectionService,
  type CollectionServiceOptions,
  type CollectionStatus,
  type CollectNowResult,
} from './service.js';
export { pruneHistory, type PruneOptions, type PruneResult } from './retention.js';
export { createPgRunCoordinator, type PgRunCoordinator } from './coordinator.js';
export { failDeadRuns, failRun, runLockName, runnerSessionName, runSessionName, stalledRuns, type StalledRun } from './run-record.js';
export { staleScopes } from './staleness.js';
export { failingUnits, groupFailures, type FailureGroup, type UnitFailure } from './failures.js';
export { failureReason } from './errors.js';
export {
  runCollectCommand,
  DEFAULT_STOP_TIMEOUT_MS,
  EXIT_ALREADY_RUNNING,
  EXIT_FAILED,
  EXIT_PARTIAL,
  EXIT_SUCCEEDED,
  type CollectCommandOptions,
} from './command.js';
export { orderedCollectorNames } from './collectors/index.js';
export type {
  CollectorDeps,
  CollectorName,
  CollectorSummary,
  ProgressEvent,
  RowCounts,
  RunCollectionOptions,
  RunError,
  RunStatus,
  RunSummary,
  RunTrigger,
} from './types.js';

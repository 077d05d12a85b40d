/** Running cloudtally in production: metrics, health, start-up and shutdown. */
export { createMetrics, routeLabel, type ActionObservation, type Metrics, type MetricsOptions } from './metrics.js';
export { metricsRouter, type MetricsAccess } from './metrics-route.js';
export { createReadinessCheck, healthRouter, latestJournalEntry, type CheckResult, type HealthDeps, type Readiness } from './health.js';
export { collectionAllowanceMs, longestGapMs } from './allowance.js';
export {
  shutdownService,
  type Closable,
  type ShutdownOptions,
  type ShutdownParts,
  type ShutdownReport,
  type StepReport,
  type Stoppable,
} from './lifecycle.js';
export { ensureCanListen, formatAddress, listenError } from './port.js';
export {
  EX_CANTCREAT,
  EX_SOFTWARE,
  EX_TEMPFAIL,
  EX_UNAVAILABLE,
  StartupError,
  connectWithRetry,
  databaseTargetOf,
  migrateOrFail,
  openMigratedDatabase,
  sessionOptions,
  type ConnectRetryOptions,
} from './startup.js';
export { TimeoutError, withTimeout } from './timeout.js';

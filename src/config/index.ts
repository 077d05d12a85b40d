/**
 * cloudtally's configuration: loadConfig reads the environment and the optional JSON file once and
 * gives a deep-frozen Config (src/config/load.ts); each section's settings are built in their own
 * module of this folder. Callers import from here.
 */
export { loadConfig, type LoadConfigOptions } from './load.js';
export { ConfigError, type ConfigProblem } from './problems.js';
export { describeConfig } from './redact.js';
export {
  COLLECTOR_NAMES,
  LOG_LEVELS,
  METRICS_ACCESS_MODES,
  type AnomalySettings,
  type AuthSettings,
  type AuthUser,
  BUDGET_PERIODS,
  type BudgetPeriod,
  type BudgetSettings,
  type ChannelSettings,
  type ClientSettings,
  type CloudConfig,
  type CollectionRunSettings,
  type CollectorName,
  type Config,
  type DatabaseSessionSettings,
  type DatabaseSettings,
  type DeepReadonly,
  type DeliverySettings,
  type EmailChannel,
  type FocusSettings,
  type IdleRulesSettings,
  type LogLevel,
  type LoginThrottleSettings,
  type MetricsAccessMode,
  type MetricsSettings,
  type NotificationSettings,
  type OidcSettings,
  type OutboxSettings,
  type ProxyAuthSettings,
  type ProxyTeamScopes,
  type Scope,
  type SimulatorSettings,
  type SmtpSettings,
  type WebhookChannel,
  type WebSettings,
} from './types.js';
export { DEFAULT_ANOMALY_GROUPINGS } from './anomalies.js';
export { BUDGET_GROUPINGS, BudgetSchema, DEFAULT_BUDGET_THRESHOLDS, normaliseBudget, type BudgetInput } from './budgets.js';
export { DEMO_HISTORY_STEP_HOURS } from './cloud.js';
export { DEFAULT_HEARTBEAT_SECONDS, DEFAULT_SCHEDULES } from './collect.js';
export { DEFAULT_DB_LOCK_TIMEOUT_SECONDS } from './database.js';
export { deliveryParamProblems, type DeliverableReport } from './deliveries.js';
export { DEFAULT_FOCUS_BILLING_ACCOUNT_ID, DEFAULT_FOCUS_PROVIDER_NAME } from './focus.js';
export { unknownChannelProblems } from './notify.js';
export { METRICS_TOKEN_MIN_LENGTH } from './ops.js';
export { scopesFromManifest } from './scopes.js';

export { AUDIT_ACTIONS, AUDIT_RESULTS, appendAudit, type AuditAction, type AuditEntry, type AuditResult } from './audit.js';
export { instanceDataAge, loadInstancesByRef, type CurrentInstance } from '../costing/current-instances.js';
export { addDecimal, compareDecimal, totalsByCurrency, type MoneyTotal } from '../read-models/decimal.js';
export {
  describeIdleRules,
  evaluateIdleRules,
  IDLE_RULE_TITLES,
  IDLE_RULES,
  isOffHoursNow,
  localTime,
  parseExpiry,
  type IdleRuleId,
  type IdleRuleSettings,
  type IdleSubject,
  type RuleMatch,
} from '../read-models/idle-rules.js';
export { sendWebhook, type WebhookResult } from './notify.js';
export { DUE_STOPS_SCHEDULE, startDueStopsScheduler, type DueStopsScheduler } from './scheduler.js';
export { formatInstanceRef, MAX_REFS_PER_REQUEST, parseInstanceRef, parseInstanceRefs, type InstanceRef } from '../read-models/refs.js';
export {
  cancelScheduledStop,
  getScheduledStop,
  notifyCancelled,
  notifyScheduled,
  runDueStops,
  SCHEDULER_ACTOR,
  scheduleStops,
  type RunDueStopsDeps,
  type ScheduledStop,
  type ScheduledStopsDeps,
} from './scheduled-stops.js';
export {
  executeStop,
  planStop,
  type ExecuteStopDeps,
  type StopActor,
  type StopBatchResult,
  type StopClient,
  type StopOutcome,
  type StopPlan,
  type StopPlanItem,
  type StopRequest,
  type StopResult,
} from './stop.js';
export { refuseOutOfScope, type ScopeRefusal, type ScopedActor } from './scope-guard.js';

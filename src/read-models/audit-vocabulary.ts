/** The audit log's actions and results, shared by the actions that write it and the report that reads it. */

export const AUDIT_ACTIONS = {
  stop: 'stop',
  scheduleStop: 'schedule_stop',
  cancelScheduledStop: 'cancel_scheduled_stop',
  createBudget: 'budget_create',
  changeBudget: 'budget_change',
  archiveBudget: 'budget_archive',
  createView: 'view_create',
  changeView: 'view_change',
  deleteView: 'view_delete',
} as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/** Results written to audit_log.result. `stopped` rows also drive instance_status_overrides. */
export const AUDIT_RESULTS = ['stopped', 'already_stopped', 'not_found', 'failed', 'would_stop', 'scheduled', 'cancelled', 'budget_created', 'budget_changed', 'budget_archived', 'view_created', 'view_changed', 'view_deleted', 'refused'] as const;
export type AuditResult = (typeof AUDIT_RESULTS)[number];

/** What each result means, for people (pages and the audit report's Outcome column). */
export const AUDIT_RESULT_LABELS: Record<AuditResult, string> = {
  stopped: 'Stopped',
  already_stopped: 'Already stopped (no-op)',
  not_found: 'No longer exists (no-op)',
  failed: 'Failed',
  would_stop: 'Would be stopped (dry run)',
  scheduled: 'Stop scheduled',
  cancelled: 'Scheduled stop cancelled',
  budget_created: 'Budget created',
  budget_changed: 'Budget changed',
  budget_archived: 'Budget archived',
  view_created: 'Saved view created',
  view_changed: 'Saved view changed',
  view_deleted: 'Saved view deleted',
  refused: 'Refused (outside the user\'s scope)',
};

import type { Queryable } from '../db/connection.js';

/*
 * The audit log (table audit_log) is append-only: the database refuses UPDATE, DELETE and
 * TRUNCATE (migrations/0001), and this module only inserts. Every attempt of an action gets its
 * row, dry runs and failures included.
 */

export const AUDIT_ACTIONS = {
  stop: 'stop',
  scheduleStop: 'schedule_stop',
  cancelScheduledStop: 'cancel_scheduled_stop',
} as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/** Results written to audit_log.result. `stopped` rows also drive instance_status_overrides. */
export const AUDIT_RESULTS = ['stopped', 'already_stopped', 'not_found', 'failed', 'would_stop', 'scheduled', 'cancelled'] as const;
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
};

export interface AuditEntry {
  at: Date;
  actor: string;
  role: string;
  action: AuditAction;
  instanceId: string | null;
  projectId: number | null;
  regionId: number | null;
  reason: string | null;
  dryRun: boolean;
  result: AuditResult;
  error: string | null;
  taskIds: string[];
}

/** Appends one row; returns its id. */
export async function appendAudit(q: Queryable, entry: AuditEntry): Promise<number> {
  const rows = await q.query<{ id: string }>(
    `INSERT INTO audit_log (at, actor, role, action, instance_id, project_id, region_id, reason, dry_run, result, error, task_ids)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb) RETURNING id`,
    [
      entry.at.toISOString(),
      entry.actor,
      entry.role,
      entry.action,
      entry.instanceId,
      entry.projectId,
      entry.regionId,
      entry.reason,
      entry.dryRun,
      entry.result,
      entry.error,
      JSON.stringify(entry.taskIds),
    ],
  );
  return Number(rows[0]!.id);
}

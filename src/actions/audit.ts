import type { Queryable } from '../db/connection.js';

/*
 * The audit log (table audit_log) is append-only: the database refuses UPDATE, DELETE and
 * TRUNCATE (migrations/0001), and this module only inserts. Every attempt of an action gets its
 * row, dry runs and failures included.
 */

export { AUDIT_ACTIONS, AUDIT_RESULTS, AUDIT_RESULT_LABELS, type AuditAction, type AuditResult } from '../read-models/audit-vocabulary.js';
import type { AuditAction, AuditResult } from '../read-models/audit-vocabulary.js';

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

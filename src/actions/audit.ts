import type { Queryable } from '../db/connection.js';
import { queryRows, sql } from '../db/statement.js';

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
  const e = entry;
  const rows = await queryRows<{ id: string }>(
    q,
    sql`INSERT INTO audit_log (at, actor, role, action, instance_id, project_id, region_id, reason, dry_run, result, error, task_ids)
     VALUES (${e.at.toISOString()}, ${e.actor}, ${e.role}, ${e.action}, ${e.instanceId}, ${e.projectId}, ${e.regionId}, ${e.reason},
       ${e.dryRun}, ${e.result}, ${e.error}, ${JSON.stringify(e.taskIds)}::jsonb) RETURNING id`,
  );
  return Number(rows[0]!.id);
}

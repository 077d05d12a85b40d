import type { Queryable } from '../db/connection.js';
import type { TagScope } from '../db/access-scope-sql.js';
import { loadInstancesByRef } from '../costing/current-instances.js';
import { formatInstanceRef, sameRef, type InstanceRef } from '../read-models/refs.js';
import { AUDIT_ACTIONS, appendAudit, type AuditAction } from './audit.js';

/*
 * Team-scoped access for actions: a scoped operator acts only on instances (and cluster servers)
 * whose tag is in their scope, as cloudtally last collected them. Any other (another team's,
 * untagged, or not in the collected data) is refused before anything is sent or scheduled, and
 * each refusal gets its audit row.
 */

export interface ScopedActor {
  name: string;
  role: string;
  /** null: acts on everything. */
  scope: (TagScope & { by?: string }) | null;
}

export interface ScopeRefusal {
  refs: InstanceRef[];
  /** One sentence for people, naming only the references the user gave. */
  message: string;
}

/** The refs outside the actor's scope (null when all are inside), each refusal audited. */
export async function refuseOutOfScope(
  db: Queryable,
  actor: ScopedActor,
  refs: readonly InstanceRef[],
  context: { action?: AuditAction; reason: string | null; now: Date; /** false: a look (the confirmation page), not an attempt: nothing audited. */ audit?: boolean },
): Promise<ScopeRefusal | null> {
  const scope = actor.scope;
  if (!scope) return null;
  const found = await loadInstancesByRef(db, refs);
  const outside = refs.filter((ref) => {
    const instance = found.find((i) => sameRef(i.ref, ref));
    const value = instance?.tags[scope.key];
    return value === undefined || !scope.values.includes(value);
  });
  if (outside.length === 0) return null;
  const allowed = `${scope.key} = ${scope.values.join(' or ')}`;
  for (const ref of context.audit === false ? [] : outside) {
    await appendAudit(db, {
      at: context.now,
      actor: actor.name,
      role: actor.role,
      action: context.action ?? AUDIT_ACTIONS.stop,
      instanceId: ref.instanceId,
      projectId: ref.projectId,
      regionId: ref.regionId,
      reason: context.reason,
      dryRun: false,
      result: 'refused',
      error: `outside the user's scope (${allowed})`,
      taskIds: [],
    });
  }
  const listed = outside.map(formatInstanceRef).join(', ');
  return {
    refs: outside,
    message: `Nothing was done: ${listed} ${outside.length === 1 ? 'is' : 'are'} not tagged ${allowed} in the collected data, and you may act only on resources tagged so. ${context.audit === false ? '' : 'The refusal is in the audit log.'}`.trimEnd(),
  };
}

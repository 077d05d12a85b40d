/**
 * Saved views: a user's named report URLs. Each create, change and delete and its audit row are
 * written in one transaction. Who may change what is decided here, once: the owner always; an
 * admin a view of another only when it is shared (a private view of another is not found).
 */
import type { Role } from '../auth/roles.js';
import { roleAtLeast } from '../auth/roles.js';
import type { Database, Queryable } from '../db/connection.js';
import { queryRows, sql } from '../db/statement.js';
import { savedView, type SavedView } from '../read-models/saved-views.js';
import { AUDIT_ACTIONS, appendAudit, type AuditAction, type AuditResult } from './audit.js';

export interface ViewActor {
  /** The name shown in the audit log. */
  name: string;
  /** The account key (auth/identity.ts accountKey): the owner of what this actor saves. */
  key: string;
  role: Role;
}

export interface ViewWriteDeps {
  db: Database;
  now: Date;
}

export class ViewNameTakenError extends Error {
  constructor(readonly viewName: string) {
    super(`you already have a view named "${viewName}" (names are compared case-insensitively)`);
    this.name = 'ViewNameTakenError';
  }
}

/** The actor may see the view but not change it (a shared view of another user, not an admin). */
export class ViewForbiddenError extends Error {
  constructor(readonly view: SavedView) {
    super(`The view "${view.name}" belongs to ${view.owner}: only its owner or an admin may change or delete it.`);
    this.name = 'ViewForbiddenError';
  }
}

/** Whether `actor` may see the view (and open its link). */
export function maySee(view: Pick<SavedView, 'owner' | 'shared'>, actor: Pick<ViewActor, 'key'>): boolean {
  return view.owner === actor.key || view.shared;
}

/** Whether `actor` may rename, share or delete the view. */
export function mayChange(view: Pick<SavedView, 'owner' | 'shared'>, actor: Pick<ViewActor, 'key' | 'role'>): boolean {
  return view.owner === actor.key || (view.shared && roleAtLeast(actor.role, 'admin'));
}

function audit(tx: Queryable, now: Date, actor: ViewActor, action: AuditAction, result: AuditResult, reason: string): Promise<number> {
  return appendAudit(tx, { at: now, actor: actor.name, role: actor.role, action, instanceId: null, projectId: null, regionId: null, reason, dryRun: false, result, error: null, taskIds: [] });
}

/** A unique violation of saved_views_owner_name_uq is "name taken", whoever got there first. */
function rethrowNameTaken(err: unknown, name: string): never {
  const e = err as { code?: string; message?: string };
  if (e?.code === '23505' || /saved_views_owner_name_uq/.test(e?.message ?? '')) throw new ViewNameTakenError(name);
  throw err;
}

const describe = (v: { name: string; path: string; shared: boolean }) => `"${v.name}" ${v.shared ? 'shared' : 'private'}: ${v.path}`;

export async function createView(deps: ViewWriteDeps, actor: ViewActor, view: { name: string; path: string; shared: boolean }): Promise<number> {
  try {
    return await deps.db.transaction(async (tx) => {
      const at = deps.now.toISOString();
      const [row] = await queryRows<{ id: string }>(
        tx,
        sql`insert into saved_views (name, path, owner, shared, created_at, updated_at) values (${view.name}, ${view.path}, ${actor.key}, ${view.shared}, ${at}, ${at}) returning id`,
      );
      const id = Number(row!.id);
      await audit(tx, deps.now, actor, AUDIT_ACTIONS.createView, 'view_created', `view #${id} ${describe(view)}`);
      return id;
    });
  } catch (err) {
    rethrowNameTaken(err, view.name);
  }
}

/**
 * Renames and/or shares or unshares a view (a field left undefined stays). Null when the actor may
 * not see it; ViewForbiddenError when they may see but not change it. Nothing changed: no audit row.
 */
export async function changeView(deps: ViewWriteDeps, actor: ViewActor, id: number, change: { name?: string; shared?: boolean }): Promise<SavedView | null> {
  const name = change.name;
  try {
    return await deps.db.transaction(async (tx) => {
      const before = await savedView(tx, id, { forUpdate: true });
      if (!before || !maySee(before, actor)) return null;
      if (!mayChange(before, actor)) throw new ViewForbiddenError(before);
      const after = { name: name ?? before.name, shared: change.shared ?? before.shared };
      const diff = [
        after.name !== before.name ? `name "${before.name}" -> "${after.name}"` : null,
        after.shared !== before.shared ? (after.shared ? 'shared' : 'unshared') : null,
      ].filter((d): d is string => d !== null);
      if (diff.length === 0) return before;
      await tx.query('update saved_views set name = $2, shared = $3, updated_at = $4 where id = $1', [id, after.name, after.shared, deps.now.toISOString()]);
      await audit(tx, deps.now, actor, AUDIT_ACTIONS.changeView, 'view_changed', `view #${id} "${before.name}" of ${before.owner}: ${diff.join('; ')}`);
      return savedView(tx, id);
    });
  } catch (err) {
    if (err instanceof ViewForbiddenError || name === undefined) throw err;
    rethrowNameTaken(err, name);
  }
}

/** Deletes a view; null when the actor may not see it, ViewForbiddenError when they may not delete it. */
export async function deleteView(deps: ViewWriteDeps, actor: ViewActor, id: number): Promise<SavedView | null> {
  return deps.db.transaction(async (tx) => {
    const view = await savedView(tx, id, { forUpdate: true });
    if (!view || !maySee(view, actor)) return null;
    if (!mayChange(view, actor)) throw new ViewForbiddenError(view);
    await tx.query('delete from saved_views where id = $1', [id]);
    await audit(tx, deps.now, actor, AUDIT_ACTIONS.deleteView, 'view_deleted', `view #${id} of ${view.owner} deleted: ${describe(view)}`);
    return view;
  });
}

/**
 * Team-scoped access in reports: the scope a report context carries and the one SQL predicate
 * every resource-level query applies (db/access-scope-sql.ts, shared with actions/ and read-models/).
 */
import { accessScopeId, type AccessScope } from '../../auth/access-scope.js';
import type { ReportContext } from '../report.js';

export { scopeCondition, type TagScope } from '../../db/access-scope-sql.js';

/** The scope of a report's context: null (everything) when the context names none. */
export function scopeOf(ctx: Pick<ReportContext, 'scope'>): AccessScope | null {
  return ctx.scope ?? null;
}

/** The part of a report cache key that keeps scoped and unscoped answers apart. */
export function scopeCacheKeyPart(ctx: Pick<ReportContext, 'scope'>): string {
  const scope = scopeOf(ctx);
  return scope ? accessScopeId(scope) : 'all';
}

/**
 * Team-scoped access in reports: the scope a report context carries and the one SQL predicate
 * every resource-level query applies (db/access-scope-sql.ts, shared with actions/ and read-models/).
 */
import { accessScopeId, describeAccessScope, type AccessScope } from '../../auth/access-scope.js';
import { partitionsCompleteFrom } from '../../costing/derive/partition-keys.js';
import type { ReportContext } from '../report.js';
import type { ReportCtx } from './types.js';

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

/**
 * What a scoped user's cost figures are, said on the report: their scope's resources only, and
 * from when those figures are known (costing/derive/partition-keys.ts): days sealed before the
 * scope's tag key was configured keep only company-wide figures.
 */
export async function scopedCostNotes(ctx: Pick<ReportCtx, 'scope' | 'db'>): Promise<string[]> {
  const scope = scopeOf(ctx);
  if (!scope) return [];
  const from = await partitionsCompleteFrom(ctx.db, scope.key);
  const said = `Figures of the resources whose tag ${describeAccessScope(scope)} only (your access scope); totals, charts and shares are of those resources.`;
  if (from === '-infinity') return [said];
  if (from === null) return [said, `Your scope's figures are being prepared from the kept history: until then, days before the latest collection may show less than your resources cost.`];
  return [said, `Your scope's figures start on ${from.toISOString().slice(0, 10)}: the days before were summarised (their detail thinned) before the scope's tag key was configured, so they are not known for your scope.`];
}

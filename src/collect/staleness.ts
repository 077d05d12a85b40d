/** Which configured scopes have no recent good inventory (the web banner's "stale" list). */
import cron from 'node-cron';
import type { CollectorName } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import { scopeKeyOf, type SnapshotKind } from '../db/schema.js';
import type { ScopeConfig } from './types.js';

const intervals = new Map<string, number>();

/** The shortest gap between the next few runs of a cron expression, in ms. */
export function scheduleIntervalMs(expression: string): number {
  const known = intervals.get(expression);
  if (known !== undefined) return known;
  const task = cron.createTask(expression, () => undefined);
  try {
    const runs = task.getNextRuns(4).map((d) => d.getTime());
    let gap = Infinity;
    for (let i = 1; i < runs.length; i++) gap = Math.min(gap, runs[i]! - runs[i - 1]!);
    const interval = Number.isFinite(gap) ? gap : 24 * 60 * 60 * 1000;
    intervals.set(expression, interval);
    return interval;
  } finally {
    void task.destroy();
  }
}

/**
 * Scope keys whose latest complete cluster (or, with security groups, instance) snapshot is
 * missing or older than twice the collector's schedule interval.
 */
export async function staleScopes(
  db: Queryable,
  scopes: readonly ScopeConfig[],
  schedules: Readonly<Record<CollectorName, string>>,
  now: Date = new Date(),
): Promise<string[]> {
  if (scopes.length === 0) return [];
  const latest = await db.query<{ kind: SnapshotKind; scope_key: string; taken_at: Date }>(
    `SELECT DISTINCT ON (kind, scope_key) kind, scope_key, taken_at
       FROM snapshots
      WHERE complete AND kind IN ('cluster', 'instance')
      ORDER BY kind, scope_key, taken_at DESC`,
  );
  const takenAt = new Map(latest.map((r) => [`${r.kind}/${r.scope_key}`, r.taken_at.getTime()]));
  const stale: string[] = [];
  for (const scope of scopes) {
    const key = scopeKeyOf(scope.projectId, scope.regionId);
    const checks: Array<[SnapshotKind, CollectorName]> = [['cluster', 'clusters']];
    if (scope.securityGroups.length > 0) checks.push(['instance', 'instances']);
    const isStale = checks.some(([kind, collector]) => {
      const at = takenAt.get(`${kind}/${key}`);
      return at === undefined || now.getTime() - at > 2 * scheduleIntervalMs(schedules[collector]);
    });
    if (isStale) stale.push(key);
  }
  return stale;
}

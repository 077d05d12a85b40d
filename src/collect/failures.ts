/**
 * Which units (collector + scope) are failing now: those whose latest finished run of their
 * collector recorded an error for them and wrote no complete snapshot of them. A unit stays
 * failing until a later run of that collector completes it (or no longer runs it: a scope removed
 * from the configuration). A run that failed as a whole (died, broke, stopped) counts as failing
 * under collector and scope `*` until a later run finishes. Warnings and errors about single items
 * of a completed snapshot are not failures. The web banner, /readyz and the metrics read this.
 */
import { COLLECTOR_NAMES } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import type { FailureCause, RunError } from '../db/schema.js';
import { COLLECTORS } from './collectors/index.js';
import { causeOfStatus, failureReason } from './errors.js';

export interface UnitFailure {
  /** Collector name, or `*` for a run that failed as a whole. */
  collector: string;
  /** Scope key, `global`, or `*`. */
  scope: string;
  runId: number;
  failedAt: Date | null;
  status: number | null;
  cause: FailureCause;
  /** For people: "API key not accepted (401)", "cloud API unreachable"... */
  reason: string;
  /** The recorded one-line error. */
  message: string;
}

export async function failingUnits(db: Queryable): Promise<UnitFailure[]> {
  const names = [...COLLECTOR_NAMES];
  const rows = await db.query<{ collector: string; run_id: number; finished_at: Date | null; error: RunError }>(
    `with latest as (
        select c.collector, c.kind, r.id, r.finished_at, r.errors
          from unnest($1::text[], $2::text[]) as c(collector, kind)
          cross join lateral (
            select id, finished_at, errors from collection_runs
             where status <> 'running' and c.collector = any(collectors)
             order by started_at desc, id desc limit 1) r
      ),
      last_run as (
        select id, finished_at, errors, status from collection_runs where status <> 'running' order by started_at desc, id desc limit 1
      )
      select l.collector, l.id as run_id, l.finished_at, e.value as error
        from latest l cross join lateral jsonb_array_elements(l.errors) e
       where e.value ->> 'collector' = l.collector
         and coalesce(e.value ->> 'severity', '') <> 'warning'
         and not exists (select 1 from snapshots s
                          where s.run_id = l.id and s.kind = l.kind and s.scope_key = e.value ->> 'scope' and s.complete)
      union all
      select '*', r.id, r.finished_at, e.value
        from last_run r cross join lateral jsonb_array_elements(r.errors) e
       where r.status = 'failed' and e.value ->> 'collector' = '*'
      order by 1, 2`,
    [names, names.map((n) => COLLECTORS[n].kind)],
  );
  const failures = rows.map((r): UnitFailure => ({
    collector: r.collector,
    scope: r.error.scope,
    runId: r.run_id,
    failedAt: r.finished_at,
    status: r.error.status,
    cause: r.error.cause ?? causeOfStatus(r.error.status),
    reason: failureReason(r.error),
    message: r.error.message,
  }));
  // "Nothing to work from" is a consequence: shown only where the scope has no failure of its own.
  const hasOwn = new Set(failures.filter((f) => f.cause !== 'dependency').map((f) => f.scope));
  return failures.filter((f) => f.cause !== 'dependency' || !hasOwn.has(f.scope));
}

/**
 * The failures grouped by reason, each with its scopes, collectors and the latest run: what a
 * banner shows ("API key not accepted (401): p1-r2, p3-r4 (clusters, instances; run #12)").
 */
export interface FailureGroup {
  reason: string;
  scopes: string[];
  collectors: string[];
  runIds: number[];
}

export function groupFailures(failures: readonly UnitFailure[]): FailureGroup[] {
  const groups = new Map<string, FailureGroup>();
  for (const f of failures) {
    let group = groups.get(f.reason);
    if (!group) groups.set(f.reason, (group = { reason: f.reason, scopes: [], collectors: [], runIds: [] }));
    if (!group.scopes.includes(f.scope)) group.scopes.push(f.scope);
    if (!group.collectors.includes(f.collector)) group.collectors.push(f.collector);
    if (!group.runIds.includes(f.runId)) group.runIds.push(f.runId);
  }
  for (const g of groups.values()) {
    g.scopes.sort();
    g.collectors.sort();
    g.runIds.sort((a, b) => a - b);
  }
  return [...groups.values()];
}

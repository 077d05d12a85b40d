/**
 * "Latest good data": per (kind, scope) the newest COMPLETE snapshot. Every report reads only
 * these (history reports read rollups / cost_daily), and says how old they are.
 */
import type { Queryable } from '../../db/connection.js';
import type { SnapshotKind } from '../../db/schema.js';
import { formatAge, formatInstant } from './format.js';

export interface SnapshotInfo {
  id: number;
  kind: SnapshotKind;
  scope_key: string;
  project_id: number | null;
  region_id: number | null;
  taken_at: Date;
  run_id: number | null;
}

/**
 * SQL of the latest complete snapshot per (kind, scope) for the kinds in the text[] parameter
 * `kindsParam` (e.g. `$1`); columns as SnapshotInfo, ordered by kind and scope. Walks
 * snapshots_latest_complete_idx from one (kind, scope) to the next (a probe per scope) and takes
 * the newest of each: a year of daily snapshots is not read and sorted on every request.
 */
export function latestSnapshotsSql(kindsParam: string, atParam?: string): string {
  // With atParam: each (kind, scope)'s latest complete snapshot taken at or before that time.
  const upTo = atParam ? ` and s.taken_at <= ${atParam}::timestamptz` : '';
  return `with recursive keys(kind, scope_key) as (
      select k.kind, (select min(s.scope_key) from snapshots s where s.complete and s.kind = k.kind${upTo})
      from unnest(${kindsParam}::text[]) as k(kind)
      union all
      select k.kind, (select min(s.scope_key) from snapshots s where s.complete and s.kind = k.kind and s.scope_key > k.scope_key${upTo})
      from keys k where k.scope_key is not null
    )
    select l.* from keys k cross join lateral (
      select id, kind, scope_key, project_id, region_id, taken_at, run_id from snapshots s
      where s.complete and s.kind = k.kind and s.scope_key = k.scope_key${upTo}
      order by s.taken_at desc, s.id desc limit 1
    ) l
    order by l.kind, l.scope_key`;
}

/** Each (kind, scope)'s latest complete snapshot (at or before `at`, when given). */
export async function latestSnapshots(q: Queryable, kinds: readonly SnapshotKind[], at?: Date): Promise<SnapshotInfo[]> {
  return at
    ? q.query<SnapshotInfo & Record<string, unknown>>(latestSnapshotsSql('$1', '$2'), [kinds, at])
    : q.query<SnapshotInfo & Record<string, unknown>>(latestSnapshotsSql('$1'), [kinds]);
}

/**
 * The notes every report carries about its data's age: the newest and oldest of the snapshots
 * it read, or that there is none yet.
 */
export function freshnessNotes(now: Date, snapshots: readonly Pick<SnapshotInfo, 'taken_at' | 'scope_key'>[], what: string): string[] {
  if (snapshots.length === 0) return [`No complete snapshot of ${what} yet: nothing to show until a collection has finished.`];
  let newest = snapshots[0]!;
  let oldest = snapshots[0]!;
  for (const s of snapshots) {
    if (s.taken_at > newest.taken_at) newest = s;
    if (s.taken_at < oldest.taken_at) oldest = s;
  }
  const scopes = new Set(snapshots.map((s) => s.scope_key)).size;
  const notes = [
    `Data: the latest complete snapshot of ${what} ${scopes === 1 ? 'in its one scope' : `in each of ${scopes} scopes`}, taken ${formatInstant(newest.taken_at)} (${formatAge(now, newest.taken_at)} old).`,
  ];
  if (newest.taken_at.getTime() - oldest.taken_at.getTime() > 3600_000) {
    notes.push(`The oldest is scope ${oldest.scope_key}, taken ${formatInstant(oldest.taken_at)} (${formatAge(now, oldest.taken_at)} old): a later collection of it failed or it is no longer collected.`);
  }
  return notes;
}

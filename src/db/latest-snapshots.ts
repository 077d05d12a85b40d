/**
 * "Latest good data": per (kind, scope) the newest COMPLETE snapshot. Every report reads only
 * these (history reports read rollups / cost_daily), and says how old they are.
 */
import type { Queryable } from './connection.js';
import type { SnapshotKind } from './schema.js';

export interface SnapshotInfo {
  id: number;
  kind: SnapshotKind;
  scope_key: string;
  project_id: number | null;
  region_id: number | null;
  taken_at: Date;
  run_id: number | null;
  /** Whether its rows are versions (folded), else kept rows (versions.ts). */
  versioned: boolean;
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
      select id, kind, scope_key, project_id, region_id, taken_at, run_id, versioned from snapshots s
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

/** The ids of each (kind, scope)'s latest complete snapshot (at or before `at`, when given). */
export async function latestSnapshotIds(q: Queryable, kinds: readonly SnapshotKind[], at?: Date): Promise<number[]> {
  return (await latestSnapshots(q, kinds, at)).map((s) => s.id);
}

/** The columns of snapshotsByIdSql: SnapshotInfo's, and `versioned`, which snapshotsRowsSql reads. */
export const SNAPSHOT_COLUMNS = ['id', 'kind', 'scope_key', 'project_id', 'region_id', 'taken_at', 'run_id', 'versioned'] as const;

/**
 * SQL: a parenthesised relation of the snapshots whose ids are in the int[] parameter `idsParam`,
 * with SNAPSHOT_COLUMNS. Statements that read the rows of the latest snapshots
 * (viewRowsSql) take their ids read first: on Citus a CTE of them read inside such a subquery
 * came back empty (the intermediate result of the CTE was not found, with only a warning).
 */
export function snapshotsByIdSql(idsParam: string): string {
  return `(select ${SNAPSHOT_COLUMNS.join(', ')} from snapshots where id = any(${idsParam}::int[]))`;
}

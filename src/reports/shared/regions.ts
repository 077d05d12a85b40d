/**
 * Region names for region ids. The cloud API has no list of regions to collect, but every
 * instance and GPU cluster record carries its region's name (`region`) beside `region_id`: the
 * name is the one in the latest complete snapshot of that region that has one. A region where
 * neither kind was ever collected has no name (pages show its number alone).
 */
import type { Queryable } from '../../db/connection.js';
import { isRegionColumn } from '../../present/regions.js';
import { SNAPSHOT_KINDS } from '../../db/schema.js';
import { latestSnapshots } from '../../db/latest-snapshots.js';
import type { Column, Row } from '../report.js';

/** The region ids in these rows' region columns. */
export function regionIdsOf(columns: readonly Column[], rows: readonly Row[]): number[] {
  const keys = columns.filter(isRegionColumn).map((c) => c.key);
  const ids = new Set<number>();
  for (const row of rows) {
    for (const key of keys) {
      const id = Number(row[key]);
      if (row[key] !== null && row[key] !== undefined && Number.isSafeInteger(id)) ids.add(id);
    }
  }
  return [...ids];
}

/** Name per region id (as text) for the given ids that have one. */
export async function regionNames(db: Queryable, ids: readonly number[]): Promise<Record<string, string>> {
  if (ids.length === 0) return {};
  // Per region and kind: the newest complete snapshot holding a named record (one row read each).
  const named = (kind: string, table: string) => `(select x.region from snapshots s
      cross join lateral (select t.region from ${table} t where t.snapshot_id = s.id and coalesce(t.region, '') <> '' limit 1) x
      where s.complete and s.kind = '${kind}' and s.region_id = r.region_id
      order by s.taken_at desc, s.id desc limit 1)`;
  const rows = await db.query<{ region_id: number; name: string | null }>(
    `select r.region_id, coalesce(${named('instance', 'instances')}, ${named('cluster', 'gpu_clusters')}) as name
     from unnest($1::int[]) as r(region_id)`,
    [ids],
  );
  const names: Record<string, string> = {};
  for (const row of rows) if (row.name) names[String(row.region_id)] = row.name;
  return names;
}

/**
 * The region names an export's "Region name" column is written from (present/csv.ts), or
 * undefined when the export has no region id column. CSVs are written before their rows are read,
 * so the names are those of the regions of every kind's latest complete snapshots and of the
 * region the export asked for: a region no current scope has, and not asked for, keeps an empty name.
 */
export async function exportRegionNames(db: Queryable, columns: readonly Column[], params: unknown): Promise<Record<string, string> | undefined> {
  if (!columns.some(isRegionColumn)) return undefined;
  const scopes = await latestSnapshots(db, SNAPSHOT_KINDS);
  const asked = typeof params === 'object' && params !== null ? (params as { region?: unknown }).region : undefined;
  const ids = new Set<number>();
  for (const id of [...scopes.map((s) => s.region_id), asked]) if (typeof id === 'number') ids.add(id);
  return regionNames(db, [...ids]);
}

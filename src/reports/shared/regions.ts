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
import { snapshotRowsSql, versionedTable, viewRowsSql } from '../../db/versions.js';
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
  // Per region and kind, the newest complete snapshot first (the reference table alone), then one
  // named record of it read from its versions and staged rows: Citus cannot plan the lateral join
  // of every snapshot to the views that found it in one statement.
  const newest = await db.query<{ region_id: number; kind: string; id: number }>(
    `select distinct on (region_id, kind) region_id, kind, id from snapshots
      where complete and kind in ('instance', 'cluster') and region_id = any($1::int[])
      order by region_id, kind desc, taken_at desc, id desc`,
    [ids],
  );
  // One probe per snapshot, all at once (each reads one row); an older snapshot only where the newest has no name.
  const found = await Promise.all(
    newest.map(async (s) => ({ regionId: s.region_id, name: (await namedRecordIn(db, s.kind, s.id)) ?? (await namedRecordBefore(db, s.kind, s.region_id, s.id)) })),
  );
  const names: Record<string, string> = {};
  // In `newest`'s order: a region's instance name first ('instance' sorts after 'cluster'), else its cluster's.
  for (const { regionId, name } of found) if (name && !names[String(regionId)]) names[String(regionId)] = name;
  return names;
}

const REGION_TABLES: Record<string, string> = { instance: 'instances', cluster: 'gpu_clusters' };

/** A region name in a record of snapshot `id`, if one has it. */
async function namedRecordIn(db: Queryable, kind: string, id: number): Promise<string | null> {
  const [row] = await db.query<{ region: string }>(
    `select region from (${snapshotRowsSql(versionedTable(REGION_TABLES[kind]!), 'region', '$1')}) x where coalesce(region, '') <> '' limit 1`,
    [id],
  );
  return row?.region ?? null;
}

/** A region name in the newest older complete snapshot of the region and kind holding one (rare: the newest had none). */
async function namedRecordBefore(db: Queryable, kind: string, regionId: number, id: number): Promise<string | null> {
  const older = `(select o.id, o.kind, o.scope_key, o.taken_at, o.versioned from snapshots o, snapshots n
      where n.id = $1 and o.complete and o.kind = n.kind and o.region_id = $2 and (o.taken_at, o.id) < (n.taken_at, n.id))`;
  const [row] = await db.query<{ region: string }>(
    `select x.region from ${viewRowsSql(REGION_TABLES[kind]!, older, ['region'])} x
       join snapshots s on s.id = x.snapshot_id
      where coalesce(x.region, '') <> '' order by s.taken_at desc, s.id desc limit 1`,
    [id, regionId],
  );
  return row?.region ?? null;
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

/**
 * Resource history as versions (issue 15; DATA-MODEL.md "History as versions"): a snapshot's rows
 * are staged in <name>_staged while it is written, and its finalising transaction folds them into
 * <name>_versions: the scope's current versions that the snapshot lacks or holds with another
 * content are closed at its taken_at, and only new or changed rows are inserted. An unchanged
 * resource costs nothing but the staging of its row. The view <name> gives the rows of every
 * snapshot as before.
 */
import { getTableColumns, getTableName } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './connection.js';
import {
  freeFeatures,
  gpuClusters,
  gpuClusterServers,
  gpuFlavors,
  imageTags,
  instancePorts,
  instances,
  k8sClusterPrices,
  keypairs,
  storageSshKeys,
  type SnapshotKind,
} from './schema.js';

export interface VersionedTable {
  /** The view's name (the old table's), e.g. `instances`; `<name>_staged`, `<name>_versions`. */
  name: string;
  kind: SnapshotKind;
  staged: string;
  versions: string;
  /** Identity of a resource within its scope (the staged primary key without snapshot_id). */
  ids: readonly string[];
  /** Every column but snapshot_id, in schema order (the content hashed and copied). */
  columns: readonly string[];
}

function versioned(table: PgTable, kind: SnapshotKind): VersionedTable {
  const staged = getTableName(table);
  const name = staged.replace(/_staged$/, '');
  const pk = getTableConfig(table).primaryKeys[0]!;
  return {
    name,
    kind,
    staged,
    versions: `${name}_versions`,
    ids: pk.columns.map((c) => c.name).filter((c) => c !== 'snapshot_id'),
    columns: Object.values(getTableColumns(table))
      .map((c) => c.name)
      .filter((c) => c !== 'snapshot_id'),
  };
}

/** Trusted constants (schema names), interpolated into the statements below. */
export const VERSIONED_TABLES: readonly VersionedTable[] = [
  versioned(gpuClusters, 'cluster'),
  versioned(gpuClusterServers, 'cluster'),
  versioned(instances, 'instance'),
  versioned(instancePorts, 'port'),
  versioned(keypairs, 'keypair'),
  versioned(storageSshKeys, 'storage_key'),
  versioned(imageTags, 'image_tag'),
  versioned(freeFeatures, 'free_feature'),
  versioned(gpuFlavors, 'flavor'),
  versioned(k8sClusterPrices, 'k8s_price'),
];

/** The content hash of a row of `alias` (same expression as the migration that introduced versions). */
export function hashSql(table: VersionedTable, alias: string): string {
  return `md5(row(${table.columns.map((c) => `${alias}."${c}"`).join(', ')})::text)::uuid`;
}

const OPEN = `'infinity'::timestamptz`;

/** The versioned table behind a view name (`instances`); throws on an unknown name. */
export function versionedTable(name: string): VersionedTable {
  const table = VERSIONED_TABLES.find((t) => t.name === name);
  if (!table) throw new Error(`${name} is not a versioned resource table`);
  return table;
}

/** SQL: version `v` is one of the rows of snapshot `s` (s versioned, same kind). */
export function versionSeenBy(v: string, s: string): string {
  return `${v}.scope_key = ${s}.scope_key and ${v}.valid_from <= ${s}.taken_at and coalesce(${v}.valid_to, ${OPEN}) > ${s}.taken_at`;
}

export interface FoldTarget {
  id: number;
  kind: SnapshotKind;
  scopeKey: string;
  takenAt: Date;
}

/**
 * Folds a complete snapshot's staged rows into versions (inside its finalising transaction).
 * Only a snapshot newer than every versioned snapshot of its (kind, scope) can be folded (a
 * version's range is a range of taken_at); an older one (backfilled history) keeps its rows
 * staged, which the views show just the same. Returns whether it was folded.
 */
export async function foldSnapshot(tx: Queryable, target: FoldTarget): Promise<boolean> {
  const tables = VERSIONED_TABLES.filter((t) => t.kind === target.kind);
  if (tables.length === 0) return false;
  const [newer] = await tx.query<{ n: number }>(
    `SELECT 1 AS n FROM snapshots WHERE versioned AND kind = $1 AND scope_key = $2 AND taken_at >= $3 LIMIT 1`,
    [target.kind, target.scopeKey, target.takenAt],
  );
  if (newer) return false;
  const params = [target.id, target.scopeKey, target.takenAt];
  for (const t of tables) {
    const ids = t.ids.map((c) => `"${c}"`).join(', ');
    const same = (a: string, b: string) => t.ids.map((c) => `${a}."${c}" = ${b}."${c}"`).join(' AND ');
    const list = t.columns.map((c) => `"${c}"`).join(', ');
    // One statement: the staged rows' hashes computed once; the scope's current versions this
    // snapshot lacks or holds with another content are closed at its taken_at, and a version is
    // opened for every row without an identical current one (both parts see the versions as they
    // were before the statement).
    await tx.execute(
      `WITH h AS MATERIALIZED (SELECT ${ids}, ${hashSql(t, 's')} AS hash FROM "${t.staged}" s WHERE s.snapshot_id = $1),
       closed AS (
         UPDATE "${t.versions}" v SET valid_to = $3
          WHERE v.scope_key = $2 AND coalesce(v.valid_to, ${OPEN}) = ${OPEN}
            AND NOT EXISTS (SELECT 1 FROM h WHERE ${same('h', 'v')} AND h.hash = v.hash))
       INSERT INTO "${t.versions}" (scope_key, ${list}, hash, valid_from, valid_to)
       SELECT $2, ${t.columns.map((c) => `s."${c}"`).join(', ')}, h.hash, $3, NULL
         FROM h JOIN "${t.staged}" s ON s.snapshot_id = $1 AND ${same('s', 'h')}
        WHERE NOT EXISTS (SELECT 1 FROM "${t.versions}" v
                           WHERE v.scope_key = $2 AND coalesce(v.valid_to, ${OPEN}) = ${OPEN} AND ${same('v', 'h')} AND v.hash = h.hash)`,
      params,
    );
    await tx.execute(`DELETE FROM "${t.staged}" WHERE snapshot_id = $1`, [target.id]);
  }
  await tx.execute(`UPDATE snapshots SET versioned = true WHERE id = $1`, [target.id]);
  return true;
}

/**
 * Deletes the versions no remaining snapshot can see: ended at or before `cutoff` (every
 * snapshot older than it is gone), or, for ranges ending in [from, to) (days just thinned), not
 * containing the taken_at of any remaining versioned snapshot of their scope. Returns the count.
 */
export async function pruneVersions(q: Queryable, cutoff: Date, thinned?: { from: Date; to: Date }): Promise<number> {
  let deleted = 0;
  for (const t of VERSIONED_TABLES) {
    deleted += (await q.execute(`DELETE FROM "${t.versions}" WHERE valid_to IS NOT NULL AND valid_to <= $1`, [cutoff])).rowCount;
    // Scopes no longer collected: no versioned snapshot of the scope left at all.
    deleted += (
      await q.execute(
        `DELETE FROM "${t.versions}" v
          WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.versioned AND s.kind = $1 AND s.scope_key = v.scope_key)`,
        [t.kind],
      )
    ).rowCount;
    if (thinned) {
      deleted += (
        await q.execute(
          `DELETE FROM "${t.versions}" v
            WHERE v.valid_to IS NOT NULL AND v.valid_to > $2 AND v.valid_to <= $3
              AND NOT EXISTS (SELECT 1 FROM snapshots s
                               WHERE s.versioned AND s.complete AND s.kind = $1 AND s.scope_key = v.scope_key
                                 AND s.taken_at >= v.valid_from AND s.taken_at < v.valid_to)`,
          [t.kind, thinned.from, thinned.to],
        )
      ).rowCount;
    }
  }
  return deleted;
}

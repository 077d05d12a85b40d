/**
 * Resource history as versions (DATA-MODEL.md "History as versions"): a snapshot's rows
 * are staged in <name>_staged (unlogged) while it is written, and its finalising transaction folds
 * them into <name>_versions: the scope's current versions that the snapshot lacks or holds with
 * another content are closed at its taken_at, and only new or changed rows are inserted. A snapshot
 * that cannot be folded (backdated) has its rows moved to <name>_kept (logged). An unchanged
 * resource costs nothing but the staging of its row, which writes no WAL. The view <name> gives
 * the rows of every snapshot as before.
 */
import { getTableColumns, getTableName } from 'drizzle-orm';
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './connection.js';
import { isLockTimeout } from './errors.js';
import { withLocalSettings, withLockTimeout } from './local-settings.js';
import {
  freeFeatures,
  freeFeaturesKept,
  gpuClusters,
  gpuClustersKept,
  gpuClusterServers,
  gpuClusterServersKept,
  gpuFlavors,
  gpuFlavorsKept,
  imageTags,
  imageTagsKept,
  instancePorts,
  instancePortsKept,
  instances,
  instancesKept,
  k8sClusterPrices,
  k8sClusterPricesKept,
  keypairs,
  keypairsKept,
  storageSshKeys,
  storageSshKeysKept,
  type SnapshotKind,
} from './schema.js';

export interface VersionedTable {
  /** The view's name (the old table's), e.g. `instances`; `<name>_staged`, `<name>_kept`, `<name>_versions`. */
  name: string;
  kind: SnapshotKind;
  /** Unlogged: the rows of snapshots being written; never read by reports (a replica has none). */
  staged: string;
  /** Logged: the rows of complete snapshots not folded (the view's second half). */
  kept: string;
  versions: string;
  /** Identity of a resource within its scope (the staged primary key without snapshot_id). */
  ids: readonly string[];
  /** Every column but snapshot_id, in schema order (the content compared and copied). */
  columns: readonly string[];
}

function versioned(table: PgTable, kept: PgTable, kind: SnapshotKind): VersionedTable {
  const staged = getTableName(table);
  const content = Object.values(getTableColumns(table)).filter((c) => c.name !== 'snapshot_id');
  const name = staged.replace(/_staged$/, '');
  const pk = getTableConfig(table).primaryKeys[0]!;
  return {
    name,
    kind,
    staged,
    kept: getTableName(kept),
    versions: `${name}_versions`,
    ids: pk.columns.map((c) => c.name).filter((c) => c !== 'snapshot_id'),
    columns: content.map((c) => c.name),
  };
}

/** Trusted constants (schema names), interpolated into the statements below. */
export const VERSIONED_TABLES: readonly VersionedTable[] = [
  versioned(gpuClusters, gpuClustersKept, 'cluster'),
  versioned(gpuClusterServers, gpuClusterServersKept, 'cluster'),
  versioned(instances, instancesKept, 'instance'),
  versioned(instancePorts, instancePortsKept, 'port'),
  versioned(keypairs, keypairsKept, 'keypair'),
  versioned(storageSshKeys, storageSshKeysKept, 'storage_key'),
  versioned(imageTags, imageTagsKept, 'image_tag'),
  versioned(freeFeatures, freeFeaturesKept, 'free_feature'),
  versioned(gpuFlavors, gpuFlavorsKept, 'flavor'),
  versioned(k8sClusterPrices, k8sClusterPricesKept, 'k8s_price'),
];

const OPEN = `'infinity'::timestamptz`;

/**
 * SQL: rows `a` and `b` of `table` hold the same content: the same binary image of every column
 * (record_image_eq, NULLs equal), which for these types means the same text: json, jsonb and
 * numeric keep their scale (`1.0` and `1.00` differ, as the values received did). Comparing
 * images is a memcmp per column, where comparing jsonb as its text printed both sides of every row.
 */
export function sameContentSql(table: VersionedTable, a: string, b: string): string {
  const side = (alias: string) => `ROW(${table.columns.map((c) => `${alias}."${c}"`).join(', ')})`;
  return `record_image_eq(${side(a)}, ${side(b)})`;
}

/** The versioned table behind a view name (`instances`); throws on an unknown name. */
export function versionedTable(name: string): VersionedTable {
  const table = VERSIONED_TABLES.find((t) => t.name === name);
  if (!table) throw new Error(`${name} is not a versioned resource table`);
  return table;
}

/**
 * SQL: `select` (an SQL list over the table's columns, unqualified) of the rows of the snapshot
 * whose id is `snapshotParam`, the rows its view gives for that snapshot_id, read from the versions
 * and kept tables directly. Citus cannot plan the view (a lateral join across two colocation
 * groups) but plans this: each side joins a reference-table subquery of the one snapshot.
 */
export function snapshotRowsSql(table: VersionedTable, select: string, snapshotParam: string, where?: RowFilter): string {
  return `SELECT ${select} FROM "${table.versions}" v,
      (SELECT scope_key AS s_scope, taken_at AS s_at FROM snapshots WHERE id = ${snapshotParam} AND versioned AND kind = '${table.kind}') s
     WHERE v.scope_key = s.s_scope AND ${versionCurrentAt('v', 's.s_at')}${andWhere(where, 'v')}
    UNION ALL
    SELECT ${select} FROM "${table.kept}" t, (SELECT id AS s_id FROM snapshots WHERE id = ${snapshotParam}) s WHERE t.snapshot_id = s.s_id${andWhere(where, 't')}`;
}

/** A further condition on a table's rows, given the alias of the table (`v` or `t`). */
export type RowFilter = (alias: string) => string;

function andWhere(where: RowFilter | undefined, alias: string): string {
  return where ? ` and (${where(alias)})` : '';
}

/**
 * SQL of the rows of every snapshot in relation `snaps` (columns id, kind, scope_key, taken_at,
 * versioned; other kinds are ignored), as `snapshot_id` and `columns`: the versions current at
 * each one's taken_at and its kept rows, joined, not through the view's lateral join, which
 * Citus cannot plan (the versions and kept tables sit in different colocation groups).
 * `snaps` is a relation name or a parenthesised subquery written by code.
 */
export function snapshotsRowsSql(table: VersionedTable, columns: readonly string[], snaps: string, where?: RowFilter): string {
  const list = (alias: string) => columns.map((c) => `${alias}."${c}"`).join(', ');
  return `select s.id as snapshot_id, ${list('v')} from ${snaps} s
      join "${table.versions}" v on v.scope_key = s.scope_key and ${versionCurrentAt('v', 's.taken_at')}
     where s.versioned and s.kind = '${table.kind}'${andWhere(where, 'v')}
    union all
    select t.snapshot_id, ${list('t')} from "${table.kept}" t join ${snaps} s on t.snapshot_id = s.id${where ? ` where ${where('t')}` : ''}`;
}

/**
 * SQL: a parenthesised relation of the rows that the view `name` (e.g. `instances`) gives for the
 * snapshots of relation `snaps` (snapshotsRowsSql), with snapshot_id and every column, or only
 * `columns`. Reports join it where they joined the view.
 */
export function viewRowsSql(name: string, snaps: string, columns?: readonly string[]): string {
  const table = versionedTable(name);
  return `(${snapshotsRowsSql(table, columns ?? table.columns, snaps)})`;
}

/** SQL: version `v` was current at the instant `at` (an SQL expression). */
export function versionCurrentAt(v: string, at: string): string {
  return `${v}.valid_from <= ${at} and coalesce(${v}.valid_to, ${OPEN}) > ${at}`;
}

/** SQL: version `v` is one of the rows of snapshot `s` (s versioned, same kind). */
export function versionSeenBy(v: string, s: string): string {
  return `${v}.scope_key = ${s}.scope_key and ${versionCurrentAt(v, `${s}.taken_at`)}`;
}

/**
 * SQL: version `v` was current at `from` and ended in (`from`, `to`]: the version a resource had
 * at `from` when it differs at `to` (through `_current_idx`).
 */
export function versionEndedBetween(v: string, from: string, to: string): string {
  return `${versionEndedIn(v, from, to)} and ${v}.valid_from <= ${from}`;
}

/**
 * SQL: version `v` began in (`from`, `to`] and is still current at `to`: the version a resource
 * has at `to` when it differs from `from` (through `_started_idx`, on the UTC wall time of
 * valid_from, see versionMovedBetween).
 */
export function versionBeganBetween(v: string, from: string, to: string): string {
  return `${versionStartedIn(v, from, to)} and coalesce(${v}.valid_to, ${OPEN}) > ${to}`;
}

/** SQL: version `v` ended in (`from`, `to`] (an index range of `_current_idx`). */
export function versionEndedIn(v: string, from: string, to: string): string {
  return `coalesce(${v}.valid_to, ${OPEN}) > ${from} and coalesce(${v}.valid_to, ${OPEN}) <= ${to}`;
}

/**
 * SQL: version `v` began in (`from`, `to`] (an index range of `_started_idx`, which is on the UTC
 * wall time of valid_from: see schema.ts versionIndexes).
 */
export function versionStartedIn(v: string, from: string, to: string): string {
  const utc = (t: string) => `${t} at time zone 'UTC'`;
  return `${utc(`${v}.valid_from`)} > ${utc(from)} and ${utc(`${v}.valid_from`)} <= ${utc(to)}`;
}

/**
 * SQL: version `v` began or ended in (`from`, `to`]: the versions whose rows can differ between
 * snapshots taken at those instants. The ends through `_current_idx`, the starts through
 * `_started_idx`.
 */
export function versionMovedBetween(v: string, from: string, to: string): string {
  return `((${versionEndedIn(v, from, to)}) or (${versionStartedIn(v, from, to)}))`;
}

/**
 * SQL (a SELECT of one column `row_key`) of the first `limit` values of column `key` among the
 * rows of one snapshot in `table` (the rows its view shows: the versions current at its taken_at
 * when it is versioned, and its kept rows) in byte order ("C", the default) or with
 * `collate: null` in the database's own order; `limit` is an SQL expression. The snapshot is
 * given by SQL expressions of its id and, when versioned, scope key (bound parameters): the
 * versions side walks the index on (scope_key, key) of that one scope and stops after `limit`
 * rows, and on Citus each side reads one shard.
 */
export function snapshotKeysSql(
  table: VersionedTable,
  /** `scopeKey` only when the snapshot is versioned (its rows are versions of that scope). */
  s: { id: string; scopeKey?: string },
  key: string,
  limit: string,
  opts: { collate?: 'C' | null } = {},
): string {
  const collate = opts.collate === null ? '' : ` collate "${opts.collate ?? 'C'}"`;
  const kept = `(select t."${key}" as row_key from "${table.kept}" t where t.snapshot_id = ${s.id} order by t."${key}"${collate} limit ${limit})`;
  if (s.scopeKey === undefined) return `select u.row_key from ${kept} u`;
  return `select u.row_key from (
      (select v."${key}" as row_key from "${table.versions}" v
        where v.scope_key = ${s.scopeKey} and ${versionCurrentAt('v', `(select taken_at from snapshots where id = ${s.id})`)}
        order by v.scope_key, v."${key}"${collate} limit ${limit})
      union all
      ${kept}
    ) u order by u.row_key${collate} limit ${limit}`;
}

export interface FoldTarget {
  id: number;
  kind: SnapshotKind;
  scopeKey: string;
  takenAt: Date;
}

export interface FoldResult {
  /** Whether the snapshot's rows were folded into versions (false: moved to kept, see foldSnapshot). */
  folded: boolean;
  /**
   * The previous versioned snapshot of the (kind, scope) when the folded snapshot holds exactly
   * its rows (no version closed, none opened), else null.
   */
  sameRowsAs: number | null;
}

/**
 * Folds a complete snapshot's staged rows into versions (inside its finalising transaction).
 * Only a snapshot newer than every versioned snapshot of its (kind, scope) can be folded (a
 * version's range is a range of taken_at); an older one (backfilled history) has its rows moved
 * from the unlogged staging table to the logged kept one, which the views show just the same.
 * Rows inserted through a view (its trigger writes to kept) are folded with the staged ones.
 */
export async function foldSnapshot(tx: Queryable, target: FoldTarget): Promise<FoldResult> {
  const tables = VERSIONED_TABLES.filter((t) => t.kind === target.kind);
  if (tables.length === 0) return { folded: false, sameRowsAs: null };
  const [latest] = await tx.query<{ id: number; newer: boolean }>(
    `SELECT id, taken_at >= $3 AS newer FROM snapshots WHERE versioned AND kind = $1 AND scope_key = $2 ORDER BY taken_at DESC LIMIT 1`,
    [target.kind, target.scopeKey, target.takenAt],
  );
  if (latest?.newer) {
    for (const t of tables) await moveRows(tx, t, t.staged, t.kept, target.id);
    return { folded: false, sameRowsAs: null };
  }
  for (const t of tables) await moveRows(tx, t, t.kept, t.staged, target.id);
  const params = [target.id, target.scopeKey, target.takenAt];
  let changed = 0;
  // Hash or merge joins whatever the estimates (a staging table's statistics describe whatever it
  // held when last analysed): the CTE is estimated at a row or two (the content comparison's
  // selectivity is a guess), and a nested loop over it costs rows x rows (orders of magnitude
  // slower for an unchanged scope; npm run bench history measures the fold). The staged rows are read through the primary key
  // (snapshot_id first): a sequential scan would also read the pages of every snapshot finalised
  // since the table was last vacuumed (deleted rows), which grew with each scope of a run.
  await withLocalSettings(tx, { enable_nestloop: 'off', enable_seqscan: 'off' }, async () => {
    for (const t of tables) {
      const same = (a: string, b: string) => t.ids.map((c) => `${a}."${c}" = ${b}."${c}"`).join(' AND ');
      const list = t.columns.map((c) => `"${c}"`).join(', ');
      // One statement: the resources whose staged row equals their current version are found once
      // (a join on the identity, then the contents compared); the scope's other current versions are
      // closed at taken_at, and every other staged row opens a version (both parts see the versions
      // as they were before the statement).
      const [counts] = await tx.query<{ n: number }>(
        `WITH unchanged AS MATERIALIZED (
           SELECT ${t.ids.map((c) => `s."${c}"`).join(', ')} FROM "${t.staged}" s
             JOIN "${t.versions}" v ON v.scope_key = $2 AND coalesce(v.valid_to, ${OPEN}) = ${OPEN} AND ${same('v', 's')}
            WHERE s.snapshot_id = $1 AND ${sameContentSql(t, 's', 'v')}),
         closed AS (
           UPDATE "${t.versions}" v SET valid_to = $3
            WHERE v.scope_key = $2 AND coalesce(v.valid_to, ${OPEN}) = ${OPEN}
              AND NOT EXISTS (SELECT 1 FROM unchanged u WHERE ${same('u', 'v')})
           RETURNING 1),
         opened AS (
           INSERT INTO "${t.versions}" (scope_key, ${list}, valid_from, valid_to)
           SELECT $2, ${t.columns.map((c) => `s."${c}"`).join(', ')}, $3, NULL
             FROM "${t.staged}" s
            WHERE s.snapshot_id = $1 AND NOT EXISTS (SELECT 1 FROM unchanged u WHERE ${same('u', 's')})
           RETURNING 1)
         SELECT ((SELECT count(*) FROM closed) + (SELECT count(*) FROM opened))::int AS n`,
        params,
      );
      changed += counts!.n;
      await tx.execute(`DELETE FROM "${t.staged}" WHERE snapshot_id = $1`, [target.id]);
    }
  });
  await tx.execute(`UPDATE snapshots SET versioned = true WHERE id = $1`, [target.id]);
  return { folded: true, sameRowsAs: changed === 0 && latest ? latest.id : null };
}

/**
 * Moves snapshot `snapshotId`'s rows of `table` from one of its row tables (staged, kept) to the
 * other: two statements rather than a DELETE ... RETURNING feeding an INSERT, so that Citus
 * pushes both down to the shard (the two tables are colocated on snapshot_id).
 */
async function moveRows(tx: Queryable, table: VersionedTable, from: string, to: string, snapshotId: number): Promise<void> {
  const list = ['snapshot_id', ...table.columns].map((c) => `"${c}"`).join(', ');
  const moved = await tx.execute(`INSERT INTO "${to}" (${list}) SELECT ${list} FROM "${from}" WHERE snapshot_id = $1`, [snapshotId]);
  if (moved.rowCount > 0) await tx.execute(`DELETE FROM "${from}" WHERE snapshot_id = $1`, [snapshotId]);
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

/**
 * Deletes staged rows whose snapshot no longer exists: the staging tables have no foreign key
 * (schema.ts, stagedSnapshotId), and a writer may write a page after its snapshot was deleted
 * (its run marked dead meanwhile). `snapshotId`: only that snapshot's rows. Returns the count.
 */
export async function deleteOrphanStagedRows(q: Queryable, snapshotId?: number): Promise<number> {
  let deleted = 0;
  for (const table of VERSIONED_TABLES.flatMap((t) => [t.staged, t.kept])) {
    deleted += (
      await q.execute(
        `DELETE FROM "${table}" r WHERE ($1::int IS NULL OR r.snapshot_id = $1::int)
            AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = r.snapshot_id)`,
        [snapshotId ?? null],
      )
    ).rowCount;
  }
  return deleted;
}

/**
 * How long reclaimStagingSpace waits for a staging table's lock before leaving it for later: past
 * deadlock_timeout (1 s by default), after which an autovacuum of the table (started by the
 * deleted rows of the collection just finalised) cancels itself for the waiting TRUNCATE. Nothing
 * of the collection waits on it: the collector's scopes are all finalised by then.
 */
const RECLAIM_LOCK_MS = 2_000;

/**
 * Gives the space of `kind`'s staging tables back at once when they hold no row (every snapshot
 * of the kind finalised or discarded): TRUNCATE, where the deleted rows of each finalised
 * snapshot would hold their pages until a vacuum (an unchanged collection of 20,000 instances
 * grew the database by 70 MB so). The emptiness is checked under the TRUNCATE's own exclusive
 * lock, so no writer's rows can be lost; a table being written (lock not granted within
 * RECLAIM_LOCK_MS) or holding rows is left for the next snapshot's reclaim. Returns the tables
 * truncated.
 */
export async function reclaimStagingSpace(db: Queryable, kind: SnapshotKind): Promise<string[]> {
  const truncated: string[] = [];
  for (const t of VERSIONED_TABLES.filter((v) => v.kind === kind)) {
    try {
      const emptied = await withLockTimeout(db, RECLAIM_LOCK_MS, async (tx) => {
        await tx.execute(`LOCK TABLE "${t.staged}" IN ACCESS EXCLUSIVE MODE`);
        const [held] = await tx.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM "${t.staged}") AS any`);
        if (held!.any) return false;
        await tx.execute(`TRUNCATE "${t.staged}"`);
        return true;
      });
      if (emptied) truncated.push(t.staged);
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
    }
  }
  return truncated;
}

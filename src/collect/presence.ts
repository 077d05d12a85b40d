/**
 * First / last seen per resource (resource_presence), kept up to date by each snapshot's
 * finalising transaction: every resource in the snapshot is seen at the snapshot's time, and,
 * because only complete snapshots are finalised, the scope's resources missing from it are marked
 * gone. A failed scope writes no snapshot, so it never marks anything gone; rows carried over
 * unread (ports of an instance whose ports could not be read) are neither seen nor gone.
 *
 * An unchanged collection rewrites no row: a resource seen in the newest snapshot of its scope has
 * last_seen_at NULL, which means resource_presence_scopes.seen_at (one row per kind and scope,
 * advanced by each snapshot). Only what changes is written: new resources, renamed ones, returns,
 * and the resources missing from the new snapshot, which get their last seen stored (the scope's
 * previous seen_at) and are marked gone. Readers use the view resource_presence_seen.
 */
import type { Queryable } from '../db/connection.js';
import type { PresenceKind, SnapshotKind } from '../db/schema.js';
import { sqlLiteral } from '../db/sql-literal.js';
import { snapshotRowsSql, versionedTable } from '../db/versions.js';

interface PresenceSource {
  kind: PresenceKind;
  table: string;
  /** SQL giving the resource's identity within its scope. */
  id: string;
  /** SQL giving its display name. */
  name: string;
  /**
   * SQL true for rows carried over unread from an earlier snapshot (last known values): they are
   * not seen now (last seen stays when they were read) and not gone either.
   */
  carried?: string;
}

/** Trusted constants (never user input), interpolated into the statements below. */
const SOURCES: Record<SnapshotKind, readonly PresenceSource[]> = {
  cluster: [
    { kind: 'cluster', table: 'gpu_clusters', id: 'cluster_id', name: 'cluster_name' },
    { kind: 'cluster_server', table: 'gpu_cluster_servers', id: 'server_id', name: 'name' },
  ],
  instance: [{ kind: 'instance', table: 'instances', id: 'instance_id', name: 'name' }],
  port: [{ kind: 'port', table: 'instance_ports', id: 'port_id', name: 'name', carried: 'read_at IS NOT NULL' }],
  // Keypairs are identified by name: legacy answers carry the name in place of the id.
  keypair: [{ kind: 'keypair', table: 'keypairs', id: 'name', name: 'name' }],
  flavor: [{ kind: 'flavor', table: 'gpu_flavors', id: 'flavor_id', name: 'flavor_name' }],
  k8s_price: [{ kind: 'k8s_price', table: 'k8s_cluster_prices', id: 'cluster_name', name: 'cluster_name' }],
  storage_key: [{ kind: 'storage_key', table: 'storage_ssh_keys', id: 'key_id::text', name: 'name' }],
  image_tag: [{ kind: 'image_tag', table: 'image_tags', id: "image_id || '/' || key", name: 'key' }],
  free_feature: [{ kind: 'free_feature', table: 'free_features', id: 'activation_id::text', name: 'feature_name' }],
};

export interface PresenceSnapshot {
  id: number;
  kind: SnapshotKind;
  scopeKey: string;
  takenAt: Date;
  /** The previous snapshot of the scope whose rows this one repeats exactly, if known (FoldResult.sameRowsAs). */
  sameRowsAs?: number | null;
}

/** Records the snapshot's resources as seen and marks the scope's missing ones gone. Run it inside the finalising transaction. */
export async function updatePresence(tx: Queryable, snapshot: PresenceSnapshot): Promise<void> {
  for (const source of SOURCES[snapshot.kind]) {
    const [scope] = await tx.query<{ seen_at: Date; snapshot_id: number }>(
      'SELECT seen_at, snapshot_id FROM resource_presence_scopes WHERE kind = $1 AND scope_key = $2',
      [source.kind, snapshot.scopeKey],
    );
    // Not older than what is known: its resources become the implicit "seen in the latest".
    // An older snapshot (backfilled history) stores what it saw explicitly, and only widens what is known.
    const latest = !scope || snapshot.takenAt.getTime() >= scope.seen_at.getTime();
    const params = [source.kind, snapshot.scopeKey, snapshot.takenAt, snapshot.id];
    if (latest && scope && (await repeatsSeenSnapshot(tx, source.kind, snapshot, scope))) {
      await advanceScope(tx, params);
      continue;
    }
    // The resources seen (not carried) in the snapshot whose id is the parameter `snapshotParam`.
    const table = versionedTable(source.table);
    const seenIn = (snapshotParam: string) =>
      `SELECT rid, nm FROM (${snapshotRowsSql(table, `${source.id} AS rid, ${source.name} AS nm${source.carried ? `, ${source.carried} AS carried` : ''}`, snapshotParam)}) r${
        source.carried ? ' WHERE NOT carried' : ''
      }`;
    if (scope && latest) {
      // Seen in the scope's previous latest snapshot but not (or only carried over) in this one:
      // the last seen becomes explicit (the gone marking below then applies as to any other row).
      await tx.execute(
        `UPDATE resource_presence p SET last_seen_at = $3, last_snapshot_id = $4
          WHERE p.kind = $1 AND p.scope_key = $2 AND p.last_seen_at IS NULL
            AND NOT EXISTS (SELECT 1 FROM (${seenIn('$5')}) s WHERE s.rid = p.resource_id)`,
        [source.kind, snapshot.scopeKey, scope.seen_at, scope.snapshot_id, snapshot.id],
      );
    }
    // The last seen known (explicit, or the scope's seen_at) is advanced when this one is not older.
    const advances = (p: string, at = '$3', seen = '$6::timestamptz') => `${at} >= coalesce(${p}.last_seen_at, ${seen}, '-infinity'::timestamptz)`;
    // The DO UPDATE clause takes its values as literals: Citus sends it to the workers on its own,
    // with the statement's parameters it does not use left untyped ("could not determine data type").
    const updates = advances('p', `${sqlLiteral(snapshot.takenAt)}::timestamptz`, `${sqlLiteral(scope?.seen_at ?? null)}::timestamptz`);
    const lastSeen = `CASE WHEN $5::boolean THEN NULL ELSE $3::timestamptz END`;
    const lastSnapshot = `CASE WHEN $5::boolean THEN NULL ELSE $4::int END`;
    await tx.execute(
      `INSERT INTO resource_presence AS p
         (kind, scope_key, resource_id, name, first_seen_at, last_seen_at, gone_at, first_snapshot_id, last_snapshot_id)
       SELECT $1::text, $2::text, s.rid, s.nm, $3::timestamptz, ${lastSeen}, NULL, $4::int, ${lastSnapshot}
         FROM (SELECT DISTINCT ON (rid) rid, nm FROM (${seenIn('$4')}) r WHERE rid IS NOT NULL ORDER BY rid) s
        WHERE NOT EXISTS (
          SELECT 1 FROM resource_presence q
           WHERE q.kind = $1 AND q.scope_key = $2 AND q.resource_id = s.rid AND q.first_seen_at <= $3
             AND (NOT (${advances('q')})
                  OR ($5::boolean AND q.last_seen_at IS NULL AND q.gone_at IS NULL AND q.name IS NOT DISTINCT FROM s.nm)))
       ON CONFLICT (kind, scope_key, resource_id) DO UPDATE SET
         first_seen_at = LEAST(p.first_seen_at, EXCLUDED.first_seen_at),
         first_snapshot_id = CASE WHEN EXCLUDED.first_seen_at < p.first_seen_at THEN EXCLUDED.first_snapshot_id ELSE p.first_snapshot_id END,
         last_seen_at = CASE WHEN ${updates} THEN EXCLUDED.last_seen_at ELSE p.last_seen_at END,
         last_snapshot_id = CASE WHEN ${updates} THEN EXCLUDED.last_snapshot_id ELSE p.last_snapshot_id END,
         name = CASE WHEN ${updates} THEN EXCLUDED.name ELSE p.name END,
         gone_at = CASE WHEN ${updates} THEN NULL ELSE p.gone_at END`,
      [...params, latest, scope?.seen_at ?? null],
    );
    // Rows with an explicit last seen before this snapshot and not in it (carried rows excepted).
    await tx.execute(
      `UPDATE resource_presence p SET gone_at = $3
        WHERE kind = $1 AND scope_key = $2 AND gone_at IS NULL AND last_seen_at < $3${
          source.carried
            ? `
          AND NOT EXISTS (SELECT 1 FROM (${snapshotRowsSql(table, `${source.id} AS rid, ${source.carried} AS carried`, '$4')}) c WHERE c.carried AND c.rid = p.resource_id)`
            : ''
        }`,
      source.carried ? params : params.slice(0, 3),
    );
    if (latest) await advanceScope(tx, params);
  }
}

/** The scope's implicit last seen becomes the snapshot's (params: kind, scope, taken_at, snapshot id). */
async function advanceScope(tx: Queryable, params: readonly unknown[]): Promise<void> {
  await tx.execute(
    `INSERT INTO resource_presence_scopes (kind, scope_key, seen_at, snapshot_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (kind, scope_key) DO UPDATE SET seen_at = EXCLUDED.seen_at, snapshot_id = EXCLUDED.snapshot_id`,
    params,
  );
}

/**
 * Whether the snapshot holds exactly the rows of the snapshot presence was last written from
 * (the scope's seen_at), so that advancing seen_at is all there is to write: its resources, all
 * seen then, have last_seen_at NULL, and the rows missing from it were marked then. Holds unless a
 * row has an explicit last seen at or after that time (one with a later last seen than the
 * scope's, from data stored before migration 0016), which the full path handles.
 */
async function repeatsSeenSnapshot(
  tx: Queryable,
  kind: PresenceKind,
  snapshot: PresenceSnapshot,
  scope: { seen_at: Date; snapshot_id: number },
): Promise<boolean> {
  if (snapshot.sameRowsAs == null || snapshot.sameRowsAs !== scope.snapshot_id) return false;
  const later = await tx.query(
    'SELECT 1 FROM resource_presence WHERE kind = $1 AND scope_key = $2 AND last_seen_at >= $3 LIMIT 1',
    [kind, snapshot.scopeKey, scope.seen_at],
  );
  return later.length === 0;
}

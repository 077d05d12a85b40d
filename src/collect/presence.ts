/**
 * First / last seen per resource (resource_presence), kept up to date by each snapshot's
 * finalising transaction: every resource in the snapshot is upserted as seen at the snapshot's
 * time, and, because only complete snapshots are finalised, the scope's resources missing from
 * it are marked gone. A failed scope writes no snapshot, so it never marks anything gone; rows
 * carried over unread (ports of an instance whose ports could not be read) are neither seen nor gone.
 */
import type { Queryable } from '../db/connection.js';
import type { PresenceKind, SnapshotKind } from '../db/schema.js';

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
}

/** Upserts the snapshot's resources and marks the scope's missing ones gone. Run it inside the finalising transaction. */
export async function updatePresence(tx: Queryable, snapshot: PresenceSnapshot): Promise<void> {
  for (const source of SOURCES[snapshot.kind]) {
    const params = [source.kind, snapshot.scopeKey, snapshot.takenAt, snapshot.id];
    // A snapshot older than what is already known (backfilled history) only widens first_seen.
    await tx.execute(
      `INSERT INTO resource_presence AS p
         (kind, scope_key, resource_id, name, first_seen_at, last_seen_at, gone_at, first_snapshot_id, last_snapshot_id)
       SELECT DISTINCT ON (s.rid) $1, $2, s.rid, s.nm, $3, $3, NULL, $4, $4
         FROM (SELECT ${source.id} AS rid, ${source.name} AS nm FROM ${source.table}
                WHERE snapshot_id = $4${source.carried ? ` AND NOT (${source.carried})` : ''}) s
        WHERE s.rid IS NOT NULL
        ORDER BY s.rid
       ON CONFLICT (kind, scope_key, resource_id) DO UPDATE SET
         first_seen_at = LEAST(p.first_seen_at, EXCLUDED.first_seen_at),
         first_snapshot_id = CASE WHEN EXCLUDED.first_seen_at < p.first_seen_at THEN EXCLUDED.first_snapshot_id ELSE p.first_snapshot_id END,
         last_seen_at = GREATEST(p.last_seen_at, EXCLUDED.last_seen_at),
         last_snapshot_id = CASE WHEN EXCLUDED.last_seen_at >= p.last_seen_at THEN EXCLUDED.last_snapshot_id ELSE p.last_snapshot_id END,
         name = CASE WHEN EXCLUDED.last_seen_at >= p.last_seen_at THEN EXCLUDED.name ELSE p.name END,
         gone_at = CASE WHEN EXCLUDED.last_seen_at >= p.last_seen_at THEN NULL ELSE p.gone_at END`,
      params,
    );
    if (source.carried) {
      await tx.execute(
        `UPDATE resource_presence p SET gone_at = $3
          WHERE kind = $1 AND scope_key = $2 AND gone_at IS NULL AND last_seen_at < $3
            AND NOT EXISTS (SELECT 1 FROM ${source.table} c WHERE c.snapshot_id = $4 AND (${source.carried}) AND c.${source.id} = p.resource_id)`,
        params,
      );
    } else {
      await tx.execute(
        `UPDATE resource_presence SET gone_at = $3
          WHERE kind = $1 AND scope_key = $2 AND gone_at IS NULL AND last_seen_at < $3`,
        params.slice(0, 3),
      );
    }
  }
}

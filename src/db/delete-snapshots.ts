/**
 * Deleting snapshots together with their rows (staged and kept). Those tables have no foreign key to
 * snapshots (a check per COPYed row was too slow), so whoever deletes snapshots deletes their
 * staged rows too. This used to be a statement trigger on snapshots (migration 0017, dropped in
 * 0034): Citus cannot run a trigger with a transition table on a reference table, so the same
 * deletion is done here, as plain statements that run alike on Postgres, PGlite and Citus.
 * Run it inside a transaction when the two must go together.
 */
import type { Queryable } from './connection.js';
import { VERSIONED_TABLES } from './versions.js';

/**
 * Deletes the snapshots `s` matching `condition` (trusted SQL over alias `s`, with $1.. from
 * `params`) and the staged and kept rows of each; returns the number of snapshots deleted.
 */
export async function deleteSnapshots(q: Queryable, condition: string, params: readonly unknown[] = []): Promise<number> {
  const gone = await q.execute<{ id: number }>(`DELETE FROM snapshots s WHERE ${condition} RETURNING s.id`, params);
  if (gone.rowCount === 0) return 0;
  const ids = gone.rows.map((r) => r.id);
  for (const table of VERSIONED_TABLES.flatMap((t) => [t.staged, t.kept])) {
    await q.execute(`DELETE FROM "${table}" WHERE snapshot_id = ANY($1::int[])`, [ids]);
  }
  return gone.rowCount;
}

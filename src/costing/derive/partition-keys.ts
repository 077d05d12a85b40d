/** The tag keys that get cost partitions (costing/partitions.ts), recorded from the configured access scopes. */
import type { Database, Queryable } from '../../db/connection.js';
import type { Logger } from '../../logger.js';
import { PRICED_KINDS } from '../pricing.js';
import { computeCostRollups } from './rollups.js';

/** The keys whose partitions the rollups write, sorted. */
export async function partitionKeys(q: Queryable): Promise<string[]> {
  return (await q.query<{ key: string }>('select key from cost_partition_keys order by key')).map((r) => r.key);
}

/**
 * Records `keys` (the configured scopes' tag keys) and gives the kept history the partitions of
 * the new ones: every complete priced snapshot's rollups are written again (one transaction each,
 * as recompute-rollups does), then the keys are marked complete from the first day after the last
 * sealed day (a sealed day's detail is gone, so its partitions cannot be known). A key recorded
 * before and never completed (an interrupted start) is completed again. Keys are never removed:
 * a key no longer configured keeps its partitions, which cost little and stay right.
 */
export async function ensurePartitionKeys(db: Database, keys: readonly string[], logger: Logger): Promise<{ completed: string[]; snapshots: number }> {
  if (keys.length > 0) {
    await db.execute('insert into cost_partition_keys (key) select unnest($1::text[]) on conflict (key) do nothing', [[...new Set(keys)]]);
  }
  const pending = (await db.query<{ key: string }>('select key from cost_partition_keys where complete_from is null order by key')).map((r) => r.key);
  if (pending.length === 0) return { completed: [], snapshots: 0 };
  const snapshots = await db.query<{ id: number }>('select id from snapshots where complete and kind = any($1::text[]) order by id', [PRICED_KINDS]);
  const started = performance.now();
  for (const { id } of snapshots) await computeCostRollups(db, id);
  await db.execute(
    `update cost_partition_keys set complete_from = coalesce((select (max(day) + 1)::timestamp at time zone 'UTC' from cost_daily_sealed_days), '-infinity')
      where key = any($1::text[]) and complete_from is null`,
    [pending],
  );
  logger.info({ component: 'costing', keys: pending, snapshots: snapshots.length, durationMs: Math.round(performance.now() - started) }, 'cost partitions written for the access scopes\' tag keys');
  return { completed: pending, snapshots: snapshots.length };
}

/** When the partitions of `key` are complete from (null: not yet, or the key is not recorded); -infinity for the whole history. */
export async function partitionsCompleteFrom(q: Queryable, key: string): Promise<Date | null | '-infinity'> {
  const [row] = await q.query<{ from: string | null }>(`select complete_from::text as from from cost_partition_keys where key = $1`, [key]);
  if (!row || row.from === null) return null;
  return row.from === '-infinity' ? '-infinity' : new Date(row.from);
}

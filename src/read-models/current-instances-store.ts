/**
 * current_instances (schema.ts): the rows of SNAPSHOT_INSTANCES_SQL with the idle rules' tag
 * values extracted, built after each collection run so that the idle candidates list reads one
 * narrow table instead of the snapshots and every instance's tags and flavor prices.
 *
 * It is derived data, and stale as soon as a collection completes a snapshot, a flavor snapshot
 * prices one differently or the idle rules' tag keys change: its stamp records what it was built
 * from (the latest complete instance and cluster snapshot of each scope, the flavor snapshot
 * pricing each, the tag keys) and readers use the table only while the stamp is the one of the
 * current snapshots and settings (currentInstancesFresh). Stops made through cloudtally are not in
 * it: readers apply them, as they do on the snapshots.
 */
import { Binds } from '../db/binds.js';
import type { Database, Queryable } from '../db/connection.js';
import { flavorSnapshotSql } from '../db/cost-model.js';
import { SNAPSHOT_INSTANCES_SQL } from './current-instances.js';
import type { IdleRuleSettings } from './idle-rules.js';
import { idleRuleInputsFromTags } from './idle-rules-sql.js';

/** Bump when what the table holds or how it is extracted changes: a table built before is then rebuilt, never read. */
const FORMAT = 1;

/** Columns of current_instances in the order SNAPSHOT_INSTANCES_SQL yields them, then the extracted inputs. */
const COLUMNS = [
  'scope_key', 'kind', 'instance_id', 'project_id', 'region_id', 'taken_at', 'name', 'status', 'vm_state', 'snapshot_running',
  'created_at', 'tags', 'security_group_ids', 'security_group_names', 'region', 'flavor_name', 'flavor_id', 'cluster_id',
  'cluster_name', 'cluster_task_status', 'price_per_hour', 'price_per_month', 'currency_code',
  'owner_missing', 'expires_at', 'off_hours_value',
] as const;

/**
 * SQL: the stamp of the current snapshots and idle settings, a digest of the latest complete
 * instance and cluster snapshot of each scope with the flavor snapshot that prices it (complete
 * snapshots never change) and of the tag keys the rules read.
 */
function currentStampSql(settings: IdleRuleSettings, binds: Binds): string {
  const keys = JSON.stringify([FORMAT, settings.ownerTagKey, settings.idleRules.expired.tagKey, settings.idleRules.offHours.tagKey]);
  return `md5(${binds.add(keys)}::text || '|' || coalesce((
    select string_agg(s0.kind || ':' || s0.scope_key || ':' || s0.id || ':' || coalesce((${flavorSnapshotSql('s0')})::text, '-'), ',' order by s0.kind, s0.scope_key)
    from (
      select distinct on (kind, scope_key) id, kind, scope_key, taken_at, run_id from snapshots
      where complete and kind in ('instance', 'cluster') order by kind, scope_key, taken_at desc
    ) s0), ''))`;
}

/** Whether current_instances holds the current snapshots under `settings` (else read the snapshots). */
export async function currentInstancesFresh(q: Queryable, settings: IdleRuleSettings): Promise<boolean> {
  const binds = new Binds();
  const [row] = await q.query<{ fresh: boolean | null }>(
    `select (select stamp from current_instances_stamp where id = 1) = ${currentStampSql(settings, binds)} as fresh`,
    binds.values,
  );
  return row?.fresh === true;
}

/**
 * Rebuilds current_instances when its stamp is not the current one (after each collection run and
 * at start-up). Returns the rows written, or null when the table was already current.
 */
export async function refreshCurrentInstances(db: Database, settings: IdleRuleSettings): Promise<number | null> {
  return db.transaction(async (tx) => {
    // One builder at a time (replicas, a run and the start-up); readers go on reading the old rows.
    await tx.execute('lock table current_instances_stamp in exclusive mode');
    if (await currentInstancesFresh(tx, settings)) return null;
    await tx.execute('delete from current_instances');
    const binds = new Binds();
    const inputs = idleRuleInputsFromTags(settings, binds);
    // The rows and the stamp in one statement: both see the same snapshots, whatever commits meanwhile.
    const [row] = await tx.query<{ n: number }>(
      `with built as (
         insert into current_instances (${COLUMNS.join(', ')})
         select x.*, ${inputs.ownerMissing}, ${inputs.expiresAt}, ${inputs.offHoursValue} from (${SNAPSHOT_INSTANCES_SQL}) x
         returning 1),
       stamped as (
         insert into current_instances_stamp (id, stamp, built_at) values (1, ${currentStampSql(settings, binds)}, now())
         on conflict (id) do update set stamp = excluded.stamp, built_at = excluded.built_at
         returning 1)
       select (select count(*) from built)::int as n, (select count(*) from stamped)::int as stamped`,
      binds.values,
    );
    return row!.n;
  });
}

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
import { Binds } from '../../db/binds.js';
import type { Database, Queryable } from '../../db/connection.js';
import { LATEST_INSTANCE_SNAPSHOTS_SQL, SNAPSHOT_INSTANCES_SQL } from '../current-instances.js';
import { flavorSnapshotSql } from '../pricing.js';

/**
 * What the table extracts from each instance's tags besides its own columns (the idle rules'
 * inputs: read-models/idle-rules-sql.ts idleTagExtraction), and the tag keys that decides.
 */
export interface TagExtraction {
  /** The tag keys read; other keys make the table stale. */
  readonly keys: readonly string[];
  /** SQL of each extracted column over instance rows `x` (tags jsonb), binding parameters in `binds`. */
  columns(binds: Binds): { ownerMissing: string; expiresAt: string; offHoursValue: string };
}

/** Bump when what the table holds or how it is extracted changes: a table built before is then rebuilt, never read. */
const FORMAT = 1;

/** Columns of current_instances: SNAPSHOT_INSTANCES_SQL's but taken_at, then the extracted inputs. */
/** The primary key. */
const KEY: readonly string[] = ['scope_key', 'kind', 'instance_id'];

const COLUMNS = [
  'scope_key', 'kind', 'instance_id', 'project_id', 'region_id', 'name', 'status', 'vm_state', 'snapshot_running',
  'created_at', 'tags', 'security_group_ids', 'security_group_names', 'region', 'flavor_name', 'flavor_id', 'cluster_id',
  'cluster_name', 'cluster_task_status', 'price_per_hour', 'price_per_month', 'currency_code',
  'owner_missing', 'expires_at', 'off_hours_value',
] as const;

/**
 * SQL: the stamp of the current snapshots and idle settings, a digest of the latest complete
 * instance and cluster snapshot of each scope with the flavor snapshot that prices it (complete
 * snapshots never change) and of the tag keys the rules read.
 */
function currentStampSql(extraction: TagExtraction, binds: Binds): string {
  const keys = JSON.stringify([FORMAT, ...extraction.keys]);
  return `md5(${binds.add(keys)}::text || '|' || coalesce((
    select string_agg(s0.kind || ':' || s0.scope_key || ':' || s0.id || ':' || coalesce((${flavorSnapshotSql('s0')})::text, '-'), ',' order by s0.kind, s0.scope_key)
    from (${LATEST_INSTANCE_SNAPSHOTS_SQL}) s0), ''))`;
}

/** Whether current_instances holds the current snapshots under `extraction` (else read the snapshots). */
export async function currentInstancesFresh(q: Queryable, extraction: TagExtraction): Promise<boolean> {
  const binds = new Binds();
  const [row] = await q.query<{ fresh: boolean | null }>(
    `select (select stamp from current_instances_stamp where id = 1) = ${currentStampSql(extraction, binds)} as fresh`,
    binds.values,
  );
  return row?.fresh === true;
}

export interface CurrentInstancesRefresh {
  /** Rows the table now holds. */
  rows: number;
  /** Rows inserted, updated or deleted (only those that changed are written). */
  written: number;
}

/**
 * Brings current_instances to the current snapshots and settings when its stamp is not the
 * current one (after each collection run and at start-up); null when it already was. Only rows
 * that changed are written, so a run in which 1% of the instances changed writes 1% of the rows.
 */
export async function refreshCurrentInstances(db: Database, extraction: TagExtraction): Promise<CurrentInstancesRefresh | null> {
  return db.transaction(async (tx) => {
    // One builder at a time (replicas, a run and the start-up); readers go on reading the old rows.
    await tx.execute('lock table current_instances_stamp in exclusive mode');
    if (await currentInstancesFresh(tx, extraction)) return null;
    const binds = new Binds();
    const inputs = extraction.columns(binds);
    // The rows and the stamp in one statement: both see the same snapshots, whatever commits
    // meanwhile (one row with only the stamp when there are no rows).
    await tx.execute(
      `create temp table current_instances_fresh on commit drop as
       select r.*, st.stamp from (select ${currentStampSql(extraction, binds)} as stamp) st
       left join (select x.*, ${inputs.ownerMissing} as owner_missing, ${inputs.expiresAt} as expires_at, ${inputs.offHoursValue} as off_hours_value
                  from (${SNAPSHOT_INSTANCES_SQL}) x) r on true`,
      binds.values,
    );
    const key = (a: string, b: string) => KEY.map((c) => `${a}.${c} = ${b}.${c}`).join(' and ');
    // The keys gone, found first (Citus plans a modification that reads the local temporary
    // table only through such a result, not through a correlated subquery).
    const keys = KEY.join(', ');
    const deleted = await tx.execute(
      `with gone as (select ${keys} from current_instances except select ${keys} from current_instances_fresh)
       delete from current_instances c using gone g where ${key('g', 'c')}`,
    );
    // Content compared as binary images (as the fold does): numeric 1.0 and 1.00 differ, as they show.
    const row = (t: string) => `row(${COLUMNS.map((c) => `${t}.${c}`).join(', ')})`;
    const upserted = await tx.execute(
      `insert into current_instances (${COLUMNS.join(', ')})
       select ${COLUMNS.join(', ')} from current_instances_fresh where instance_id is not null
       on conflict (${KEY.join(', ')}) do update set ${COLUMNS.filter((c) => !KEY.includes(c)).map((c) => `${c} = excluded.${c}`).join(', ')}
       where not record_image_eq(${row('current_instances')}, ${row('excluded')})`,
    );
    await tx.execute(
      `insert into current_instances_stamp (id, stamp, built_at) select 1, stamp, now() from current_instances_fresh limit 1
       on conflict (id) do update set stamp = excluded.stamp, built_at = excluded.built_at`,
    );
    const [count] = await tx.query<{ n: number }>('select count(*)::int as n from current_instances');
    return { rows: count!.n, written: deleted.rowCount + upserted.rowCount };
  });
}

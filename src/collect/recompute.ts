/**
 * Re-applies the current tag rules (key case and aliases, value case and aliases) to the history:
 * the stored tags of every kept priced snapshot are re-derived from the tags as received
 * (`tags_original`, never changed), then the snapshot's cost rollups are rebuilt; finally the
 * daily costs of sealed days (whose detail retention has thinned) have their tag values merged by
 * the value rules. See docs/tags.md.
 *
 * Safety: one transaction per snapshot (its tags and its rollups change together or not at all),
 * in ascending id order, and everything is idempotent: an interrupted run is finished by running
 * it again. The sealed-day merge is one transaction. Lock waits are bounded (lockTimeoutMs): a
 * snapshot that meets a lock held elsewhere fails and keeps its rollups until the next run.
 */
import { normaliseTagValue, type TagRules } from '../tags/normalise.js';
import type { Database, Queryable } from '../db/connection.js';
import { writeDailyTotals } from '../costing/derive/closed-days.js';
import { computeCostRollups } from '../costing/derive/rollups.js';
import { PRICED_KINDS, TAG_DIMENSION_PREFIX } from '../costing/pricing.js';
import { withLockTimeout } from '../db/local-settings.js';
import { UNTAGGED, type OriginalTag } from '../db/schema.js';
import { snapshotRowsSql, versionedTable, versionSeenBy } from '../db/versions.js';
import { retagColumns } from './tags.js';

/** Tag-bearing resource tables per priced kind, with their primary key after snapshot_id (trusted constants). */
const TAGGED_TABLES: Record<string, ReadonlyArray<{ table: string; keys: readonly string[] }>> = {
  instance: [{ table: 'instances', keys: ['instance_id'] }],
  cluster: [
    { table: 'gpu_clusters', keys: ['cluster_id'] },
    { table: 'gpu_cluster_servers', keys: ['cluster_id', 'server_id'] },
  ],
  k8s_price: [{ table: 'k8s_cluster_prices', keys: ['cluster_name'] }],
};

const UPDATE_BATCH = 5_000;

export interface RecomputeFailure {
  snapshotId: number;
  message: string;
}

export interface RecomputeSummary {
  /** Priced snapshots whose rollups were rebuilt. */
  snapshots: number;
  /** Resource rows whose stored tags changed under the current rules. */
  retaggedRows: number;
  /** Sealed-day cost_daily rows whose tag value changed (merged into the canonical value's row). */
  mergedDailyRows: number;
  failures: RecomputeFailure[];
}

export interface RecomputeOptions {
  /** Called after each snapshot (done or failed), for progress output. */
  onSnapshot?: (done: number, total: number) => void;
  /** lock_timeout of each transaction (default 5 s). */
  lockTimeoutMs?: number;
}

const DEFAULT_LOCK_TIMEOUT_MS = 5_000;

export async function recomputeRollups(db: Database, rules: TagRules, options: RecomputeOptions = {}): Promise<RecomputeSummary> {
  const snapshots = await db.query<{ id: number; kind: string }>(
    'select id, kind from snapshots where complete and kind = any($1::text[]) order by id',
    [PRICED_KINDS],
  );
  const summary: RecomputeSummary = { snapshots: 0, retaggedRows: 0, mergedDailyRows: 0, failures: [] };
  const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  for (const [i, snapshot] of snapshots.entries()) {
    try {
      summary.retaggedRows += await withLockTimeout(db, lockTimeoutMs, async (tx) => {
        let changed = 0;
        for (const spec of TAGGED_TABLES[snapshot.kind] ?? []) changed += await retagTable(tx, spec, snapshot.id, rules);
        await computeCostRollups(tx, snapshot.id);
        return changed;
      });
      summary.snapshots++;
    } catch (error) {
      summary.failures.push({ snapshotId: snapshot.id, message: (error as Error).message });
    }
    options.onSnapshot?.(i + 1, snapshots.length);
  }
  summary.mergedDailyRows = await mergeSealedDailyValues(db, rules, lockTimeoutMs);
  return summary;
}

/** Re-derives `tags` and `tags_read_only` of one table's rows of a snapshot; returns the rows changed. */
async function retagTable(tx: Queryable, spec: { table: string; keys: readonly string[] }, snapshotId: number, rules: TagRules): Promise<number> {
  // The snapshot's rows read from versions and kept rows directly (Citus cannot plan the view).
  const rows = await tx.query<Record<string, unknown> & { tags: Record<string, string>; tags_read_only: string[]; tags_original: OriginalTag[] }>(
    snapshotRowsSql(versionedTable(spec.table), `${spec.keys.join(', ')}, tags, tags_read_only, tags_original`, '$1'),
    [snapshotId],
  );
  const changed: Array<{ keys: string[]; tags: string; readOnly: string }> = [];
  for (const row of rows) {
    const next = retagColumns(row.tags_original ?? [], rules);
    if (sameTags(row.tags, next.tags) && sameList(row.tags_read_only, next.tagsReadOnly)) continue;
    changed.push({ keys: spec.keys.map((k) => String(row[k])), tags: JSON.stringify(next.tags), readOnly: JSON.stringify(next.tagsReadOnly) });
  }
  const stored = versionedTable(spec.table);
  for (let start = 0; start < changed.length; start += UPDATE_BATCH) {
    const batch = changed.slice(start, start + UPDATE_BATCH);
    const n = spec.keys.length;
    const params = [snapshotId, ...spec.keys.map((_, i) => batch.map((c) => c.keys[i])), batch.map((c) => c.tags), batch.map((c) => c.readOnly)];
    const source = `unnest(${spec.keys.map((_, i) => `$${i + 2}::text[]`).join(', ')}, $${n + 2}::text[], $${n + 3}::text[])
         as u(${spec.keys.map((_, i) => `k${i}`).join(', ')}, tags, read_only)`;
    const sameKeys = spec.keys.map((k, i) => `t.${k} = u.k${i}`).join(' and ');
    // The snapshot's rows are kept rows (not folded), or the versions it sees (their tags are re-derived from
    // the same tags as received, so every snapshot sharing a version gets the same result).
    await tx.execute(
      `update ${stored.kept} t set tags = u.tags::jsonb, tags_read_only = array(select jsonb_array_elements_text(u.read_only::jsonb))
       from ${source} where t.snapshot_id = $1 and ${sameKeys}`,
      params,
    );
    const seen = `from ${source}, snapshots s
       where s.id = $1 and s.versioned and ${versionSeenBy('t', 's')} and ${sameKeys}`;
    await tx.execute(`update ${stored.versions} t set tags = u.tags::jsonb, tags_read_only = array(select jsonb_array_elements_text(u.read_only::jsonb)) ${seen}`, params);
  }
  return changed.length;
}

function sameTags(a: Record<string, string> | null, b: Record<string, string>): boolean {
  const x = Object.entries(a ?? {}).sort(([k], [l]) => (k < l ? -1 : k > l ? 1 : 0));
  const y = Object.entries(b).sort(([k], [l]) => (k < l ? -1 : k > l ? 1 : 0));
  return JSON.stringify(x) === JSON.stringify(y);
}

function sameList(a: readonly string[] | null, b: readonly string[]): boolean {
  return JSON.stringify([...(a ?? [])].sort()) === JSON.stringify([...b].sort());
}

/**
 * Sealed days keep only their daily totals, so their tag values are mapped through the value rules
 * and rows that now share a group are added together (exact: each resource has one value per key).
 * Values merge, never split: a rule removed later cannot separate what was merged. Key rules are
 * not applied here (a resource may carry two keys that now mean one, which daily totals cannot tell).
 */
async function mergeSealedDailyValues(db: Database, rules: TagRules, lockTimeoutMs: number): Promise<number> {
  const groups = await db.query<{ dimension: string; group_value: string }>(
    `select distinct dimension, group_value from cost_daily
     where dimension like 'tag:%' and group_value <> $1 and day in (select day from cost_daily_sealed_days)`,
    [UNTAGGED],
  );
  const moves = groups.flatMap((g) => {
    const next = normaliseTagValue(g.dimension.slice(TAG_DIMENSION_PREFIX.length), g.group_value, rules);
    return next === g.group_value ? [] : [{ ...g, next }];
  });
  if (moves.length === 0) return 0;
  return withLockTimeout(db, lockTimeoutMs, async (tx) => {
    const moved = await tx.query<{ n: number; days: string[] }>(
      `with m as (select * from unnest($1::text[], $2::text[], $3::text[]) as m(dimension, old_value, new_value)),
       moved as (
         delete from cost_daily d using m
         where d.dimension = m.dimension and d.group_value = m.old_value and d.day in (select day from cost_daily_sealed_days)
         returning d.*, m.new_value
       ),
       merged as (
         insert into cost_daily as c (day, kind, scope_key, project_id, region_id, dimension, group_value, currency,
           price_seconds, resource_seconds, unpriced_resource_seconds, max_resource_count,
           gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds, computed_at)
         select day, kind, scope_key, max(project_id), max(region_id), dimension, new_value, currency,
           sum(price_seconds), sum(resource_seconds), sum(unpriced_resource_seconds), sum(max_resource_count),
           -- GPU figures stay unknown (NULL) when any merged row predates GPU counting.
           case when bool_and(gpu_seconds is not null) then sum(gpu_seconds) end,
           case when bool_and(gpu_seconds is not null) then sum(gpu_price_seconds) end,
           case when bool_and(gpu_seconds is not null) then sum(gpu_unknown_resource_seconds) end, now()
         from moved group by day, kind, scope_key, dimension, new_value, currency
         on conflict on constraint cost_daily_group_uq do update set
           price_seconds = c.price_seconds + excluded.price_seconds,
           resource_seconds = c.resource_seconds + excluded.resource_seconds,
           unpriced_resource_seconds = c.unpriced_resource_seconds + excluded.unpriced_resource_seconds,
           max_resource_count = c.max_resource_count + excluded.max_resource_count,
           gpu_seconds = c.gpu_seconds + excluded.gpu_seconds,
           gpu_price_seconds = c.gpu_price_seconds + excluded.gpu_price_seconds,
           gpu_unknown_resource_seconds = c.gpu_unknown_resource_seconds + excluded.gpu_unknown_resource_seconds,
           computed_at = now()
         returning 1
       )
       select (select count(*) from moved)::int as n,
         (select coalesce(array_agg(distinct to_char(day, 'YYYY-MM-DD')), '{}') from moved) as days`,
      [moves.map((m) => m.dimension), moves.map((m) => m.group_value), moves.map((m) => m.next)],
    );
    // The merged days' totals (summed over scopes) follow their cost_daily rows.
    await writeDailyTotals(tx, moved[0]?.days ?? []);
    return moved[0]?.n ?? 0;
  });
}

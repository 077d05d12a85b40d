/** Cost rollups: per priced snapshot, its run-rate grouped by every dimension, written when the snapshot completes. */
import type { Queryable } from '../../db/connection.js';
import { withLocalSettings } from '../../db/local-settings.js';
import { UNTAGGED } from '../../db/schema.js';
import { sqlLiteral as sqlText } from '../../db/sql-literal.js';
import { inTransaction } from '../../db/transaction.js';
import { sameContentSql, snapshotRowsSql, versionedTable } from '../../db/versions.js';
import {
  flavorSnapshotSql,
  NO_VALUE,
  PRICED_KINDS,
  pricedResourcesSql,
  STATE_RUNNING,
  STATE_STOPPED,
  TAG_DIMENSION_PREFIX,
  type PricedKind,
} from '../pricing.js';
import { CAP_TOLERANCE_SECS } from '../gap-caps.js';
import { partitionPrefixSql } from '../partitions.js';
import { partitionKeys } from './partition-keys.js';
import { snapshotSourcesSql, SOURCES } from '../snapshot-sources.js';
/**
 * Writes cost_rollups rows for one complete priced snapshot (kind instance, cluster or k8s_price),
 * using the latest complete flavor snapshot of the same scope taken at or before it. Idempotent
 * (deletes then inserts). Dimensions: project, region, kind, flavor, state (running / stopped),
 * and `tag:<key>` for every tag key present among the snapshot's resources, resources lacking the
 * key in the `(untagged)` group. Call it inside the transaction that completes the snapshot (it
 * does not check `complete`, so it can run just before the flag is set).
 */
export async function computeCostRollups(q: Queryable, snapshotId: number): Promise<void> {
  const found = await q.query<{ kind: string }>('select kind from snapshots where id = $1', [snapshotId]);
  const kind = found[0]?.kind;
  if (kind === undefined) throw new Error(`computeCostRollups: snapshot ${snapshotId} does not exist`);
  if (!(PRICED_KINDS as readonly string[]).includes(kind)) {
    throw new Error(`computeCostRollups: snapshot ${snapshotId} is of kind ${kind}, which carries no cost (expected ${PRICED_KINDS.join(', ')})`);
  }
  await inTransaction(q, async (tx) => {
    await tx.execute('delete from cost_rollups where snapshot_id = $1', [snapshotId]);
    // The planner hashes grouping sets only when it expects the hash tables to fit in work_mem,
    // and it expects one group per resource (it cannot know how many share a tag set): with the
    // default 4 MB it sorts every resource row instead, several times slower.
    const keys = await partitionKeys(tx);
    await withLocalSettings(tx, { work_mem: '64MB' }, () => tx.execute(rollupInsertSql(kind as PricedKind, keys), [snapshotId, UNTAGGED]));
    await reopenDaysAffectedBy(tx, snapshotId);
  });
}

/**
 * Writes the cost rollups of a complete priced snapshot (computeCostRollups), or copies them from
 * `sameRowsAs` (the previous snapshot of its kind and scope, holding exactly the same rows: see
 * foldSnapshot) when nothing else they depend on differs either: the same project and region, and
 * a flavor catalogue of the same content pricing both. Rollups are a function of those inputs
 * alone, so the copy equals what computing would give, for the cost of copying a few hundred
 * rows instead of pricing and grouping every resource. Rollups written before GPUs were counted
 * are never copied. Returns which was done.
 */
export async function writeCostRollups(q: Queryable, snapshotId: number, sameRowsAs: number | null): Promise<'copied' | 'computed'> {
  if (sameRowsAs === null || !(await samePricingInputs(q, snapshotId, sameRowsAs))) {
    await computeCostRollups(q, snapshotId);
    return 'computed';
  }
  await inTransaction(q, async (tx) => {
    await tx.execute('delete from cost_rollups where snapshot_id = $1', [snapshotId]);
    await tx.execute(
      `insert into cost_rollups (snapshot_id, taken_at, kind, scope_key, project_id, region_id, dimension, group_value, currency,
         price_per_hour, price_per_month, resource_count, unpriced_count, gpu_count, gpu_price_per_hour, gpu_unknown_count)
       select s.id, s.taken_at, s.kind, s.scope_key, s.project_id, s.region_id, r.dimension, r.group_value, r.currency,
         r.price_per_hour, r.price_per_month, r.resource_count, r.unpriced_count, r.gpu_count, r.gpu_price_per_hour, r.gpu_unknown_count
         from cost_rollups r cross join snapshots s
        where r.snapshot_id = $2 and s.id = $1`,
      [snapshotId, sameRowsAs],
    );
    await reopenDaysAffectedBy(tx, snapshotId);
  });
  return 'copied';
}

/**
 * Whether snapshots `a` and `b` (holding the same rows) price alike: same kind, scope, project and
 * region, flavor catalogues of the same content (the same snapshot, or rows equal one by one),
 * and b's rollups all written with GPU figures.
 */
async function samePricingInputs(q: Queryable, a: number, b: number): Promise<boolean> {
  // In steps, each statement over the reference table or one snapshot's rows: Citus cannot plan a
  // correlated subquery over the flavors of a snapshot chosen by another subquery.
  const [pair] = await q.query<{ alike: boolean; fa: number | null; fb: number | null }>(
    `with s as (select s.*, ${flavorSnapshotSql('s')} as flavor_snapshot_id from snapshots s where s.id in ($1, $2))
     select a.kind = b.kind and a.scope_key = b.scope_key and a.project_id is not distinct from b.project_id
              and a.region_id is not distinct from b.region_id as alike,
            a.flavor_snapshot_id as fa, b.flavor_snapshot_id as fb
       from s a, s b where a.id = $1 and b.id = $2`,
    [a, b],
  );
  if (!pair?.alike) return false;
  const [old] = await q.query<{ without_gpus: boolean }>('select exists (select 1 from cost_rollups where snapshot_id = $1 and gpu_count is null) as without_gpus', [b]);
  if (old!.without_gpus) return false;
  if (pair.fa === pair.fb) return true;
  if (pair.fa === null || pair.fb === null) return false;
  const flavors = versionedTable('gpu_flavors');
  const columns = flavors.columns.map((c) => `"${c}"`).join(', ');
  const [same] = await q.query<{ same: boolean }>(
    `with x as (${snapshotRowsSql(flavors, columns, '$1')}), y as (${snapshotRowsSql(flavors, columns, '$2')})
     select (select count(*) from x) = (select count(*) from y)
        and not exists (select 1 from x where not exists (select 1 from y where y.flavor_id = x.flavor_id and ${sameContentSql(flavors, 'x', 'y')})) as same`,
    [pair.fa, pair.fb],
  );
  return same!.same;
}

/**
 * Re-opens the closed days whose figures the snapshot's rates change (so reports integrate them
 * live again until closeCompleteDays closes them anew): a snapshot taken at T holds from T for at
 * most the cap plus its tolerance (reach_secs), and cuts the previous one's rate at T, or extends
 * it to T when it came within the tolerance after the cap (time-pieces.ts rateEndSql), so it
 * affects the days that overlap [T - tolerance, T + reach). A backdated snapshot (the demo backfill, a late collection) lands here.
 */
async function reopenDaysAffectedBy(tx: Queryable, snapshotId: number): Promise<void> {
  // In seconds since the epoch, compared with integers: timestamptz arithmetic is STABLE, which
  // Citus refuses over columns in a modification; the instant is read first, exactly (numeric).
  const [snapshot] = await tx.query<{ at: string }>('select extract(epoch from taken_at)::text as at from snapshots where id = $1', [snapshotId]);
  if (!snapshot) return;
  await tx.execute(
    `delete from cost_daily_closed_days c
      where (c.day + 1 - date '1970-01-01')::numeric * 86400 > $1::numeric - $2::int
        and (c.day - date '1970-01-01')::numeric * 86400 < $1::numeric + c.reach_secs`,
    [snapshot.at, CAP_TOLERANCE_SECS],
  );
}

/**
 * One pass over the snapshot's priced resources aggregates them two ways at once (grouping
 * sets): per (currency, running, project, region, kind, flavor) for the fixed dimensions, and
 * per (currency, tag set), usually a few thousand rows out of 100,000, from which the tag
 * dimensions are summed. A tag key's `(untagged)` group is the snapshot's total minus what
 * carries the key, per currency (exact: numeric subtraction).
 *
 * With partition keys (costing/partitions.ts), the same rows again per value of each key: the
 * fixed dimensions from one more grouping set per key (the fixed columns and the key's value,
 * `pv<i>`), the tag dimensions from the tag sets holding the key. Every step below groups by the
 * partition `p`, '' for the company-wide rows.
 */
function rollupInsertSql(kind: PricedKind, keys: readonly string[]): string {
  const state = `case when c.running then ${sqlText(STATE_RUNNING)} else ${sqlText(STATE_STOPPED)} end`;
  const sums = 'sum(c.h) as h, sum(c.m) as m, sum(c.n)::int as n, sum(c.gn)::int as gn, sum(c.gh) as gh, sum(c.gu)::int as gu';
  const fixedColumns = 'r.currency, r.running, r.project_id, r.region_id, r.kind, r.flavor';
  const values = keys.map((key, i) => `, r.tags ->> ${sqlText(key)} as pv${i}`).join('');
  const valueSets = keys.map((_, i) => `, (${fixedColumns}, r.pv${i})`).join('');
  const valueMarks = keys.map((_, i) => `, grouping(r.pv${i}) = 0 as in_p${i}, r.pv${i}`).join('');
  const companyFixed = keys.map((_, i) => ` and grouping(r.pv${i}) = 1`).join('');
  const partFixed = keys.length === 0
    ? `select ''::text as p, c.* from sets c where false`
    : keys.map((key, i) => `select ${partitionPrefixSql(sqlText(key), `c.pv${i}`)} as p, c.* from sets c where c.in_p${i} and c.pv${i} is not null`).join(' union all ');
  const partTags = keys.length === 0
    ? `select ''::text as p, c.* from sets c where false`
    : `select ${partitionPrefixSql('k.key', '(c.tags ->> k.key)')} as p, c.* from sets c cross join unnest(array[${keys.map(sqlText).join(', ')}]::text[]) as k(key) where c.tag_set and (c.tags ->> k.key) is not null`;
  return `with s as materialized (
    select x.id, x.kind, x.scope_key, x.project_id, x.region_id, x.taken_at, x.run_id, ${flavorSnapshotSql('x')} as flavor_snapshot_id
      from snapshots x where x.id = $1
  ),
  ${snapshotSourcesSql(kind, { one: 's', id: '$1' })},
  sets as materialized (
    select grouping(r.tags) = 1${companyFixed} as fixed_set, grouping(r.flavor) = 1 as tag_set${valueMarks},
      r.currency, r.running, r.project_id, r.region_id, r.kind, r.flavor, r.tags,
      coalesce(sum(r.price_per_hour), 0) as h, coalesce(sum(r.price_per_month), 0) as m, count(*)::int as n,
      coalesce(sum(r.gpus * r.quantity), 0)::int as gn, coalesce(sum(r.price_per_hour) filter (where r.gpus > 0), 0) as gh,
      (count(*) filter (where r.gpus is null and r.quantity > 0))::int as gu
    from (select r.*${values} from (${pricedResourcesSql('s', [kind], { sources: SOURCES })}) r) r
    group by grouping sets ((${fixedColumns}), (r.currency, r.tags)${valueSets})
  ),
  by_fixed as (select ''::text as p, c.* from sets c where c.fixed_set union all ${partFixed}),
  by_tags as (select ''::text as p, c.* from sets c where c.tag_set union all ${partTags}),
  fixed as (
    select c.p || d.dimension as dimension, d.group_value, c.currency, ${sums}
    from by_fixed c cross join lateral (values
      ('project', coalesce(c.project_id::text, ${sqlText(NO_VALUE)})),
      ('region', coalesce(c.region_id::text, ${sqlText(NO_VALUE)})),
      ('kind', c.kind),
      ('flavor', c.flavor),
      ('state', ${state})
    ) as d(dimension, group_value)
    group by c.p, d.dimension, d.group_value, c.currency
  ),
  tagged as materialized (
    select c.p, c.p || ${sqlText(TAG_DIMENSION_PREFIX)} || t.key as dimension, t.value as group_value, c.currency, ${sums}
    from by_tags c cross join lateral jsonb_each_text(c.tags) as t(key, value)
    group by c.p, t.key, t.value, c.currency
  ),
  totals as (select c.p, c.currency, ${sums} from by_fixed c group by c.p, c.currency),
  with_key as (select c.p, c.dimension, c.currency, ${sums} from tagged c group by c.p, c.dimension, c.currency),
  untagged as (
    select k.dimension, $2::text as group_value, t.currency,
      t.h - coalesce(w.h, 0) as h, t.m - coalesce(w.m, 0) as m, t.n - coalesce(w.n, 0) as n,
      t.gn - coalesce(w.gn, 0) as gn, t.gh - coalesce(w.gh, 0) as gh, t.gu - coalesce(w.gu, 0) as gu
    from (select distinct p, dimension from tagged) k
    join totals t on t.p = k.p
    left join with_key w on w.dimension = k.dimension and w.currency is not distinct from t.currency
    where t.n - coalesce(w.n, 0) > 0
  ),
  g as (
    select * from fixed
    union all select dimension, group_value, currency, h, m, n, gn, gh, gu from tagged
    union all select * from untagged
  )
  insert into cost_rollups (snapshot_id, taken_at, kind, scope_key, project_id, region_id, dimension, group_value, currency,
    price_per_hour, price_per_month, resource_count, unpriced_count, gpu_count, gpu_price_per_hour, gpu_unknown_count)
  select s.id, s.taken_at, s.kind, s.scope_key, s.project_id, s.region_id, g.dimension, g.group_value, g.currency,
    g.h, g.m, g.n, case when g.currency is null then g.n else 0 end, g.gn, g.gh, g.gu
  from g cross join s`;
}

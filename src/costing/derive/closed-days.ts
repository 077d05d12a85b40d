/** Closed days: cost_daily and its totals written for every complete UTC day, so reports read days instead of integrating them. */
import type { Database, Queryable } from '../../db/connection.js';
import { UNTAGGED } from '../../db/schema.js';
import { sqlLiteral as sqlText } from '../../db/sql-literal.js';
import { inTransaction } from '../../db/transaction.js';
import { PRICED_KINDS } from '../pricing.js';
import { storeClosedDayCoverage } from '../coverage.js';
import { storedIsTagSql, storedPartitionSql } from '../partitions.js';
import { executeStatement, sql } from '../../db/statement.js';
import { capsKey, checkDayRange, reachSecs, gpuSums, pieceWindow, piecesCte, type CostOverTimeOptions } from '../time-pieces.js';
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Closes every complete UTC day not closed yet (or closed under other gap caps) and not sealed:
 * computes its cost_daily rows with refreshCostDaily (the very integration reports do live) and
 * records it in cost_daily_closed_days with its cost_daily_totals and its coverage (costing/coverage.ts),
 * one transaction per day. A day is complete once it
 * has ended: a rate still running (the newest snapshot's, until `now`, capped) is cut at the day's
 * end like any other, so `now` no longer matters to it; a snapshot written later that affects it
 * (a late or backdated collection: taken at T, it changes [T, T + cap)) re-opens it
 * (computeCostRollups, reopenDaysAffectedBy). So yesterday is read from cost_daily from the first
 * run after midnight, not from noon (the longest cap, Kubernetes prices' 12 h, used to be waited for).
 * Then writes the coverage still missing for closed days (storeMissingCoverage) and the totals
 * still missing for sealed and closed days (sumStoredDays). Returns the days closed. Cheap when
 * nothing is left to close or sum (three queries). Aborting stops
 * between days.
 */
export async function closeCompleteDays(db: Database, opts: CostOverTimeOptions & { signal?: AbortSignal } = {}): Promise<string[]> {
  const now = opts.now ?? new Date();
  const w = pieceWindow('2000-01-01', '2000-01-01', { ...opts, now });
  const caps = capsKey(w);
  const reach = reachSecs(w);
  const lastDay = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAY_MS).toISOString().slice(0, 10);
  const kinds = PRICED_KINDS.map(sqlText).join(', ');
  const open = await db.query<{ day: string }>(
    `select to_char(d, 'YYYY-MM-DD') as day
       from generate_series(
         (select min(taken_at at time zone 'UTC')::date from snapshots where complete and kind in (${kinds})),
         $1::date, interval '1 day') d
      where d::date not in (select day from cost_daily_sealed_days)
        and d::date not in (select day from cost_daily_closed_days where caps = $2)
      order by d`,
    [lastDay, caps],
  );
  const closed: string[] = [];
  for (const { day } of open) {
    if (opts.signal?.aborted) break;
    await db.transaction(async (tx) => {
      // Waits for snapshot writers that are re-opening days (and makes them wait), so a day is
      // never closed from figures that miss a snapshot committed meanwhile.
      await tx.execute('lock table cost_daily_closed_days in share row exclusive mode');
      if ((await tx.query('select 1 from cost_daily_sealed_days where day = $1::date', [day])).length > 0) return;
      await refreshCostDaily(tx, { fromDay: day, toDay: day }, { ...opts, now });
      await tx.execute(
        `insert into cost_daily_closed_days (day, caps, reach_secs, closed_at) values ($1::date, $2, $3, now())
         on conflict (day) do update set caps = excluded.caps, reach_secs = excluded.reach_secs, closed_at = excluded.closed_at`,
        [day, caps, reach],
      );
      await storeClosedDayCoverage(tx, [day], { maxGapHours: opts.maxGapHours, now });
      await writeDailyTotals(tx, [day]);
      closed.push(day);
    });
  }
  if (!opts.signal?.aborted) await storeMissingCoverage(db, caps, { maxGapHours: opts.maxGapHours, now }, opts.signal);
  if (!opts.signal?.aborted) await sumStoredDays(db, caps, opts.signal);
  return closed;
}

/** Most days whose coverage one transaction of storeMissingCoverage writes. */
const COVERAGE_BATCH_DAYS = 31;

/**
 * Stores the coverage of the days closed under `caps` without it (closed before coverage was
 * stored), a batch of days per transaction, so the readers stop integrating their snapshots.
 * Cheap when none is missing (one query).
 */
async function storeMissingCoverage(db: Database, caps: string, opts: { maxGapHours: CostOverTimeOptions['maxGapHours']; now: Date }, signal?: AbortSignal): Promise<void> {
  const missing = await db.query<{ day: string }>(
    `select to_char(day, 'YYYY-MM-DD') as day from cost_daily_closed_days where caps = $1 and covered_secs is null order by day`,
    [caps],
  );
  for (let i = 0; i < missing.length && !signal?.aborted; i += COVERAGE_BATCH_DAYS) {
    await db.transaction(async (tx) => {
      // As closing does; a day re-opened meanwhile is no longer closed, and is skipped.
      await tx.execute('lock table cost_daily_closed_days in share row exclusive mode');
      const still = await tx.query<{ day: string }>(
        `select to_char(day, 'YYYY-MM-DD') as day from cost_daily_closed_days where caps = $1 and covered_secs is null and day = any($2::date[])`,
        [caps, missing.slice(i, i + COVERAGE_BATCH_DAYS).map((r) => r.day)],
      );
      await storeClosedDayCoverage(tx, still.map((r) => r.day), opts);
    });
  }
}

/** Most days whose totals one transaction of sumStoredDays writes. */
const TOTALS_BATCH_DAYS = 31;

/**
 * Writes the missing cost_daily_totals of the sealed days and of the days closed under `caps`
 * (days stored before the totals existed, or whose stamp no longer matches), a batch of days per
 * transaction. Cheap when none is missing (one query).
 */
async function sumStoredDays(db: Database, caps: string, signal?: AbortSignal): Promise<void> {
  const missing = await db.query<{ day: string }>(
    `select to_char(d.day, 'YYYY-MM-DD') as day
       from (select day from cost_daily_sealed_days union select day from cost_daily_closed_days where caps = $1) d
      where not exists (select 1 from cost_daily_totals_days t where t.day = d.day and t.source_at = ${STORED_AT_SQL('d.day')})
      order by d.day`,
    [caps],
  );
  for (let i = 0; i < missing.length && !signal?.aborted; i += TOTALS_BATCH_DAYS) {
    const days = missing.slice(i, i + TOTALS_BATCH_DAYS).map((r) => r.day);
    await db.transaction(async (tx) => {
      // As closing does: a day being closed or re-opened meanwhile waits (or is waited for).
      await tx.execute('lock table cost_daily_closed_days in share row exclusive mode');
      await writeDailyTotals(tx, days);
    });
  }
}

/**
 * SQL of the stamp of the cost_daily rows of `day` (an SQL expression): sealed_at when the day is
 * sealed (sealed days win), else closed_at when it is closed, else NULL.
 */
const STORED_AT_SQL = (day: string) =>
  `coalesce((select s.sealed_at from cost_daily_sealed_days s where s.day = ${day}), (select c.closed_at from cost_daily_closed_days c where c.day = ${day}))`;

/**
 * Rewrites cost_daily_totals for `days` ('YYYY-MM-DD') from their cost_daily rows, and stamps
 * each sealed or closed one of them with the sealed_at / closed_at of those rows (days neither
 * sealed nor closed get no stamp: readers integrate them live anyway). Call it in the transaction
 * that writes their cost_daily rows and seals or closes them, after doing so.
 */
export async function writeDailyTotals(q: Queryable, days: readonly string[]): Promise<void> {
  if (days.length === 0) return;
  await inTransaction(q, async (tx) => {
    await tx.execute('delete from cost_daily_totals_days where day = any($1::date[])', [days]);
    await tx.execute('delete from cost_daily_totals where day = any($1::date[])', [days]);
    // The (untagged) rule of the readers (see costOverDaysSql), applied here once per day: for
    // every tag dimension present on the day, the `kind` rows (totals) of each (kind, scope)
    // without a row of it count as (untagged).
    await tx.execute(
      `with d as (
        select day, kind, scope_key, dimension, group_value, currency, price_seconds, resource_seconds, unpriced_resource_seconds,
          gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds
        from cost_daily where day = any($1::date[])
      ),
      tag_dims as (select distinct day, dimension, ${storedPartitionSql('dimension')} || 'kind' as kind_dimension from d where ${storedIsTagSql('dimension')}),
      parts as (
        select day, kind, dimension, group_value, currency, price_seconds, resource_seconds, unpriced_resource_seconds, gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds from d
        union all
        select k.day, k.kind, t.dimension, $2::text, k.currency, k.price_seconds, k.resource_seconds, k.unpriced_resource_seconds, k.gpu_seconds, k.gpu_price_seconds, k.gpu_unknown_resource_seconds
        from d k join tag_dims t on t.day = k.day and k.dimension = t.kind_dimension
        -- An anti-join on the day's rows, not a correlated NOT EXISTS: Citus refuses a correlated
        -- subquery next to a CTE.
        left join (select distinct day, kind, scope_key, dimension from d) x
          on x.day = k.day and x.dimension = t.dimension and x.kind = k.kind and x.scope_key = k.scope_key
        where x.day is null
      )
      insert into cost_daily_totals (day, kind, dimension, group_value, currency, price_seconds, resource_seconds, unpriced_resource_seconds,
        gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds)
      select day, kind, dimension, group_value, currency, sum(price_seconds), sum(resource_seconds), sum(unpriced_resource_seconds),
        -- GPU figures are unknown (NULL) for a group when any of its rows predates GPU counting.
        case when bool_and(gpu_seconds is not null) then sum(gpu_seconds) end,
        case when bool_and(gpu_seconds is not null) then sum(gpu_price_seconds) end,
        case when bool_and(gpu_seconds is not null) then sum(gpu_unknown_resource_seconds) end
      from parts group by day, kind, dimension, group_value, currency
      -- Stored in the order readers fetch them (a dimension's groups of one day side by side).
      order by dimension, day, kind, group_value, currency`,
      [days, UNTAGGED],
    );
    await tx.execute(
      `insert into cost_daily_totals_days (day, source_at)
       select u.day, ${STORED_AT_SQL('u.day')} from unnest($1::date[]) as u(day)
       where ${STORED_AT_SQL('u.day')} is not null`,
      [days],
    );
  });
}

/** Runs fn in a transaction: the caller's, when q is one; else a new one. (JIT is off for every connection: db/connection.ts.) */
/**
 * Recomputes cost_daily for [fromDay, toDay] (UTC dates 'YYYY-MM-DD') from cost_rollups.
 * Idempotent. Each complete priced snapshot's run-rate holds from its taken_at until the next
 * complete snapshot of the same (kind, scope), but never longer than maxGapHours (a gap is capped,
 * not extrapolated); the newest holds until `now`, capped alike. Intervals are split at UTC
 * midnight. A tag dimension that some snapshots of a (kind, scope) in the range lack counts those
 * snapshots' resources as `(untagged)` (readers treat a day without the dimension the same way).
 * Days recorded in cost_daily_sealed_days are left alone (their detail has been thinned;
 * recomputing them would undercount).
 */
export async function refreshCostDaily(
  q: Queryable,
  range: { fromDay: string; toDay: string },
  opts: CostOverTimeOptions = {},
): Promise<void> {
  checkDayRange('refreshCostDaily', range.fromDay, range.toDay);
  const w = pieceWindow(range.fromDay, range.toDay, opts);
  await inTransaction(q, async (tx) => {
    await tx.execute(
      'delete from cost_daily where day between $1::date and $2::date and day not in (select day from cost_daily_sealed_days)',
      [range.fromDay, range.toDay],
    );
    await executeStatement(
      tx,
      sql`with ${piecesCte(sql.raw('cost_daily_sealed_days'), w)},
      tag_dims as (
        select distinct p.kind, p.scope_key, r.dimension, ${sql.raw(storedPartitionSql('r.dimension'))} || 'kind' as kind_dimension
        from pieces p join cost_rollups r on r.snapshot_id = p.id
        where ${sql.raw(storedIsTagSql('r.dimension'))}
      ),
      effective as (
        select p.kind, p.scope_key, p.project_id, p.region_id, p.day, p.secs,
          r.dimension, r.group_value, r.currency, r.price_per_hour, r.resource_count, r.unpriced_count, r.gpu_count, r.gpu_price_per_hour, r.gpu_unknown_count
        from pieces p join cost_rollups r on r.snapshot_id = p.id
        union all
        select p.kind, p.scope_key, p.project_id, p.region_id, p.day, p.secs,
          t.dimension, ${UNTAGGED}::text, k.currency, k.price_per_hour, k.resource_count, k.unpriced_count, k.gpu_count, k.gpu_price_per_hour, k.gpu_unknown_count
        from pieces p
        join tag_dims t on t.kind = p.kind and t.scope_key = p.scope_key
        join cost_rollups k on k.snapshot_id = p.id and k.dimension = t.kind_dimension
        -- x correlated with k, not p (the same snapshot): Citus plans the anti-join only when it
        -- joins two shards of cost_rollups on their distribution column directly.
        where not exists (select 1 from cost_rollups x where x.snapshot_id = k.snapshot_id and x.dimension = t.dimension)
      )
      insert into cost_daily (day, kind, scope_key, project_id, region_id, dimension, group_value, currency,
        price_seconds, resource_seconds, unpriced_resource_seconds, max_resource_count, gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds, computed_at)
      select e.day, e.kind, e.scope_key, max(e.project_id), max(e.region_id), e.dimension, e.group_value, e.currency,
        -- Undivided: readers sum the days and divide by 3600 once, so a figure has the same digits wherever it is summed.
        sum(e.price_per_hour * e.secs), sum(e.resource_count * e.secs), sum(e.unpriced_count * e.secs),
        max(e.resource_count), ${sql.raw(gpuSums('e'))}, now()
      from effective e
      group by e.day, e.kind, e.scope_key, e.dimension, e.group_value, e.currency`,
    );
  });
}


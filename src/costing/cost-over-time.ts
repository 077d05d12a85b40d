/** Cost over time for one dimension: daily costs and costs per month or range, the reports' side of the cost model. */
import type { Queryable } from '../db/connection.js';
import { UNTAGGED } from '../db/schema.js';
import { gapCapsFor, type GapCapSettings } from './gap-caps.js';
import type { CostFilter } from './current-costs.js';
import type { PricedKind } from './pricing.js';
import { arrayParam, queryRows, sql, type SQL } from '../db/statement.js';
import { dimensionRows, dimensionWithin, type DimensionRows } from './partitions.js';
import { capsKey, checkDayRange, gpuSums, pieceWindow, piecesCte, windowTimeRange, type CostOverTimeOptions } from './time-pieces.js';

/**
 * The rollup rows of `dimension` for the snapshots in relation `snaps` (columns id at least), with
 * the `(untagged)` rule applied at read time: a snapshot without any row of a tag dimension (none
 * of its resources carries the key) contributes its `kind` rows (its totals) as `(untagged)`.
 * Columns: snapshot_id, taken_at, kind, scope_key, project_id, region_id, then the `passThrough`
 * columns of `snaps`, then group_value, currency, price_per_hour, price_per_month,
 * resource_count, unpriced_count and the GPU columns.
 */
export function effectiveRollupsSql(
  snaps: SQL,
  dimension: string,
  passThrough: readonly string[] = [],
  /** Extra condition on the rollup rows `r` (e.g. a taken_at range, so the dimension/time index bounds the read). */
  alsoWhere: SQL = sql`true`,
): SQL {
  const cols = sql.raw(['r.snapshot_id', 'r.taken_at', 'r.kind', 'r.scope_key', 'r.project_id', 'r.region_id', ...passThrough.map((c) => `sn.${c}`)].join(', '));
  // Rollup rows without a currency hold the unpriced resources: their amounts are unknown, so
  // NULL (sums stay NULL: "n/a"), never the 0 the rollup stores.
  const values = sql.raw(`r.currency, case when r.currency is not null then r.price_per_hour end as price_per_hour,
    case when r.currency is not null then r.price_per_month end as price_per_month, r.resource_count, r.unpriced_count,
    r.gpu_count, case when r.currency is not null then r.gpu_price_per_hour end as gpu_price_per_hour, r.gpu_unknown_count`);
  const rows = dimensionRows(dimension);
  const fallback = fallbackPairs(rows);
  return sql`select ${cols}, r.group_value, ${values}
    from cost_rollups r join ${snaps} sn on sn.id = r.snapshot_id
    where ${dimensionMatch(rows, sql.raw('r.dimension'))} and ${alsoWhere}
    union all
    select ${cols}, ${UNTAGGED}::text, ${values}
    from cost_rollups r join ${snaps} sn on sn.id = r.snapshot_id ${fallback.join}
    where ${fallback.kindMatch(sql.raw('r.dimension'))} and ${rows.isTag}::boolean and ${alsoWhere}
      and not exists (select 1 from cost_rollups x where x.snapshot_id = r.snapshot_id and x.dimension = ${fallback.dim})`;
}

/** SQL: `column` is one of the dimension's rows (within its partitions: costing/partitions.ts). */
function dimensionMatch(rows: DimensionRows, column: SQL): SQL {
  return rows.dims.length === 1 ? sql`${column} = ${rows.dims[0]}::text` : sql`${column} = any(${arrayParam(rows.dims)}::text[])`;
}

/**
 * How the `(untagged)` rule pairs each partition's `kind` rows with its tag dimension: one pair as
 * bound values (company-wide: the plan as before partitions), several as a joined list.
 */
function fallbackPairs(rows: DimensionRows): { join: SQL; kindMatch: (column: SQL) => SQL; dim: SQL } {
  if (rows.dims.length === 1) return { join: sql``, kindMatch: (column) => sql`${column} = ${rows.kindDims[0]}::text`, dim: sql`${rows.dims[0]}::text` };
  return {
    join: sql`cross join unnest(${arrayParam(rows.kindDims)}::text[], ${arrayParam(rows.dims)}::text[]) as pd(kind_dim, dim)`,
    kindMatch: (column) => sql`${column} = pd.kind_dim`,
    dim: sql`pd.dim`,
  };
}

/** A group's figures over some days, exact decimal text. */
export interface CostFigures {
  group_value: string;
  currency: string | null;
  /** Price integrated over the days; NULL for the rows without a currency. */
  cost: string | null;
  resource_hours: string;
  unpriced_resource_hours: string;
  /** GPU-hours of the resources whose GPU count can be read; NULL when not counted on some day (before GPU counting). */
  gpu_hours: string | null;
  /** Cost of those resources (NULL for the rows without a currency). */
  gpu_cost: string | null;
  /** Hours of running resources whose GPU count cannot be read. */
  gpu_unknown_resource_hours: string | null;
  /** `cost` x 3600, exact: what a sum over groups, days or months adds up before its one division (dividedOnce). */
  price_seconds: string | null;
}

export interface DailyCostRow extends CostFigures {
  day: string;
  /**
   * With DailyCostQuery.withSeconds: the GPU figures x 3600, exact and undivided (NULL like
   * gpu_hours), so that a sum over days can be divided once like price_seconds.
   */
  gpu_seconds?: string | null;
  gpu_price_seconds?: string | null;
  gpu_unknown_resource_seconds?: string | null;
}

export interface DailyCostQuery extends CostOverTimeOptions {
  fromDay: string;
  toDay: string;
  /** `project`, `region`, `kind`, `flavor`, `state` or `tag:<normalised key>`. */
  dimension: string;
  /** Only this priced kind / project / region. */
  kind?: PricedKind;
  projectId?: number;
  regionId?: number;
  /** Also the GPU figures' undivided seconds (DailyCostRow.gpu_seconds and the like). */
  withSeconds?: boolean;
}

/**
 * Cost per UTC day, group and currency over [fromDay, toDay] for one dimension: sealed days from
 * cost_daily (their detail may be gone), every other day integrated live from cost_rollups with
 * the same rules as refreshCostDaily (so it is right whether or not cost_daily was refreshed).
 */
export async function dailyCosts(q: Queryable, query: DailyCostQuery): Promise<DailyCostRow[]> {
  checkDayRange('dailyCosts', query.fromDay, query.toDay);
  const rows = await queryRows<DailyCostRow & { bucket: string } & Record<string, unknown>>(q, costOverDaysSql(query, 'day'));
  return rows.map(({ bucket, ...r }) => ({ ...r, day: bucket }));
}

/** How costOverDays sums the days: per day (YYYY-MM-DD), per calendar month (YYYY-MM) or all together (''). */
export type CostBucket = 'day' | 'month' | 'all';

export interface BucketCostRow extends CostFigures {
  /** The day, the month, or '' for the whole range. */
  bucket: string;
}

/**
 * The same figures as dailyCosts summed per month or over the whole range in SQL (so a year is
 * a few rows per group, not one per day): sealed days from cost_daily, the others integrated live.
 */
export async function costOverDays(q: Queryable, query: DailyCostQuery, bucket: CostBucket): Promise<BucketCostRow[]> {
  checkDayRange('costOverDays', query.fromDay, query.toDay);
  return queryRows<BucketCostRow & Record<string, unknown>>(q, costOverDaysSql(query, bucket));
}

const BUCKET_SQL: Record<CostBucket, string> = {
  day: `to_char(day, 'YYYY-MM-DD')`,
  month: `to_char(day, 'YYYY-MM')`,
  all: `''::text`,
};

/**
 * The decimals of every exact figure divided by 3600 (cost, hours): a fixed scale, so that the same
 * figure has the same digits in every report and export, and rows rounded to it can add up to
 * their total exactly (the FOCUS rows, reports/focus-footing.ts). 10^-16 of a currency unit or an
 * hour is far below anything a reader uses, and below any sum of rounding over millions of rows.
 */
export const DIVIDED_SCALE = 16;

/**
 * Hours or cost from their sum in seconds (`secondsSum`, an SQL expression, never negative): the
 * one division by 3600 of a figure, rounded half up to DIVIDED_SCALE decimals from the exact
 * quotient (div() truncates exactly; numeric division would round to a scale of its own choosing
 * first), trailing zeros dropped. Every figure is summed in seconds first (price_per_hour x
 * seconds is exact), so the same figure has the same digits in every report that shows it.
 */
export function dividedOnce(secondsSum: string): string {
  // Multiplying by 10^-scale is exact; dividing by 10^scale would round again.
  return `trim_scale(div((${secondsSum}) * 1${'0'.repeat(DIVIDED_SCALE)} + 1800, 3600) * 0.${'0'.repeat(DIVIDED_SCALE - 1)}1)`;
}

/** The columns every part of costOverDaysSql's union gives: amounts in seconds, undivided. */
const SECONDS_COLUMNS = `day, group_value, currency, price_seconds, resource_seconds, unpriced_resource_seconds, gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds`;

/**
 * The GPU columns of costOverDays from the seconds columns gpu_seconds, gpu_price_seconds and
 * gpu_unknown_resource_seconds: NULL when a day of the bucket has none (GPUs not counted then).
 */
export const GPU_TOTALS = `case when bool_and(gpu_seconds is not null) then ${dividedOnce('sum(gpu_seconds)')}::text end as gpu_hours,
      case when bool_and(gpu_seconds is not null) then ${dividedOnce('sum(gpu_price_seconds)')}::text end as gpu_cost,
      case when bool_and(gpu_seconds is not null) then ${dividedOnce('sum(gpu_unknown_resource_seconds)')}::text end as gpu_unknown_resource_hours`;

/** The GPU columns' seconds, undivided (DailyCostQuery.withSeconds). */
const GPU_SECONDS = `, case when bool_and(gpu_seconds is not null) then trim_scale(sum(gpu_seconds))::text end as gpu_seconds,
      case when bool_and(gpu_seconds is not null) then trim_scale(sum(gpu_price_seconds))::text end as gpu_price_seconds,
      case when bool_and(gpu_seconds is not null) then trim_scale(sum(gpu_unknown_resource_seconds))::text end as gpu_unknown_resource_seconds`;

/**
 * The SELECT of costOverDays (columns as BucketCostRow), a statement of its own or a subquery of
 * a larger one (its CTEs are its own).
 */
export function costOverDaysSql(query: DailyCostQuery, bucket: CostBucket): SQL {
  checkDayRange('costOverDays', query.fromDay, query.toDay);
  const w = pieceWindow(query.fromDay, query.toDay, query);
  const kind = query.kind ?? null;
  const projectId = query.projectId ?? null;
  const regionId = query.regionId ?? null;
  const rows = dimensionRows(query.dimension);
  const fallback = fallbackPairs(rows);
  const untagged = sql`${UNTAGGED}::text`;
  const noScopeFilter = sql`${projectId}::int is null and ${regionId}::int is null`;
  const filter = (t: string) =>
    sql`(${kind}::text is null or ${sql.raw(t)}.kind = ${kind}::text) and (${projectId}::int is null or ${sql.raw(t)}.project_id = ${projectId}::int)
      and (${regionId}::int is null or ${sql.raw(t)}.region_id = ${regionId}::int)`;
  // Days read from cost_daily: sealed ones, and those closed under the same gap caps; of
  // these, the summed ones are read from cost_daily_totals (one row per group, not per scope)
  // when no project or region filter asks for the scopes, and while their totals' stamp still
  // matches the sealing or closing that wrote the day's cost_daily rows.
  return sql`with stored_days as (
      select day from cost_daily_sealed_days
      union select day from cost_daily_closed_days where caps = ${capsKey(w)}
    ),
    summed_days as (
      select t.day from cost_daily_totals_days t
      where ${noScopeFilter} and t.day between ${w.fromDay}::date and ${w.toDay}::date
        and t.source_at = coalesce(
          (select s.sealed_at from cost_daily_sealed_days s where s.day = t.day),
          (select c.closed_at from cost_daily_closed_days c where c.day = t.day and c.caps = ${capsKey(w)}))
    ),
    unsummed_days as (
      select day from stored_days where day between ${w.fromDay}::date and ${w.toDay}::date
      except select day from summed_days
    ),
    ${piecesCte(sql.raw('stored_days'), w)},
    -- Each piece joined to its snapshot's rollup rows in one go (an index lookup per piece): joining
    -- pieces to the rollups of their snapshots afterwards made the planner compare every pair.
    effective as (${effectiveRollupsSql(sql.raw('pieces'), query.dimension, ['day', 'secs'], windowTimeRange(sql.raw('r.taken_at'), w))}),
    live as (
      select e.day, e.group_value, e.currency, sum(e.price_per_hour * e.secs) as price_seconds,
        sum(e.resource_count * e.secs) as resource_seconds, sum(e.unpriced_count * e.secs) as unpriced_resource_seconds,
        ${sql.raw(gpuSums('e'))}
      from effective e
      where ${filter('e')}
      group by e.day, e.group_value, e.currency
    ),
    -- Stored days without usable totals, usually none or a few (all of them under a project or
    -- region filter): a semi-join on the day (Citus plans it; it cannot plan a lateral join of a
    -- distributed table to a common table expression).
    stored as (
      select d.day, d.group_value, d.currency, case when d.currency is not null then d.price_seconds end as price_seconds, d.resource_seconds, d.unpriced_resource_seconds,
        d.gpu_seconds, case when d.currency is not null then d.gpu_price_seconds end as gpu_price_seconds, d.gpu_unknown_resource_seconds
      from cost_daily d
      where ${dimensionMatch(rows, sql.raw('d.dimension'))} and d.day in (select day from unsummed_days) and ${filter('d')}
      union all
      select d.day, ${untagged}, d.currency, case when d.currency is not null then d.price_seconds end, d.resource_seconds, d.unpriced_resource_seconds,
        d.gpu_seconds, case when d.currency is not null then d.gpu_price_seconds end, d.gpu_unknown_resource_seconds
      from cost_daily d ${fallback.join}
      where ${fallback.kindMatch(sql.raw('d.dimension'))} and ${rows.isTag}::boolean and d.day in (select day from unsummed_days) and ${filter('d')}
        and not exists (select 1 from cost_daily x where x.day = d.day and x.dimension = ${fallback.dim} and x.kind = d.kind and x.scope_key = d.scope_key)
    ),
    -- The days of the range whose totals are not read. NOT IN keeps it a hashed filter on one
    -- range scan of the totals, whatever the planner guesses about how many days match (a join
    -- to the summed days, guessed at one row, made it rescan them for every row).
    not_summed as (
      select d::date as day from generate_series(${w.fromDay}::date, ${w.toDay}::date, interval '1 day') d
      except select day from summed_days
    ),
    -- The same rows summed over scopes (the (untagged) rule applied when they were written for
    -- every tag dimension present on the day; a dimension absent that day is all (untagged)).
    summed as (
      select t.day, t.group_value, t.currency, case when t.currency is not null then t.price_seconds end as price_seconds, t.resource_seconds, t.unpriced_resource_seconds,
        t.gpu_seconds, case when t.currency is not null then t.gpu_price_seconds end as gpu_price_seconds, t.gpu_unknown_resource_seconds
      from cost_daily_totals t
      where ${dimensionMatch(rows, sql.raw('t.dimension'))} and t.day between ${w.fromDay}::date and ${w.toDay}::date and t.day not in (select day from not_summed)
        and ${noScopeFilter} and (${kind}::text is null or t.kind = ${kind}::text)
      union all
      select t.day, ${untagged}, t.currency, case when t.currency is not null then t.price_seconds end, t.resource_seconds, t.unpriced_resource_seconds,
        t.gpu_seconds, case when t.currency is not null then t.gpu_price_seconds end, t.gpu_unknown_resource_seconds
      from cost_daily_totals t ${fallback.join}
      where ${fallback.kindMatch(sql.raw('t.dimension'))} and ${rows.isTag}::boolean and t.day between ${w.fromDay}::date and ${w.toDay}::date and t.day not in (select day from not_summed)
        and ${noScopeFilter} and (${kind}::text is null or t.kind = ${kind}::text)
        and not exists (select 1 from cost_daily_totals x where x.dimension = ${fallback.dim} and x.day = t.day)
    )
    select ${sql.raw(BUCKET_SQL[bucket])} as bucket, group_value, currency,
      ${sql.raw(dividedOnce('sum(price_seconds)'))}::text as cost, ${sql.raw(dividedOnce('sum(resource_seconds)'))}::text as resource_hours,
      ${sql.raw(dividedOnce('sum(unpriced_resource_seconds)'))}::text as unpriced_resource_hours,
      ${sql.raw(GPU_TOTALS)},
      trim_scale(sum(price_seconds))::text as price_seconds${sql.raw(query.withSeconds ? GPU_SECONDS : '')}
    from (
      select ${sql.raw(SECONDS_COLUMNS)} from live
      union all
      select ${sql.raw(SECONDS_COLUMNS)} from stored
      union all
      select ${sql.raw(SECONDS_COLUMNS)} from summed
    ) u
    group by 1, group_value, currency
    order by 1, group_value, currency nulls last`;
}


/** Daily cost rows for [fromDay, toDay] with the configured caps and the report's now. */
export function dailyCostsFor(
  q: Queryable,
  config: GapCapSettings,
  now: Date,
  dimension: string,
  fromDay: string,
  toDay: string,
  filter: CostFilter = {},
  options: { withSeconds?: boolean } = {},
): Promise<DailyCostRow[]> {
  return dailyCosts(q, { fromDay, toDay, now, maxGapHours: gapCapsFor(config), kind: filter.kind, projectId: filter.projectId, regionId: filter.regionId, dimension: dimensionWithin(filter.scope, dimension), withSeconds: options.withSeconds });
}

/** The query of bucketCostsFor: cost per group and currency over `range` with the configured caps. */
export function bucketCostQuery(config: GapCapSettings, now: Date, dimension: string, range: { fromDay: string; toDay: string }, filter: CostFilter = {}): DailyCostQuery {
  return { fromDay: range.fromDay, toDay: range.toDay, dimension: dimensionWithin(filter.scope, dimension), now, maxGapHours: gapCapsFor(config), kind: filter.kind, projectId: filter.projectId, regionId: filter.regionId };
}

/** Cost per group and currency over [fromDay, toDay], summed per month or over the whole range in SQL. */
export function bucketCostsFor(
  q: Queryable,
  config: GapCapSettings,
  now: Date,
  dimension: string,
  range: { fromDay: string; toDay: string },
  bucket: CostBucket,
  filter: CostFilter = {},
): Promise<BucketCostRow[]> {
  return costOverDays(q, bucketCostQuery(config, now, dimension, range, filter), bucket);
}

/**
 * Current cost by group: the run-rate of the latest complete priced snapshot of each scope, read
 * from its rollups (never from raw resource rows).
 */
import type { Queryable } from '../db/connection.js';
import { latestSnapshotsSql } from '../db/latest-snapshots.js';
import { sqlLiteral } from '../db/sql-literal.js';
import { queryRows, sql, type SQL } from '../db/statement.js';
import { effectiveRollupsSql } from './cost-over-time.js';
import { dimensionWithin } from './partitions.js';
import type { TagScope } from '../db/access-scope-sql.js';
import { FIXED_DIMENSIONS, PRICED_KINDS, type PricedKind } from './pricing.js';

export interface CostFilter {
  kind?: PricedKind;
  projectId?: number;
  regionId?: number;
  /** A team scope: only its resources (their cost partitions, costing/partitions.ts); absent or null: everything. */
  scope?: TagScope | null;
}

export interface GroupCost {
  group_value: string;
  currency: string | null;
  /** NULL when the currency is (no known price). */
  price_per_hour: string | null;
  price_per_month: string | null;
  resource_count: number;
  unpriced_count: number;
}

export interface CurrencyTotal {
  currency: string | null;
  price_per_hour: string | null;
  price_per_month: string | null;
  resource_count: number;
  unpriced_count: number;
}

/** The latest complete snapshot of each scope and priced kind (the kinds are code, inlined). */
const LATEST_PRICED = sql.raw(latestSnapshotsSql(sqlLiteral(PRICED_KINDS)));

/**
 * The rollup rows of the latest snapshots only, by their ids: the join alone let the planner
 * (which cannot tell how few snapshots `latest` holds) hash every rollup of the dimension over
 * the whole history to keep a few dozen snapshots' rows.
 */
const LATEST_ROLLUPS = sql.raw('r.snapshot_id = any(array(select id from latest))');

/**
 * CTEs `latest` and `eff`: the effective rollup rows of `dimension` for the latest priced
 * snapshots, filtered by `filter`. Rows without a currency (no known price) carry NULL amounts
 * (see effectiveRollupsSql).
 */
export function latestEffectiveCte(dimension: string, filter: CostFilter): SQL {
  const kind = filter.kind ?? null;
  const projectId = filter.projectId ?? null;
  const regionId = filter.regionId ?? null;
  return sql`latest as (${LATEST_PRICED}),
    eff as (
      select * from (${effectiveRollupsSql(sql.raw('latest'), dimensionWithin(filter.scope, dimension), [], LATEST_ROLLUPS)}) e
      where (${kind}::text is null or e.kind = ${kind}::text) and (${projectId}::int is null or e.project_id = ${projectId}::int)
        and (${regionId}::int is null or e.region_id = ${regionId}::int)
    )`;
}

/** Run-rate per group and currency of `dimension`. */
export function latestGroupCostsSql(dimension: string, filter: CostFilter = {}): SQL {
  return sql`with ${latestEffectiveCte(dimension, filter)}
     select group_value, currency, sum(price_per_hour) as price_per_hour, sum(price_per_month) as price_per_month,
       sum(resource_count)::int as resource_count, sum(unpriced_count)::int as unpriced_count
     from eff group by group_value, currency`;
}

export function latestGroupCosts(q: Queryable, dimension: string, filter: CostFilter = {}): Promise<GroupCost[]> {
  return queryRows<GroupCost & Record<string, unknown>>(
    q,
    sql`${latestGroupCostsSql(dimension, filter)} order by currency nulls last, sum(price_per_hour) desc, group_value`,
  );
}

/** Run-rate per currency (the `kind` dimension holds each snapshot's totals); NULL = unpriced. */
export function latestTotals(q: Queryable, filter: CostFilter = {}): Promise<CurrencyTotal[]> {
  return queryRows<CurrencyTotal & Record<string, unknown>>(
    q,
    sql`with ${latestEffectiveCte('kind', filter)}
     select currency, sum(price_per_hour) as price_per_hour, sum(price_per_month) as price_per_month,
       sum(resource_count)::int as resource_count, sum(unpriced_count)::int as unpriced_count
     from eff group by currency order by currency nulls last`,
  );
}

/** The dimensions present in the latest rollups: fixed ones first, then tag keys sorted. */
export async function latestDimensions(q: Queryable): Promise<string[]> {
  const rows = await queryRows<{ dimension: string }>(
    q,
    sql`with latest as (${LATEST_PRICED})
     select distinct r.dimension from cost_rollups r join latest l on l.id = r.snapshot_id where r.dimension like 'tag:%' order by 1`,
  );
  return [...FIXED_DIMENSIONS, ...rows.map((r) => r.dimension)];
}

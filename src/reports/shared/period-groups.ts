/**
 * Groups over a period, for the cost report and the overview: per group and currency the spend in
 * the period, the spend in the period before it, the change in percent, and the current run-rate
 * with its share (from the latest rollups). Spend comes from the daily aggregates (sealed days
 * from cost_daily, the rest integrated from rollups), summed per group in SQL.
 */
import type { Row } from '../report.js';
import { latestGroupCosts, type CostFilter, type GroupCost } from './costs.js';
import type { DayRange } from './period.js';
import { bucketCostsFor } from './time.js';
import { gpuAggregatesSql } from './gpu.js';
import type { ReportCtx } from './types.js';

export interface PeriodGroupsInput {
  dimension: string;
  filter: CostFilter;
  /** The days of the period with figures (fromDay .. lastDay). */
  range: DayRange;
  previous: DayRange;
  /** False when nothing was collected in the previous period: its spend is unknown (null), not 0. A promise lets the period's own costs be read meanwhile. */
  previousKnown: boolean | Promise<boolean>;
}

export interface PeriodGroups {
  /** One page of rows in `order` (SQL over the columns of periodGroupsCte). */
  page(order: string, limit: number, offset: number): Promise<{ rows: Array<Record<string, unknown>>; total: number }>;
  /** Per currency over every group: money summed in SQL, `group` = "Total". */
  totals(): Promise<Row[]>;
  /** The current run-rate per group and currency (latestGroupCosts), read once for page, totals and charts. */
  latest: GroupCost[];
}

/**
 * The CTEs over values read once (no table is read again per page or for the totals): $1..$6 =
 * the latest run-rate per group, $7..$13 = current, previous and known flag, $14..$16 = the current
 * GPU-hours, their cost and the hours with GPUs unknown; the caller appends
 * limit/offset.
 */
const JOINED = `now_groups as (
    select g as group_value, c as currency, h as price_per_hour, mo as price_per_month, n as resources, u as unpriced
    from unnest($1::text[], $2::text[], $3::numeric[], $4::numeric[], $5::int[], $6::int[]) as x(g, c, h, mo, n, u)
  ),
  cur as (
    select g as group_value, c as currency, sum(v) as cost,
      case when bool_and(gh is not null) then sum(gh) end as gpu_hours, case when bool_and(gh is not null) then sum(gc) end as gpu_cost,
      case when bool_and(gh is not null) then sum(gu) end as gpu_unknown_hours
    from unnest($7::text[], $8::text[], $9::numeric[], $14::numeric[], $15::numeric[], $16::numeric[]) as m(g, c, v, gh, gc, gu) group by g, c
  ),
  prev as (select g as group_value, c as currency, sum(v) as cost from unnest($10::text[], $11::text[], $12::numeric[]) as m(g, c, v) group by g, c),
  keys as (select group_value, currency from now_groups union select group_value, currency from cur union select group_value, currency from prev),
  joined as (
    select k.group_value, k.currency,
      case when k.currency is not null then coalesce(c.cost, 0) end as cost,
      case when k.currency is not null and $13::boolean then coalesce(p.cost, 0) end as previous_cost,
      case when k.currency is not null then coalesce(n.price_per_hour, 0) end as price_per_hour,
      case when k.currency is not null then coalesce(n.price_per_month, 0) end as price_per_month,
      coalesce(n.resources, 0) as resources, coalesce(n.unpriced, 0) as unpriced,
      -- A group without spend in the period ran no GPU either: 0 GPU-hours, not unknown.
      case when c.group_value is null then 0 else c.gpu_hours end as gpu_hours,
      case when k.currency is not null then (case when c.group_value is null then 0 else c.gpu_cost end) end as gpu_cost,
      case when c.group_value is null then 0 else c.gpu_unknown_hours end as gpu_unknown_hours
    from keys k
    left join now_groups n on n.group_value = k.group_value and n.currency is not distinct from k.currency
    left join cur c on c.group_value = k.group_value and c.currency is not distinct from k.currency
    left join prev p on p.group_value = k.group_value and p.currency is not distinct from k.currency
  )`;

/** Change in percent with 2 decimals; NULL when the previous spend is 0 or unknown. */
const CHANGE = (cost: string, previous: string) => `round((${cost} - ${previous}) * 100 / nullif(${previous}, 0), 2)`;

export async function periodGroups(ctx: ReportCtx, input: PeriodGroupsInput): Promise<PeriodGroups> {
  const known = Promise.resolve(input.previousKnown);
  const [latest, current, previous, previousKnown] = await Promise.all([
    latestGroupCosts(ctx.db, input.dimension, input.filter),
    bucketCostsFor(ctx.db, ctx.config, ctx.now, input.dimension, input.range, 'all', input.filter),
    known.then((k) => (k ? bucketCostsFor(ctx.db, ctx.config, ctx.now, input.dimension, input.previous, 'all', input.filter) : [])),
    known,
  ]);
  const values = [
    latest.map((r) => r.group_value),
    latest.map((r) => r.currency),
    latest.map((r) => r.price_per_hour),
    latest.map((r) => r.price_per_month),
    latest.map((r) => r.resource_count),
    latest.map((r) => r.unpriced_count),
    current.map((r) => r.group_value),
    current.map((r) => r.currency),
    current.map((r) => r.cost),
    previous.map((r) => r.group_value),
    previous.map((r) => r.currency),
    previous.map((r) => r.cost),
    previousKnown,
    current.map((r) => r.gpu_hours),
    current.map((r) => r.gpu_cost),
    current.map((r) => r.gpu_unknown_resource_hours),
  ];
  return {
    latest,
    async page(order, limit, offset) {
      const rows = await ctx.db.query<Record<string, unknown>>(
        `with ${JOINED}
         select *, ${CHANGE('cost', 'previous_cost')}::float8 as change_percent,
           case when currency is not null then round(100 * price_per_hour / nullif(sum(price_per_hour) over (partition by currency), 0), 2) end as share,
           trim_scale(round(gpu_cost / nullif(gpu_hours, 0), 6))::text as cost_per_gpu_hour,
           count(*) over ()::int as total_rows
         from joined
         order by ${order}
         limit $17 offset $18`,
        [...values, limit, offset],
      );
      return { rows, total: Number(rows[0]?.total_rows ?? 0) };
    },
    async totals() {
      const rows = await ctx.db.query<Record<string, unknown>>(
        `with ${JOINED}
         select currency, trim_scale(sum(cost)) as cost, trim_scale(sum(previous_cost)) as previous_cost, ${CHANGE('sum(cost)', 'sum(previous_cost)')}::float8 as change_percent,
           trim_scale(sum(price_per_hour)) as price_per_hour, trim_scale(sum(price_per_month)) as price_per_month,
           sum(resources)::int as resources, sum(unpriced)::int as unpriced, ${gpuAggregatesSql()}
         from joined where currency is not null
         group by currency order by currency`,
        values,
      );
      return rows.map((r) => ({ group: 'Total', ...r, share: r.currency === null ? null : '100.00' }));
    },
  };
}

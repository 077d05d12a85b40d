/**
 * Groups over a period, for the cost report and the overview: per group and currency the spend in
 * the period, the spend in the period before it, the change in percent, and the current run-rate
 * with its share (from the latest rollups). Spend comes from the daily aggregates (sealed days
 * from cost_daily, the rest integrated from rollups); all of it is joined and summed in one
 * statement.
 */
import type { Queryable } from '../db/connection.js';
import { arrayParam, queryRows, sql, type SQL } from '../db/statement.js';
import { bucketCostQuery, costOverDaysSql, dividedOnce, GPU_TOTALS, type DailyCostRow } from './cost-over-time.js';
import { latestGroupCosts, latestGroupCostsSql, type CostFilter, type GroupCost } from './current-costs.js';
import type { GapCapSettings } from './gap-caps.js';

export interface PeriodGroupsInput {
  dimension: string;
  filter: CostFilter;
  /** The days of the period with figures (fromDay .. toDay). */
  range: { fromDay: string; toDay: string };
  previous: { fromDay: string; toDay: string };
  /** False when no hour of the previous period is covered: its spend is unknown (null), not 0. A promise lets the run-rate be read meanwhile. */
  previousKnown: boolean | Promise<boolean>;
  /** False when no hour of the period is covered: its spend is unknown (null), not 0 (default true). */
  currentKnown?: boolean | Promise<boolean>;
  /** False when the previous period is covered worse than this one: no change % (default: previousKnown). */
  comparable?: boolean | Promise<boolean>;
  /**
   * Starts reading every row in this order (everyRow) at once, as if both periods were known and
   * comparable, the usual case, instead of after the promises above: everyRow(order) answers
   * from it when both periods are known (the change in percent then cleared where they are not
   * comparable, unless the order uses it), and it is dropped when not.
   */
  everyRowAhead?: string;
  /**
   * The grouping's cost per day over at least the period's days, read with their GPU seconds
   * (DailyCostQuery.withSeconds) by a caller that needs them anyway (the overview's chart): the
   * spend in the period is then summed from them, exactly as integrating it again would give
   * (seconds summed, divided once), instead of integrating the live days a second time.
   */
  currentDays?: Promise<readonly DailyCostRow[]>;
}

interface Known {
  current: boolean;
  previous: boolean;
  comparable: boolean;
}

export interface PeriodGroups {
  /** One page of rows in `order` (SQL over the columns of `joined`, written by code). */
  page(order: string, limit: number, offset: number): Promise<{ rows: Array<Record<string, unknown>>; total: number }>;
  /** Per currency over every group: money summed in SQL, `group` = "Total". */
  totals(): Promise<Array<Record<string, unknown>>>;
  /**
   * Every row in `order` and the totals, from one statement (the groups are computed once instead
   * of once for the rows and again for the totals); page(order, all, 0) and totals() then answer
   * from it.
   */
  everyRow(order: string): Promise<EveryRow>;
  /** The current run-rate per group and currency, read once for page, totals and charts. */
  latest: GroupCost[];
}

export interface EveryRow {
  rows: Array<Record<string, unknown>>;
  total: number;
  totals: Array<Record<string, unknown>>;
}

/** The columns of a totals row (totalsSql), in order. */
const TOTAL_COLUMNS = ['currency', 'cost', 'previous_cost', 'change_percent', 'price_per_hour', 'price_per_month', 'resources', 'unpriced', 'gpu_hours', 'cost_per_gpu_hour', 'gpu_unknown_hours'] as const;

/**
 * Every group row (rowsSql, in `order`) and the totals rows (totalsSql, by currency) of one
 * `joined` in one statement: the two sets side by side in a full join on false, the totals'
 * columns renamed ("total:<name>") so that `order`, written over the rows' columns, stays unambiguous.
 */
async function readEveryRow(db: Queryable, joined: SQL, rowsSql: SQL, totalsSql: SQL, order: string): Promise<EveryRow> {
  const renamed = TOTAL_COLUMNS.map((c) => `"total:${c}"`).join(', ');
  const both = await queryRows<Record<string, unknown>>(
    db,
    sql`with ${joined}, listed as (${rowsSql}), summed(${sql.raw(renamed)}) as (${totalsSql})
      select listed.*, summed.* from listed full join summed on false
      order by ${sql.raw(order)}, "total:currency"`,
  );
  const rows: Array<Record<string, unknown>> = [];
  const totals: Array<Record<string, unknown>> = [];
  for (const row of both) {
    // A group row has its count of rows (total_rows); a totals row has none of the rows' columns.
    if (row.total_rows !== null && row.total_rows !== undefined) {
      const listedRow: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(row)) if (!key.startsWith('total:')) listedRow[key] = value;
      rows.push(listedRow);
    } else {
      totals.push(Object.fromEntries(TOTAL_COLUMNS.map((c) => [c, row[`total:${c}`]])));
    }
  }
  return { rows, total: Number(rows[0]?.total_rows ?? 0), totals };
}

/**
 * SQL over `joined` aggregating the GPU columns (gpu_hours, gpu_cost, gpu_unknown_hours, NULL
 * where GPUs were not counted yet) with `sum`: NULL when any row is NULL. The cost per GPU-hour
 * is rounded to 6 decimals (a quotient has no exact decimal form).
 */
export function gpuAggregatesSql(t = ''): string {
  const c = (col: string) => (t ? `${t}.${col}` : col);
  const known = `bool_and(${c('gpu_hours')} is not null)`;
  return `case when ${known} then trim_scale(sum(${c('gpu_hours')}))::text end as gpu_hours,
    case when ${known} then trim_scale(round(sum(${c('gpu_cost')}) / nullif(sum(${c('gpu_hours')}), 0), 6))::text end as cost_per_gpu_hour,
    case when ${known} then trim_scale(sum(${c('gpu_unknown_hours')}))::text end as gpu_unknown_hours`;
}

/** Change in percent with 2 decimals; NULL when the previous spend is 0 or unknown, or the periods are not comparable. */
const change = (known: Known, cost: string, previous: string) => (known.comparable ? changePercentSql(cost, previous) : 'null::numeric');

/** Change in percent of `cost` against `previous` (SQL expressions), 2 decimals; NULL when the previous is 0 or NULL. */
export const changePercentSql = (cost: string, previous: string) => `round((${cost} - ${previous}) * 100 / nullif(${previous}, 0), 2)`;

/** The CTEs up to `joined`: one row per group and currency with run-rate, spend, previous spend and GPU figures. */
function joinedCte(settings: GapCapSettings, now: Date, input: PeriodGroupsInput, known: Known, currentDays: readonly DailyCostRow[] | null): SQL {
  const previousKnown = known.previous;
  const query = (range: { fromDay: string; toDay: string }) => bucketCostQuery(settings, now, input.dimension, range, input.filter);
  const previous = previousKnown
    ? sql`select group_value, currency, cost, price_seconds from (${costOverDaysSql(query(input.previous), 'all')}) p`
    : sql`select null::text as group_value, null::text as currency, null::numeric as cost, null::numeric as price_seconds where false`;
  return sql`now_groups as (${latestGroupCostsSql(input.dimension, input.filter)}),
  cur as (${currentDays ? summedDaysSql(currentDays, input.range) : sql`select * from (${costOverDaysSql(query(input.range), 'all')}) c`}),
  prev as (${previous}),
  keys as (select group_value, currency from now_groups union select group_value, currency from cur union select group_value, currency from prev),
  joined as (
    select k.group_value, k.currency,
      case when k.currency is not null and ${known.current}::boolean then coalesce(c.cost::numeric, 0) end as cost,
      case when k.currency is not null and ${previousKnown}::boolean then coalesce(p.cost::numeric, 0) end as previous_cost,
      -- The costs x 3600, exact: the totals add these up and divide once.
      case when k.currency is not null and ${known.current}::boolean then coalesce(c.price_seconds::numeric, 0) end as cost_seconds,
      case when k.currency is not null and ${previousKnown}::boolean then coalesce(p.price_seconds::numeric, 0) end as previous_seconds,
      case when k.currency is not null then coalesce(n.price_per_hour, 0) end as price_per_hour,
      case when k.currency is not null then coalesce(n.price_per_month, 0) end as price_per_month,
      coalesce(n.resource_count, 0) as resources, coalesce(n.unpriced_count, 0) as unpriced,
      -- Whether the group runs now or had spend in the period (false: only in the previous period).
      (n.group_value is not null or c.group_value is not null) as current_group,
      -- A group without spend in the period ran no GPU either: 0 GPU-hours, not unknown.
      -- In a period without any covered hour, GPU figures are unknown like the spend.
      case when not ${known.current}::boolean then null when c.group_value is null then 0 else c.gpu_hours::numeric end as gpu_hours,
      case when k.currency is not null then (case when c.group_value is null then 0 else c.gpu_cost::numeric end) end as gpu_cost,
      case when not ${known.current}::boolean then null when c.group_value is null then 0 else c.gpu_unknown_resource_hours::numeric end as gpu_unknown_hours
    from keys k
    left join now_groups n on n.group_value = k.group_value and n.currency is not distinct from k.currency
    left join cur c on c.group_value = k.group_value and c.currency is not distinct from k.currency
    left join prev p on p.group_value = k.group_value and p.currency is not distinct from k.currency
  )`;
}

/**
 * costOverDaysSql's figures over `range` (bucket 'all': group_value, currency, cost,
 * price_seconds and the GPU figures) summed from a grouping's cost per day with their seconds:
 * every amount summed in seconds and divided once, so the digits are the ones costOverDaysSql gives.
 */
function summedDaysSql(days: readonly DailyCostRow[], range: { fromDay: string; toDay: string }): SQL {
  const rows = days.filter((d) => d.day >= range.fromDay && d.day <= range.toDay);
  if (rows.some((d) => d.gpu_seconds === undefined)) throw new Error('periodGroups: currentDays must be read withSeconds');
  return sql`select group_value, currency, ${sql.raw(dividedOnce('sum(price_seconds)'))}::text as cost, trim_scale(sum(price_seconds))::text as price_seconds, ${sql.raw(GPU_TOTALS)}
    from unnest(${arrayParam(rows.map((d) => d.group_value))}::text[], ${arrayParam(rows.map((d) => d.currency))}::text[], ${arrayParam(rows.map((d) => d.price_seconds))}::numeric[],
      ${arrayParam(rows.map((d) => d.gpu_seconds))}::numeric[], ${arrayParam(rows.map((d) => d.gpu_price_seconds))}::numeric[], ${arrayParam(rows.map((d) => d.gpu_unknown_resource_seconds))}::numeric[])
      as d(group_value, currency, price_seconds, gpu_seconds, gpu_price_seconds, gpu_unknown_resource_seconds)
    group by group_value, currency`;
}

/**
 * Every row read as if both periods were known and comparable (everyRowAhead), as the statement
 * of what is known (the current period is) reads it: without the change in percent where the
 * periods are not comparable; with the previous period unknown, without its spend and without
 * the groups only it had (current_group false: the previous period is then not read at all).
 */
function asKnown(read: EveryRow, known: Known): EveryRow {
  if (known.previous && known.comparable) return read;
  const unknown = known.previous ? { change_percent: null } : { change_percent: null, previous_cost: null };
  const rows = read.rows
    .filter((r) => known.previous || r.current_group !== false)
    .map((r) => ({ ...r, ...unknown, ...(known.previous ? {} : { previous_seconds: null }) }));
  return { rows: rows.map((r) => ({ ...r, total_rows: rows.length })), total: rows.length, totals: read.totals.map((t) => ({ ...t, ...unknown })) };
}

/** Known when every period is: the SQL of the usual case, read ahead (everyRowAhead). */
const ALL_KNOWN: Known = { current: true, previous: true, comparable: true };

/** The statements of `joined` for what is known: the rows, and the totals per currency. */
function statementsFor(settings: GapCapSettings, now: Date, input: PeriodGroupsInput, known: Known, currentDays: readonly DailyCostRow[] | null): { joined: SQL; rowsSql: SQL; totalsSql: SQL } {
  const joined = joinedCte(settings, now, input, known, currentDays);
  const rowsSql = sql.raw(`select *, ${change(known, 'cost', 'previous_cost')}::float8 as change_percent,
      case when currency is not null then round(100 * price_per_hour / nullif(sum(price_per_hour) over (partition by currency), 0), 2) end as share,
      trim_scale(round(gpu_cost / nullif(gpu_hours, 0), 6))::text as cost_per_gpu_hour,
      count(*) over ()::int as total_rows
    from joined`);
  const totalsSql = sql.raw(`select currency, ${dividedOnce('sum(cost_seconds)')} as cost, ${dividedOnce('sum(previous_seconds)')} as previous_cost,
      ${change(known, 'sum(cost_seconds)', 'sum(previous_seconds)')}::float8 as change_percent,
      trim_scale(sum(price_per_hour)) as price_per_hour, trim_scale(sum(price_per_month)) as price_per_month,
      sum(resources)::int as resources, sum(unpriced)::int as unpriced, ${gpuAggregatesSql()}
    from joined where currency is not null
    group by currency`);
  return { joined, rowsSql, totalsSql };
}

export async function periodGroups(ctx: { db: Queryable; config: GapCapSettings; now: Date }, input: PeriodGroupsInput): Promise<PeriodGroups> {
  let ahead: { order: string; read: Promise<EveryRow> } | null = null;
  if (input.everyRowAhead !== undefined) {
    const order = input.everyRowAhead;
    const read = Promise.resolve(input.currentDays ?? null).then((days) => {
      const usual = statementsFor(ctx.config, ctx.now, input, ALL_KNOWN, days);
      return readEveryRow(ctx.db, usual.joined, usual.rowsSql, usual.totalsSql, order);
    });
    ahead = { order, read };
    // When it is dropped, its failure is nobody's answer: the statement read instead reports its own.
    ahead.read.catch(() => undefined);
  }
  const [latest, previous, current, comparable, currentDays] = await Promise.all([
    latestGroupCosts(ctx.db, input.dimension, input.filter),
    Promise.resolve(input.previousKnown),
    Promise.resolve(input.currentKnown ?? true),
    Promise.resolve(input.comparable ?? input.previousKnown),
    Promise.resolve(input.currentDays ?? null),
  ]);
  const known: Known = { current, previous, comparable: comparable && current && previous };
  // Built when first read: the overview answers every read from the statement read ahead.
  let built: ReturnType<typeof statementsFor> | null = null;
  const statements = () => (built ??= statementsFor(ctx.config, ctx.now, input, known, currentDays));
  const totalRows = (rows: Array<Record<string, unknown>>) => rows.map((r) => ({ group: 'Total', ...r, share: r.currency === null ? null : '100.00' }));
  const everyRowByOrder = new Map<string, Promise<EveryRow>>();
  if (ahead && known.current && (known.comparable || !ahead.order.includes('change_percent'))) {
    everyRowByOrder.set(ahead.order, ahead.read.then((r) => asKnown(r, known)).then((r) => ({ ...r, totals: totalRows(r.totals) })));
  }
  const everyRow = (order: string): Promise<EveryRow> => {
    let read = everyRowByOrder.get(order);
    if (!read) {
      const { joined, rowsSql, totalsSql } = statements();
      read = readEveryRow(ctx.db, joined, rowsSql, totalsSql, order).then((r) => ({ ...r, totals: totalRows(r.totals) }));
      everyRowByOrder.set(order, read);
    }
    return read;
  };
  return {
    latest,
    everyRow,
    async page(order, limit, offset) {
      if (offset === 0 && limit >= Number.MAX_SAFE_INTEGER) {
        const { rows, total } = await everyRow(order);
        return { rows, total };
      }
      const { joined, rowsSql } = statements();
      const rows = await queryRows<Record<string, unknown>>(ctx.db, sql`with ${joined} ${rowsSql} order by ${sql.raw(order)} limit ${limit} offset ${offset}`);
      return { rows, total: Number(rows[0]?.total_rows ?? 0) };
    },
    async totals() {
      // Already read with every row (everyRow): the same figures, from the same statement.
      const started = everyRowByOrder.values().next();
      if (!started.done) return (await started.value).totals;
      const { joined, totalsSql } = statements();
      return totalRows(await queryRows<Record<string, unknown>>(ctx.db, sql`with ${joined} ${totalsSql} order by currency`));
    },
  };
}

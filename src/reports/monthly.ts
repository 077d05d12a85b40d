/**
 * Spend per calendar month: groups (any grouping, as the cost report) as rows, months as columns,
 * one block of rows per currency, with a total per row and totals per currency. The table finance
 * pastes into a chargeback sheet. Figures come from the daily aggregates (sealed days from
 * cost_daily, the rest integrated from rollups), summed per month in SQL.
 */
import { z } from 'zod';
import type { BucketCostRow } from '../costing/cost-over-time.js';
import { PRICED_KINDS, type PricedKind } from '../costing/pricing.js';
import type { Column, Coverage, Row, SummaryItem } from './report.js';
import { listRows } from './shared/batches.js';
import { footRows } from '../present/footing.js';
import type { CostFilter } from '../costing/current-costs.js';
import { dimensionOf, GROUPING_HELP, unknownTagKeyNotes, groupingField, groupNameColumns, groupNames } from './shared/costs.js';
import { changeColumn, comparable, comparisonNote, coveredText, hasData, isPartial, monthsNote, periodCoverage, rangeCoverage } from './shared/coverage.js';
import { optionalSelect, pricedKindSelect, scopeFilterFields } from './shared/fields.js';
import { addDays, dimensionLabel, kindLabel } from './shared/format.js';
import { invalidParameter } from './shared/params.js';
import { addMonths, checkPeriodParams, lastDayOfMonth, monthsOf, periodField, resolvePeriod, type ResolvedPeriod } from './shared/period.js';
import { latestSnapshots } from '../db/latest-snapshots.js';
import { arrayParam, queryRows, sql, type SQL } from '../db/statement.js';
import { sqlLiteral as sqlText } from '../db/sql-literal.js';
import { freshnessNotes } from './shared/snapshots.js';
import { bucketCostsFor, dividedOnce } from '../costing/cost-over-time.js';
import { daysBetween, gapCapText } from './shared/time.js';
import { defineReport } from './shared/define.js';
import { scopedCostNotes, scopeOf } from './shared/access-scope.js';
import { groupedSpendParamShape } from './shared/spend-params.js';
import { allAllocationKeys, allocationByMonth, allocationKeys, allocationColumns, receiversWithoutRow, withAllocation } from './monthly-allocation.js';
import { changePercentSql, gpuAggregatesSql } from '../costing/period-groups.js';
import { gpuCells, gpuColumns, gpuNotes } from './shared/gpu.js';
import { sumByCurrency, totalRow } from './shared/totals.js';
import type { Report, ReportCtx } from './shared/types.js';

/** Months shown when no period is given: the last 6, this one included. */
export const DEFAULT_MONTHS = 6;

export const monthlyParams = z
  .strictObject({
    ...groupedSpendParamShape,
    /** `on`: the allocated view (docs/allocation.md): direct spend, allocated in and out, and total per group and month. */
    allocation: z.enum(['on', 'off'], { error: 'allocation must be on or off' }).optional(),
  })
  .superRefine(checkPeriodParams);
export type MonthlyParams = z.infer<typeof monthlyParams>;

interface Resolved {
  dimension: string;
  filter: CostFilter;
  /** The period widened to whole months. */
  period: ResolvedPeriod;
  months: string[];
  coverage: Coverage;
  /** Each month's coverage: a month without a covered hour has null cells (unknown), never 0. */
  monthCoverage: Record<string, Coverage>;
  cells: BucketCostRow[];
  /** The change column: the last month shown against the month before it (shown or not). */
  change: {
    month: string;
    /** What the last month is compared with: the month before ("2025-02"), or its first days when the last month is in progress ("2025-02-01 to 2025-02-10"). */
    previousMonth: string;
    /** The last month has not ended: it is compared so far, with as many days of the month before. */
    inProgress: boolean;
    previousCoverage: Coverage;
    /** The previous month's cells (bucket = previousMonth). */
    previousCells: BucketCostRow[];
  };
}

const known = (r: Resolved, month: string) => hasData(r.monthCoverage[month]!);
/** Whether some month is not covered in full: totals are then of the covered hours only. */
const incomplete = (r: Resolved) => r.months.some((m) => isPartial(r.monthCoverage[m]!));

async function resolve(ctx: ReportCtx, params: MonthlyParams): Promise<Resolved> {
  const dimension = dimensionOf(params.by, ctx.config);
  if (!dimension) throw invalidParameter('by', `by must be one of ${GROUPING_HELP}`);
  const asked = resolvePeriod(params, ctx.now, { lastMonths: DEFAULT_MONTHS });
  // Calendar months as columns: a period that starts or ends inside a month covers all of it.
  const fromMonth = asked.fromDay.slice(0, 7);
  const toMonth = asked.toDay.slice(0, 7);
  const period = resolvePeriod({ from: fromMonth, to: toMonth }, ctx.now);
  const filter: CostFilter = { kind: params.kind as PricedKind | undefined, projectId: params.project, regionId: params.region, scope: scopeOf(ctx) };
  const months = monthsOf(period);
  const [coverage, cells, ...perMonth] = await Promise.all([
    periodCoverage(ctx, period),
    bucketCostsFor(ctx.db, ctx.config, ctx.now, dimension, { fromDay: period.fromDay, toDay: period.lastDay }, 'month', filter),
    ...months.map((m) => rangeCoverage(ctx, { fromDay: `${m}-01`, toDay: lastDayOfMonth(m) })),
  ]);
  const monthCoverage = Object.fromEntries(months.map((m, i) => [m, perMonth[i]!]));
  const priced = cells.filter((c) => c.currency !== null);
  const month = months[months.length - 1]!;
  const previousMonth = addMonths(`${month}-01`, -1).slice(0, 7);
  // A month in progress is compared, as the cost report compares month to date, with as many days
  // from the start of the month before: not with the whole of it, which would read as a drop.
  const inProgress = period.end.getTime() < Date.parse(`${addMonths(`${month}-01`, 1)}T00:00:00Z`);
  const daysSoFar = daysBetween(`${month}-01`, period.lastDay).length;
  const previousRange = {
    fromDay: `${previousMonth}-01`,
    toDay: inProgress ? [addDays(`${previousMonth}-01`, daysSoFar - 1), lastDayOfMonth(previousMonth)].sort()[0]! : lastDayOfMonth(previousMonth),
  };
  const previousLabel = inProgress ? `${previousRange.fromDay} to ${previousRange.toDay}` : previousMonth;
  // The month before the last one shown: read from the table's cells, or on its own when the table starts with the last month (or only part of it is compared).
  const [previousCoverage, previousCells] = months.includes(previousMonth) && !inProgress
    ? [monthCoverage[previousMonth]!, priced.filter((c) => c.bucket === previousMonth)]
    : await Promise.all([
        rangeCoverage(ctx, previousRange),
        bucketCostsFor(ctx.db, ctx.config, ctx.now, dimension, previousRange, 'month', filter).then((rows) => rows.filter((c) => c.currency !== null)),
      ]);
  return {
    dimension,
    filter,
    period: { ...period, label: fromMonth === toMonth ? fromMonth : `${fromMonth} to ${toMonth}` },
    months,
    coverage,
    monthCoverage,
    cells: priced,
    change: { month, previousMonth: previousLabel, inProgress, previousCoverage, previousCells },
  };
}

/** Whether the change column has figures: the previous month is covered at least as well as the last one (item 1's rule). */
const changeGiven = (r: Resolved) => comparable(r.monthCoverage[r.change.month]!, r.change.previousCoverage);

/** What the change column compares, and why it is empty when it is (the months' coverage, item 1's rule). */
function changeNote(r: Resolved): string {
  const { month, previousMonth, previousCoverage } = r.change;
  const current = r.monthCoverage[month]!;
  const soFar = r.change.inProgress ? ' so far' : '';
  const base = `Change % compares ${month}${soFar} with ${previousMonth}, per row and per currency total.`;
  if (!hasData(current)) return `${base} ${month} has no data: no change % is given.`;
  return `${base} ${comparisonNote(current, previousCoverage)}`;
}

/** The change column, at the end (the columns before it keep their places). */
function changeColumnOf(r: Resolved): Column {
  const { month, previousMonth } = r.change;
  const { sortable: _, ...column } = changeColumn(r.monthCoverage[month]!, r.change.previousCoverage, { label: `Change % ${month} vs ${previousMonth}`, previous: previousMonth, current: month });
  return column;
}

function columns(r: Resolved): Column[] {
  return [
    { key: 'group', label: dimensionLabel(r.dimension), kind: 'text' },
    ...groupNameColumns(r.dimension),
    { key: 'currency', label: 'Currency', kind: 'text' },
    // The label says what a month's figures stand on, so that the CSV carries it too.
    ...r.months.map((m): Column => {
      const c = r.monthCoverage[m]!;
      if (!hasData(c)) return { key: m, label: `${m} (no data)`, kind: 'money', currencyKey: 'currency', emptyText: 'no data' };
      return { key: m, label: isPartial(c) ? `${m} (${coveredText(c)})` : m, kind: 'money', currencyKey: 'currency' };
    }),
    { key: 'total', label: incomplete(r) ? 'Total (covered hours only)' : 'Total', kind: 'money', currencyKey: 'currency', emptyText: 'no data' },
    ...gpuColumns(),
    changeColumnOf(r),
  ];
}

/**
 * CTE `cells`: the cells already read (r.cells, also shown in the allocated view and the charts),
 * paged and summed in SQL so that money is never added up in Node.
 */
function cellsCte(r: Resolved): SQL {
  const column = (values: unknown[], type: string) => sql`${arrayParam(values)}::${sql.raw(type)}[]`;
  const c = r.cells;
  return sql`cells as (
    select * from unnest(${column(c.map((x) => x.bucket), 'text')}, ${column(c.map((x) => x.group_value), 'text')}, ${column(c.map((x) => x.currency), 'text')},
      ${column(c.map((x) => x.cost), 'numeric')}, ${column(c.map((x) => x.gpu_hours), 'numeric')}, ${column(c.map((x) => x.gpu_cost), 'numeric')},
      ${column(c.map((x) => x.gpu_unknown_resource_hours), 'numeric')}, ${column(c.map((x) => x.price_seconds), 'numeric')})
      as c(month, group_value, currency, cost, gpu_hours, gpu_cost, gpu_unknown_hours, cost_seconds)),
    prev as (
      select * from unnest(${column(r.change.previousCells.map((x) => x.group_value), 'text')}, ${column(r.change.previousCells.map((x) => x.currency), 'text')},
        ${column(r.change.previousCells.map((x) => x.price_seconds), 'numeric')}) as p(prev_group, prev_currency, prev_seconds))`;
}

/**
 * The change % of the last month against the previous one, from the sums in seconds of the cells
 * `cells` (grouped) and `prev_seconds`: null when the months are not comparable, or the previous
 * month's spend is 0.
 */
function changeSql(r: Resolved): SQL {
  if (!changeGiven(r)) return sql`null::float8`;
  return sql`${sql.raw(changePercentSql(`coalesce(sum(cost_seconds) filter (where month = ${sqlText(r.change.month)}), 0)`, 'coalesce(min(prev_seconds), 0)'))}::float8`;
}


/**
 * A row with every month (0 where the group had no cost in a covered month, null in a month
 * without any covered hour: unknown) and the row's total.
 */
function rowOf(r: Resolved, group: string, currency: string, months: Record<string, string>, total: string, extra: Row = {}): Row {
  const row: Row = { group, ...extra, currency };
  for (const m of r.months) row[m] = known(r, m) ? (months[m] ?? '0') : null;
  row.total = total;
  return row;
}

async function fetchRows(ctx: ReportCtx, r: Resolved, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const [found, names] = await Promise.all([
    queryRows<{ group_value: string; currency: string; months: Record<string, string>; total: string; change_percent: number | null; total_rows: number }>(
      ctx.db,
      sql`with ${cellsCte(r)}
       select group_value, currency, jsonb_object_agg(month, trim_scale(cost)::text) as months, ${sql.raw(dividedOnce('sum(cost_seconds)'))}::text as total,
         ${sql.raw(gpuAggregatesSql())}, ${changeSql(r)} as change_percent, count(*) over ()::int as total_rows
       from cells left join prev on prev_group = group_value and prev_currency = currency group by group_value, currency
       order by currency, sum(cost) desc, group_value
       limit ${limit} offset ${offset}`,
    ),
    groupNames(ctx.db, r.dimension),
  ]);
  const rows = found.map((f) => ({ ...rowOf(r, f.group_value, f.currency, f.months, f.total, names ? { group_name: names(f.group_value) } : {}), ...gpuCells(f), change_percent: f.change_percent }));
  return { rows, total: Number(found[0]?.total_rows ?? 0) };
}

/**
 * Every row with its rounded amounts footed to the totals (present/footing.ts): the footing needs
 * every row of a currency, so a page is cut from all of them.
 */
async function footedRows(ctx: ReportCtx, r: Resolved, sums: Promise<Row[]>): Promise<{ rows: Row[]; total: number }> {
  const [{ rows, total }, totalRows] = await Promise.all([fetchRows(ctx, r, Number.MAX_SAFE_INTEGER, 0), sums]);
  return { rows: footRows(rows, columns(r), totalRows), total };
}

/** Per currency: each month and the whole period, summed in SQL over every group. */
async function totals(ctx: ReportCtx, r: Resolved): Promise<Row[]> {
  const found = await queryRows<{ currency: string; months: Record<string, string>; total: string; change_percent: number | null }>(
    ctx.db,
    sql`with ${cellsCte(r)},
       per_month as (select currency, month, sum(cost_seconds) as cost_seconds from cells group by currency, month),
       gpu as (select currency, ${sql.raw(gpuAggregatesSql())} from cells group by currency),
       prev_total as (select prev_currency, sum(prev_seconds) as prev_seconds from prev group by prev_currency)
     select p.currency, jsonb_object_agg(p.month, ${sql.raw(dividedOnce('p.cost_seconds'))}::text) as months, ${sql.raw(dividedOnce('sum(p.cost_seconds)'))}::text as total,
       min(g.gpu_hours) as gpu_hours, min(g.cost_per_gpu_hour) as cost_per_gpu_hour, min(g.gpu_unknown_hours) as gpu_unknown_hours,
       ${changeSql(r)} as change_percent
     from per_month p join gpu g on g.currency = p.currency left join prev_total on prev_currency = p.currency group by p.currency order by p.currency`,
  );
  return found.map((f) => ({
    ...rowOf(r, 'Total', f.currency, f.months, f.total, groupNameColumns(r.dimension).length > 0 ? { group_name: null } : {}),
    ...gpuCells(f),
    change_percent: f.change_percent,
  }));
}

/**
 * `allocation=on`: the plain table (same columns, same rows in the same order) with the allocation
 * columns after it; groups that only receive an allocation get a row after the plain ones. The
 * allocation columns' totals per currency are summed in SQL like the others.
 */
async function withAllocationColumns(
  ctx: ReportCtx,
  r: Resolved,
  plain: { rows: Row[]; totals: Row[] },
): Promise<{ columns: Column[]; rows: Row[]; totals: Row[]; notes: string[]; moved: Array<{ currency: string; moved: string | null }> }> {
  const allocation = allocationByMonth(r.dimension, r.cells, ctx.config.allocation);
  const knownMonth = (m: string) => known(r, m);
  const receivers = receiversWithoutRow(allocation, plain.rows);
  const names = receivers.length > 0 ? await groupNames(ctx.db, r.dimension) : null;
  const extra = receivers.map(({ currency, group }) => ({ ...rowOf(r, group, currency, {}, '0', names ? { group_name: names(group) } : {}), change_percent: null }));
  const rows = [...plain.rows, ...extra].map((row) => withAllocation(row, r.months, knownMonth, allocation));
  const keys = allAllocationKeys(r.months);
  // What the rules moved over the whole period, per currency: every month's allocated in, summed in SQL.
  const movedCells = rows.flatMap((row) => r.months.map((m) => ({ currency: row.currency, moved: row[allocationKeys(m).in] })));
  const [sums, moved] = await Promise.all([sumByCurrency(ctx.db, rows, 'currency', keys), sumByCurrency(ctx.db, movedCells, 'currency', ['moved'])]);
  const totals = plain.totals.map((t) => {
    const sum = sums.find((s) => s.currency === t.currency);
    return { ...t, ...Object.fromEntries(keys.map((k) => [k, sum?.[k] ?? null])) };
  });
  return { columns: [...columns(r), ...allocationColumns(r.months, knownMonth)], rows, totals, notes: allocation.notes, moved: moved.map((m) => ({ currency: m.currency, moved: m.moved ?? null })) };
}

export const monthlyReport: Report<MonthlyParams> = defineReport({
  name: 'monthly',
  title: 'Spend per month',
  description: 'Spend per calendar month for any grouping (tag value, project, region, kind, flavor, state), one block per currency: the table for a chargeback sheet.',
  section: 'cost',
  params: monthlyParams,

  async run(ctx, params, page) {
    const r = await resolve(ctx, params);
    const totalsNow = totals(ctx, r);
    const [{ rows: footed }, plainSums, snapshots] = await Promise.all([footedRows(ctx, r, totalsNow), totalsNow, latestSnapshots(ctx.db, PRICED_KINDS)]);
    const allocated = params.allocation === 'on' ? await withAllocationColumns(ctx, r, { rows: footed, totals: plainSums }) : null;
    const all = allocated?.rows ?? footed;
    const sums = allocated?.totals ?? plainSums;
    const scope = [params.kind ? kindLabel(params.kind) : null, params.project ? `project ${params.project}` : null, params.region ? `region ${params.region}` : null].filter(Boolean).join(', ');
    const thisMonth = ctx.now.toISOString().slice(0, 7);
    return {
      title: `Spend per month by ${dimensionLabel(r.dimension)}${allocated ? ' with shared costs allocated' : ''}, ${r.period.label}${scope ? ` (${scope})` : ''}`,
      summary: [
        ...sums.map((t): SummaryItem => ({
          label: `Spend ${r.period.label} (${String(t.currency)})`,
          value: t.total as string,
          kind: 'money',
          currency: t.currency as string,
          hint: incomplete(r) ? 'estimated from snapshots, of the covered hours only' : 'estimated from snapshots',
        })),
        ...(allocated?.moved ?? []).map((t): SummaryItem => ({ label: `Allocated ${r.period.label} (${t.currency})`, value: t.moved, kind: 'money', currency: t.currency, hint: 'shared costs moved by the rules' })),
      ],
      charts: [],
      columns: allocated?.columns ?? columns(r),
      rows: all.slice(page.offset, page.offset + page.limit),
      totalRows: all.length,
      totals: sums,
      coverage: r.coverage,
      columnCoverage: r.monthCoverage,
      previousCoverage: r.change.previousCoverage,
      notes: [
        ...(await scopedCostNotes(ctx)),
        ...(allocated && scopeOf(ctx) ? ['Shared costs are allocated among the groups of your scope only: an allocation from a group outside it is not shown.'] : []),
        ...(allocated?.notes ?? []),
        ...[monthsNote(r.months, r.monthCoverage)].filter((n): n is string => n !== null),
        changeNote(r),
        ...(await unknownTagKeyNotes(ctx.db, r.dimension)),
        ...freshnessNotes(ctx.now, snapshots, 'priced resources'),
        `Each cell is the estimated spend of the group in that calendar month (UTC): each snapshot's run-rate holds until the next one, ${gapCapText(ctx.config)} are capped, not extrapolated.` +
          (r.months.includes(thisMonth) ? ` ${thisMonth} is the month so far.` : ''),
        'Amounts in different currencies are never added together: each currency is its own block with its own total. Resources without a known price have no amount and are not in this table (see the overview\'s coverage).',
        ...(r.dimension.startsWith('tag:') ? [`Resources without the tag key "${r.dimension.slice(4)}" are in the (untagged) group.`] : []),
        ...(await gpuNotes(ctx.db, sums.some((t) => t.gpu_hours === null))),
      ],
    };
  },

  async export(ctx, params) {
    const r = await resolve(ctx, params);
    const sums = totals(ctx, r);
    const footed = (await footedRows(ctx, r, sums)).rows;
    const allocated = params.allocation === 'on' ? await withAllocationColumns(ctx, r, { rows: footed, totals: await sums }) : null;
    return {
      columns: allocated?.columns ?? columns(r),
      rows: listRows(allocated?.rows ?? footed),
      totals: () => (allocated ? Promise.resolve(allocated.totals) : sums),
      coverage: r.coverage,
      previousCoverage: r.change.previousCoverage,
    };
  },

  async filters(ctx, params) {
    const from = addMonths(`${ctx.now.toISOString().slice(0, 7)}-01`, -(DEFAULT_MONTHS - 1)).slice(0, 7);
    return [
      periodField(params, ctx.now, `Last ${DEFAULT_MONTHS} months (${from} to now)`),
      await groupingField(ctx, params.by, 'Group by'),
      pricedKindSelect('kind', 'Resource kind', params.kind, 'All kinds'),
      ...(await scopeFilterFields(ctx.db, params)),
      optionalSelect('allocation', 'Shared costs', params.allocation, [['on', 'Allocated (chargeback)']], 'As spent'),
    ];
  },
  scoped: true,
}, { cached: true });

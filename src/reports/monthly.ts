/**
 * Spend per calendar month: groups (any grouping, as the cost report) as rows, months as columns,
 * one block of rows per currency, with a total per row and totals per currency. The table finance
 * pastes into a chargeback sheet. Figures come from the daily aggregates (sealed days from
 * cost_daily, the rest integrated from rollups), summed per month in SQL.
 */
import { z } from 'zod';
import { PRICED_KINDS, type BucketCostRow, type PricedKind } from '../db/cost-model.js';
import type { Column, Coverage, Row, SummaryItem } from './report.js';
import { offsetRows } from './shared/batches.js';
import { dimensionOf, GROUPING_HELP, unknownTagKeyNotes, groupingField, groupNameColumns, groupNames, type CostFilter } from './shared/costs.js';
import { periodCoverage } from './shared/coverage.js';
import { pricedKindSelect, scopeFilterFields } from './shared/fields.js';
import { dimensionLabel, kindLabel } from './shared/format.js';
import { invalidParameter } from './shared/params.js';
import { addMonths, checkPeriodParams, monthsOf, periodField, resolvePeriod, type ResolvedPeriod } from './shared/period.js';
import { freshnessNotes, latestSnapshots } from './shared/snapshots.js';
import { bucketCostsFor, gapCapText } from './shared/time.js';
import { defineReport } from './shared/define.js';
import { groupedSpendParamShape } from './shared/spend-params.js';
import type { Report, ReportCtx } from './shared/types.js';

/** Months shown when no period is given: the last 6, this one included. */
export const DEFAULT_MONTHS = 6;

export const monthlyParams = z
  .strictObject(groupedSpendParamShape)
  .superRefine(checkPeriodParams);
export type MonthlyParams = z.infer<typeof monthlyParams>;

interface Resolved {
  dimension: string;
  filter: CostFilter;
  /** The period widened to whole months. */
  period: ResolvedPeriod;
  months: string[];
  coverage: Coverage;
  cells: BucketCostRow[];
}

async function resolve(ctx: ReportCtx, params: MonthlyParams): Promise<Resolved> {
  const dimension = dimensionOf(params.by, ctx.config);
  if (!dimension) throw invalidParameter('by', `by must be one of ${GROUPING_HELP}`);
  const asked = resolvePeriod(params, ctx.now, { lastMonths: DEFAULT_MONTHS });
  // Calendar months as columns: a period that starts or ends inside a month covers all of it.
  const fromMonth = asked.fromDay.slice(0, 7);
  const toMonth = asked.toDay.slice(0, 7);
  const period = resolvePeriod({ from: fromMonth, to: toMonth }, ctx.now);
  const filter: CostFilter = { kind: params.kind as PricedKind | undefined, projectId: params.project, regionId: params.region };
  const [coverage, cells] = await Promise.all([
    periodCoverage(ctx, period),
    bucketCostsFor(ctx.db, ctx.config, ctx.now, dimension, { fromDay: period.fromDay, toDay: period.lastDay }, 'month', filter),
  ]);
  return { dimension, filter, period: { ...period, label: fromMonth === toMonth ? fromMonth : `${fromMonth} to ${toMonth}` }, months: monthsOf(period), coverage, cells: cells.filter((c) => c.currency !== null) };
}

function columns(r: Resolved): Column[] {
  return [
    { key: 'group', label: dimensionLabel(r.dimension), kind: 'text' },
    ...groupNameColumns(r.dimension),
    { key: 'currency', label: 'Currency', kind: 'text' },
    ...r.months.map((m): Column => ({ key: m, label: m, kind: 'money', currencyKey: 'currency' })),
    { key: 'total', label: 'Total', kind: 'money', currencyKey: 'currency' },
  ];
}

const CELLS = `cells as (select * from unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) as c(month, group_value, currency, cost))`;

function cellParams(r: Resolved): unknown[] {
  return [r.cells.map((c) => c.bucket), r.cells.map((c) => c.group_value), r.cells.map((c) => c.currency), r.cells.map((c) => c.cost)];
}

/** A row with every month (0 where the group had no cost that month) and the row's total. */
function rowOf(r: Resolved, group: string, currency: string, months: Record<string, string>, total: string, extra: Row = {}): Row {
  const row: Row = { group, ...extra, currency };
  for (const m of r.months) row[m] = months[m] ?? '0';
  row.total = total;
  return row;
}

async function fetchRows(ctx: ReportCtx, r: Resolved, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const [found, names] = await Promise.all([
    ctx.db.query<{ group_value: string; currency: string; months: Record<string, string>; total: string; total_rows: number }>(
      `with ${CELLS}
       select group_value, currency, jsonb_object_agg(month, trim_scale(cost)::text) as months, trim_scale(sum(cost))::text as total,
         count(*) over ()::int as total_rows
       from cells group by group_value, currency
       order by currency, sum(cost) desc, group_value
       limit $5 offset $6`,
      [...cellParams(r), limit, offset],
    ),
    groupNames(ctx.db, r.dimension),
  ]);
  const rows = found.map((f) => rowOf(r, f.group_value, f.currency, f.months, f.total, names ? { group_name: names(f.group_value) } : {}));
  return { rows, total: Number(found[0]?.total_rows ?? 0) };
}

/** Per currency: each month and the whole period, summed in SQL over every group. */
async function totals(ctx: ReportCtx, r: Resolved): Promise<Row[]> {
  const found = await ctx.db.query<{ currency: string; months: Record<string, string>; total: string }>(
    `with ${CELLS},
       per_month as (select currency, month, sum(cost) as cost from cells group by currency, month)
     select currency, jsonb_object_agg(month, trim_scale(cost)::text) as months, trim_scale(sum(cost))::text as total
     from per_month group by currency order by currency`,
    cellParams(r),
  );
  return found.map((f) => rowOf(r, 'Total', f.currency, f.months, f.total, groupNameColumns(r.dimension).length > 0 ? { group_name: null } : {}));
}

export const monthlyReport: Report<MonthlyParams> = defineReport({
  name: 'monthly',
  title: 'Spend per month',
  description: 'Spend per calendar month for any grouping (tag value, project, region, kind, flavor, state), one block per currency: the table for a chargeback sheet.',
  section: 'cost',
  params: monthlyParams,

  async run(ctx, params, page) {
    const r = await resolve(ctx, params);
    const [{ rows, total }, sums, snapshots] = await Promise.all([fetchRows(ctx, r, page.limit, page.offset), totals(ctx, r), latestSnapshots(ctx.db, PRICED_KINDS)]);
    const scope = [params.kind ? kindLabel(params.kind) : null, params.project ? `project ${params.project}` : null, params.region ? `region ${params.region}` : null].filter(Boolean).join(', ');
    const thisMonth = ctx.now.toISOString().slice(0, 7);
    return {
      title: `Spend per month by ${dimensionLabel(r.dimension)}, ${r.period.label}${scope ? ` (${scope})` : ''}`,
      summary: sums.map((t): SummaryItem => ({ label: `Spend ${r.period.label} (${String(t.currency)})`, value: t.total as string, kind: 'money', currency: t.currency as string, hint: 'estimated from snapshots' })),
      charts: [],
      columns: columns(r),
      rows,
      totalRows: total,
      totals: sums,
      coverage: r.coverage,
      notes: [
        ...(await unknownTagKeyNotes(ctx.db, r.dimension)),
        ...freshnessNotes(ctx.now, snapshots, 'priced resources'),
        `Each cell is the estimated spend of the group in that calendar month (UTC): each snapshot's run-rate holds until the next one, ${gapCapText(ctx.config)} are capped, not extrapolated.` +
          (r.months.includes(thisMonth) ? ` ${thisMonth} is the month so far.` : ''),
        'Amounts in different currencies are never added together: each currency is its own block with its own total. Resources without a known price have no amount and are not in this table (see the overview\'s coverage).',
        ...(r.dimension.startsWith('tag:') ? [`Resources without the tag key "${r.dimension.slice(4)}" are in the (untagged) group.`] : []),
      ],
    };
  },

  async export(ctx, params) {
    const r = await resolve(ctx, params);
    return {
      columns: columns(r),
      rows: offsetRows(async (limit, offset) => (await fetchRows(ctx, r, limit, offset)).rows),
      totals: () => totals(ctx, r),
      coverage: r.coverage,
    };
  },

  async filters(ctx, params) {
    const from = addMonths(`${ctx.now.toISOString().slice(0, 7)}-01`, -(DEFAULT_MONTHS - 1)).slice(0, 7);
    return [
      periodField(params, ctx.now, `Last ${DEFAULT_MONTHS} months (${from} to now)`),
      await groupingField(ctx, params.by, 'Group by'),
      pricedKindSelect('kind', 'Resource kind', params.kind, 'All kinds'),
      ...scopeFilterFields(params),
    ];
  },
}, { cached: true });

/**
 * Budgets: per budget, for its period that holds the month asked for (the month, its quarter or
 * its year), the amount, the spend so far, the forecast for the period's end (part 1's method),
 * the percentage used, the status (on track / at risk / over) and a burn-up chart of the spend
 * against the budget line. Totals per currency.
 */
import { z } from 'zod';
import { activeBudgets } from '../read-models/budgets.js';
import { reportUrls } from '../present/urls.js';
import { lastBudgetAlerts } from './alerts.js';
import type { ChartSpec, Column, Row } from './report.js';
import { budgetMonth, budgetsInScope, coversText, windowDays, type BudgetFigures, type BudgetMonth } from './shared/budget-figures.js';
import { defineReport } from './shared/define.js';
import { scopeOf } from './shared/access-scope.js';
import { describeAccessScope } from '../auth/access-scope.js';
import { FORECAST_DAYS } from './shared/forecast.js';
import { chartNumber, isoDay } from './shared/format.js';
import { coverageNote, hasData, isPartial } from './shared/coverage.js';
import { addMonths } from './shared/period.js';
import { sumByCurrency, totalRow } from './shared/totals.js';
import { gapCapText } from './shared/time.js';
import type { Report, ReportCtx } from './shared/types.js';

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

export const budgetsParams = z.strictObject({
  /** The month (YYYY-MM); default the current one. */
  period: z
    .string()
    .max(7, { error: 'period must be a month YYYY-MM', abort: true })
    .regex(MONTH, { error: 'period must be a month YYYY-MM' })
    .refine((m) => m >= '1970-01', { error: 'period must be a month from 1970-01' })
    .optional(),
});
export type BudgetsParams = z.infer<typeof budgetsParams>;

const COLUMNS: Column[] = [
  { key: 'budget', label: 'Budget', kind: 'text' },
  { key: 'covers', label: 'Covers', kind: 'text' },
  { key: 'period_label', label: 'Period', kind: 'text' },
  { key: 'currency', label: 'Currency', kind: 'text' },
  { key: 'amount', label: 'Amount for the period', kind: 'money', currencyKey: 'currency' },
  { key: 'spend', label: 'Spend to date', kind: 'money', currencyKey: 'currency' },
  { key: 'forecast', label: 'Forecast for the period end', kind: 'money', currencyKey: 'currency' },
  { key: 'percent_used', label: 'Used', kind: 'percent' },
  { key: 'forecast_percent', label: 'Forecast of the amount', kind: 'percent' },
  { key: 'status', label: 'Status', kind: 'text' },
  { key: 'thresholds', label: 'Alerts at (%)', kind: 'text' },
  { key: 'last_alert', label: 'Last alert', kind: 'text', hrefKey: 'alerts_href', emptyText: 'none yet' },
  { key: 'notify', label: 'Alerts to', kind: 'text', secondary: true },
  { key: 'source', label: 'Defined in', kind: 'text', secondary: true },
];

/** A budget's row; in a period without a covered hour its spend and everything from it are unknown, never 0 and "on track". */
function rowOf(f: BudgetFigures, m: BudgetMonth, lastAlert: Row | undefined): Row {
  const b = f.budget;
  const month = m.month;
  const unknown = hasData(f.window.coverage) ? {} : { spend: null, forecast: null, percent_used: null, forecast_percent: null, status: 'no data' };
  return {
    id: b.id,
    budget: b.name,
    covers: coversText(b),
    by: b.by,
    value: b.value,
    month,
    period: b.period,
    period_label: f.window.label,
    period_from: f.window.resolved.fromDay,
    period_to: f.window.resolved.toDay,
    currency: b.currency,
    amount: b.amount,
    spend: f.spend,
    forecast: f.forecast,
    percent_used: f.percentUsed,
    forecast_percent: f.forecastPercent,
    status: f.status,
    thresholds: b.thresholds.join(', '),
    notify: b.notify.join(', '),
    source: b.source === 'config' ? 'configuration file' : 'web app',
    last_alert: lastAlert ? lastAlertText(lastAlert) : null,
    last_alert_at: lastAlert ? lastAlert.at : null,
    alerts_href: `${reportUrls('alerts').html}?${new URLSearchParams({ budget: b.id })}`,
    ...unknown,
  };
}

/** "2025-Q1 forecast 100%, sent", from the alert's key `budget:<id>:<period>:<measure>:<pct>`. */
function lastAlertText(alert: Row): string {
  const [period, measure, percent] = String(alert.key).split(':').slice(-3);
  return `${period} ${measure} ${percent}%, ${String(alert.state)}`;
}

/** Burn-up per budget: the spend summed day by day against the amount, over every day of its period. */
function burnUp(f: BudgetFigures): ChartSpec {
  const labels = windowDays(f.window);
  const byDay = new Map(f.days.map((d) => [d.day, d.cumulative]));
  const amount = chartNumber(f.budget.amount);
  return {
    id: `burn-up-${f.budget.id.replace(/[^A-Za-z0-9_-]/g, '-')}`,
    title: `${f.budget.name}: spend against the budget, ${f.window.label} (${f.budget.currency}, estimated)`,
    type: 'line',
    labels,
    datasets: [
      { label: 'Spend to date (cumulative)', data: labels.map((d) => chartNumber(byDay.get(d) ?? null)) },
      { label: 'Budget', data: labels.map(() => amount) },
    ],
    valueLabel: f.budget.currency,
    currency: f.budget.currency,
  };
}

async function resolve(ctx: ReportCtx, params: BudgetsParams): Promise<{ m: BudgetMonth; rows: Row[] }> {
  const budgets = budgetsInScope(ctx, await activeBudgets(ctx.db, ctx.config.budgets));
  const [m, alerts] = await Promise.all([budgetMonth(ctx, budgets, params.period), lastBudgetAlerts(ctx.db, budgets.map((b) => b.id))]);
  return { m, rows: m.figures.map((f) => rowOf(f, m, alerts.get(f.budget.id))) };
}

/** Per currency and budget period: a monthly and a yearly amount are never added together. */
async function totalsOf(ctx: ReportCtx, rows: Row[]): Promise<Row[]> {
  const periods = [...new Set(rows.map((r) => String(r.period_label)))].sort();
  const totals = await Promise.all(
    periods.map(async (period) => {
      const sums = await sumByCurrency(ctx.db, rows.filter((r) => r.period_label === period), 'currency', ['amount', 'spend', 'forecast']);
      return sums.map((s) => totalRow(COLUMNS, { period_label: period, currency: s.currency, amount: s.amount, spend: s.spend, forecast: s.forecast }));
    }),
  );
  return totals.flat();
}

export const budgetsReport: Report<BudgetsParams> = defineReport({
  name: 'budgets',
  title: 'Budgets',
  description: 'Per budget and its period (month, quarter or year): the amount, the spend so far, the forecast for the period end, the share used and the status, with a burn-up chart.',
  section: 'cost',
  params: budgetsParams,
  view: 'budgets',

  async run(ctx, params, page) {
    const { m, rows } = await resolve(ctx, params);
    const shown = m.figures.slice(page.offset, page.offset + page.limit);
    const counts = (s: string) => rows.filter((r) => r.status === s).length;
    const notes = [
      m.ended
        ? `${m.month} has ended: its forecast is its spend.`
        : `Forecast for the period end: spend to date + the mean cost of the last ${FORECAST_DAYS} complete days (before today) for each day left in the budget's period, as on the overview.` +
          (m.historyNote ? ` Not given: it ${m.historyNote}.` : ''),
      ...(m.gapNote && !m.ended ? [m.gapNote] : []),
      ...(m.figures.some((f) => f.budget.period !== 'month') ? [`A quarterly or yearly budget shows its quarter or year that holds ${m.month}, to date.`] : []),
      'Status: over when the spend reached the amount; at risk when the forecast reaches it; otherwise on track.',
      `Spend is estimated from snapshots: each snapshot's run-rate is assumed to hold until the next one, ${gapCapText(ctx.config)} are capped, not extrapolated. Only spend in a budget's currency counts toward it.`,
      'Totals add up the budgets of each currency and period (a month, a quarter and a year are never added together); budgets that overlap (the total and a team) count the same spend in each.',
      'Last alert: the newest threshold alert of the budget and whether it arrived; the alert history lists them all.',
      ...(isPartial(m.coverage) ? [coverageNote(m.coverage)] : []),
      ...(scopeOf(ctx) ? [`Only the budgets of your scope's own groups (${describeAccessScope(scopeOf(ctx)!)}) are shown: a budget over the total or over other groups holds other teams' spend.`] : []),
      ...(m.figures.length === 0 ? ['No budgets yet: add them to the configuration file (`budgets`) or, as an admin, with "New budget".'] : []),
    ];
    return {
      title: `Budgets, ${m.month}`,
      summary: [
        { label: 'Budgets', value: m.figures.length, kind: 'int' },
        { label: 'On track', value: counts('on track'), kind: 'int' },
        { label: 'At risk', value: counts('at risk'), kind: 'int', hint: 'the forecast for the period end reaches the amount' },
        { label: 'Over', value: counts('over'), kind: 'int', hint: 'the spend reached the amount' },
      ],
      charts: shown.map(burnUp),
      columns: COLUMNS,
      rows: rows.slice(page.offset, page.offset + page.limit),
      totalRows: rows.length,
      totals: await totalsOf(ctx, rows),
      coverage: m.coverage,
      notes,
    };
  },

  async export(ctx, params) {
    const { m, rows } = await resolve(ctx, params);
    return {
      columns: COLUMNS,
      rows: (async function* () {
        yield* rows;
      })(),
      totals: () => totalsOf(ctx, rows),
      coverage: m.coverage,
    };
  },

  async filters(ctx, params) {
    const current = `${isoDay(ctx.now).slice(0, 7)}-01`;
    const options = [{ value: '', label: `Current month (${current.slice(0, 7)})` }];
    for (let i = 1; i < 24; i++) options.push({ value: addMonths(current, -i).slice(0, 7), label: addMonths(current, -i).slice(0, 7) });
    if (params.period && !options.some((o) => o.value === params.period)) options.push({ value: params.period, label: params.period });
    return [{ name: 'period', label: 'Month', type: 'select', value: params.period ?? '', options }];
  },
  scoped: true,
});

/**
 * Budget threshold alerts. After each collection every budget in force with channels is evaluated
 * for its current period (the month, quarter or year of now); when its spend (actual) or its
 * forecast for the period's end reaches one of its percentages, ONE message goes into the
 * notification outbox, keyed `budget:<id>:<period>:<actual|forecast>:<pct>` (period YYYY-MM,
 * YYYY-Qn or YYYY). The outbox's unique key makes that once per budget, period, measure and
 * percentage across replicas and restarts. Only the highest percentage reached is sent (a budget
 * first seen at 85 % alerts for 80, not also for 50), and never one below a percentage already
 * sent for that period and measure (a forecast that falls back and rises again does not alert
 * twice).
 */
import type { Config } from '../config/index.js';
import type { Database, Queryable } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { OutgoingMessage } from '../notify/message.js';
import { enqueueMessage } from '../notify/outbox.js';
import { formatMoney } from '../present/format.js';
import { activeBudgets, type Budget } from '../read-models/budgets.js';
import { budgetContributors, budgetMonth, coversText, perPeriod, type BudgetContributor, type BudgetFigures } from '../reports/shared/budget-figures.js';

export type AlertMeasure = 'actual' | 'forecast';

export interface BudgetAlertDeps {
  db: Database;
  config: Config;
  logger: Logger;
}

/** The outbox key of a budget's alert (`period`: the label of the budget's period, "2026-11", "2026-Q4", "2026"). */
export function budgetAlertKey(budget: Pick<Budget, 'id'>, period: string, measure: AlertMeasure, percent: number): string {
  return `budget:${budget.id}:${period}:${measure}:${percent}`;
}

/** The highest of the budget's percentages that `amount` reaches (exact, in SQL), or null. */
async function highestReached(q: Queryable, budget: Budget, amount: string | null): Promise<number | null> {
  if (amount === null) return null;
  const [row] = await q.query<{ pct: number | null }>(
    `select max(t)::int as pct from unnest($1::int[]) as t where $2::numeric * 100 >= t * $3::numeric`,
    [budget.thresholds, amount, budget.amount],
  );
  return row?.pct ?? null;
}

/** Percentages already queued for this budget, period and measure. */
async function alreadySent(q: Queryable, prefix: string): Promise<number[]> {
  const rows = await q.query<{ key: string }>(`select key from notify_messages where left(key, length($1)) = $1`, [prefix]);
  return rows.map((r) => Number(r.key.slice(prefix.length))).filter((n) => Number.isInteger(n));
}

/** Where the report is, for the message: CLOUDTALLY_PUBLIC_URL, else the notifications' app_url. */
function reportLink(config: BudgetAlertDeps['config'], month: string): string | undefined {
  const base = config.web.publicUrl ?? config.notifications?.appUrl ?? null;
  return base === null ? undefined : `${base.replace(/\/+$/, '')}/reports/budgets?period=${month}`;
}

function contributorText(c: BudgetContributor, currency: string): string {
  const where = [c.project_id !== null ? `project ${c.project_id}` : null, c.region_id !== null ? `region ${c.region_id}` : null, c.flavor].filter(Boolean).join(', ');
  return `${c.name ?? c.resource_id} (${c.kind}${where ? `, ${where}` : ''}): ${formatMoney(c.price_per_hour, currency, true)} per hour, ${formatMoney(c.price_per_month, currency)} per month`;
}

/** The one message of an alert (the only place its wording lives). */
export function budgetAlertMessage(input: {
  figures: BudgetFigures;
  measure: AlertMeasure;
  percent: number;
  contributors: readonly BudgetContributor[];
  link: string | undefined;
}): OutgoingMessage {
  const { figures: f, measure, percent, contributors, link } = input;
  const b = f.budget;
  const label = f.window.label;
  const money = (v: string | null) => (v === null ? 'n/a' : formatMoney(v, b.currency));
  const what = measure === 'actual' ? `spend reached ${percent}%` : `forecast for the ${b.period} end reached ${percent}%`;
  const subject = `Budget "${b.name}" ${label}: ${what} of ${money(b.amount)}`;
  const lines = [
    subject,
    '',
    `Covers: ${coversText(b)}`,
    `Budget: ${money(b.amount)} ${perPeriod(b.period)}`,
    `Spend to date: ${money(f.spend)} (${f.percentUsed}%)`,
    `Forecast for the ${b.period} end: ${f.forecast === null ? 'not yet known (too little history)' : `${money(f.forecast)} (${f.forecastPercent}%)`}`,
    `Status: ${f.status}`,
    '',
    contributors.length > 0 ? 'Top contributors now (highest run-rate):' : 'No resource of this budget runs now.',
    ...contributors.map((c, i) => `${i + 1}. ${contributorText(c, b.currency)}`),
    ...(link ? ['', `Report: ${link}`] : []),
  ];
  return {
    key: budgetAlertKey(b, label, measure, percent),
    channels: b.notify,
    subject,
    text: lines.join('\n'),
    data: {
      type: 'budget_threshold',
      budget: {
        id: b.id,
        name: b.name,
        by: b.by,
        value: b.value,
        currency: b.currency,
        period: b.period,
        amount: b.amount,
        ...(b.period === 'month' ? { amount_per_month: b.amount } : {}),
        thresholds: b.thresholds,
      },
      // The budget's period: YYYY-MM (also as `month`, as before quarterly and yearly budgets), YYYY-Qn or YYYY.
      period: label,
      ...(b.period === 'month' ? { month: label } : {}),
      period_from: f.window.resolved.fromDay,
      period_to: f.window.resolved.toDay,
      measure,
      threshold_percent: percent,
      spend: f.spend,
      percent_used: f.percentUsed,
      forecast: f.forecast,
      forecast_percent: f.forecastPercent,
      status: f.status,
      top_contributors: contributors.map((c) => ({ ...c })),
    },
    ...(link ? { link } : {}),
  };
}

/**
 * Evaluates every budget in force (with channels) for its period that holds `now` and queues the alerts
 * it has not queued yet. Returns the keys this call queued (another replica may have queued the
 * rest).
 */
export async function evaluateBudgetAlerts(deps: BudgetAlertDeps, now: Date): Promise<string[]> {
  const budgets = (await activeBudgets(deps.db, deps.config.budgets)).filter((b) => b.notify.length > 0);
  if (budgets.length === 0) return [];
  const ctx = { db: deps.db, config: deps.config, now };
  const month = await budgetMonth(ctx, budgets);
  const queued: string[] = [];
  for (const f of month.figures) {
    for (const measure of ['actual', 'forecast'] as const) {
      const percent = await highestReached(deps.db, f.budget, measure === 'actual' ? f.spend : f.forecast);
      if (percent === null) continue;
      const prefix = budgetAlertKey(f.budget, f.window.label, measure, 0).slice(0, -1);
      if ((await alreadySent(deps.db, prefix)).some((p) => p >= percent)) continue;
      const contributors = await budgetContributors(ctx, f.budget);
      const message = budgetAlertMessage({ figures: f, measure, percent, contributors, link: reportLink(deps.config, month.month) });
      if (await enqueueMessage(deps.db, message)) {
        queued.push(message.key);
        deps.logger.info({ key: message.key, budget: f.budget.name, channels: f.budget.notify }, 'budget alert queued');
      }
    }
  }
  return queued;
}

/** The collectors' afterRun hook: budget alerts for the periods each run ends in. */
export function budgetAlertsAfterRun(deps: BudgetAlertDeps): (finishedAt: Date) => Promise<void> {
  return async (finishedAt) => void (await evaluateBudgetAlerts(deps, finishedAt));
}

/**
 * The overview's headline per currency (report.ts Headline): spend in the period with its change
 * against the previous comparable period where that is honest (shared/coverage.ts changeReason),
 * the run-rate, the month's run-rate projection with the coverage it rests on, and a sparkline of
 * the last covered days.
 */
import type { DailyCostRow } from '../costing/cost-over-time.js';
import type { Coverage, Headline, HeadlineKpi, Row } from './report.js';
import { changeReason, hasData } from './shared/coverage.js';
import { addDays, chartNumber } from './shared/format.js';
import type { ResolvedPeriod } from './shared/period.js';

/** Most days a sparkline draws. */
export const SPARKLINE_DAYS = 30;

/**
 * Cost per day of one currency over the covered days among the last `days` complete days, summed
 * over the groups of `dailyCosts` (a grouping's cost per day starting at least that far back),
 * oldest first: not today (not over yet), not a day without data or not fully collected
 * (`incomplete`), and not the day collection began on unless it began at 00:00 UTC (a part of a
 * day would read as a drop in spend).
 */
export function sparkline(
  dailyCosts: readonly DailyCostRow[],
  currency: string,
  today: string,
  firstSnapshotAt: string | null,
  incomplete: ReadonlySet<string> = new Set(),
  days = SPARKLINE_DAYS,
): HeadlineKpi['sparkline'] {
  const partFirst = firstSnapshotAt !== null && !firstSnapshotAt.endsWith('T00:00:00.000Z') ? firstSnapshotAt.slice(0, 10) : null;
  const perDay = new Map<string, number>();
  const first = addDays(today, -days);
  for (const r of dailyCosts) if (r.currency === currency && r.day >= first && r.day < today && r.day !== partFirst && !incomplete.has(r.day)) perDay.set(r.day, (perDay.get(r.day) ?? 0) + (chartNumber(r.cost) ?? 0));
  return [...perDay]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([day, cost]) => ({ day, cost }));
}

export interface HeadlineInput {
  period: ResolvedPeriod;
  coverage: Coverage;
  previousCoverage: Coverage;
  /** The month so far: the projection's coverage. */
  month: string;
  monthCoverage: Coverage;
  /** Days of the sparkline not fully collected: left out of it, like days without data. */
  incompleteDays: ReadonlySet<string>;
  /** Per currency: spend, previous spend and change (periodGroups totals). */
  totals: readonly Row[];
  /** Per currency: the run-rate and the run-rate projection. */
  figures: ReadonlyArray<{ currency: string | null; price_per_hour: string | null; price_per_month: string | null; projected_month: string }>;
  /** A grouping's cost per day, every group, over at least the sparkline's days. */
  dailyCosts: readonly DailyCostRow[];
  today: string;
}

export function headlineOf(input: HeadlineInput): Headline {
  const reason = changeReason(input.coverage, input.previousCoverage);
  const monthKnown = hasData(input.monthCoverage);
  const kpis = input.figures
    .filter((f): f is typeof f & { currency: string } => f.currency !== null)
    .map((f): HeadlineKpi => {
      const total = input.totals.find((t) => t.currency === f.currency);
      const spend = hasData(input.coverage) ? String(total?.cost ?? '0') : null;
      const previous = total?.previous_cost === null || total?.previous_cost === undefined ? null : String(total.previous_cost);
      const change = reason === null && typeof total?.change_percent === 'number' ? total.change_percent : null;
      return {
        currency: f.currency,
        spend,
        previous_spend: previous,
        change_percent: change,
        change_reason: reason ?? (change === null ? 'no spend in the previous period' : null),
        price_per_hour: f.price_per_hour,
        price_per_month: f.price_per_month,
        month: input.month,
        projected_month: monthKnown ? f.projected_month : null,
        projection_coverage: { covered_hours: input.monthCoverage.covered_hours, period_hours: input.monthCoverage.period_hours },
        sparkline: sparkline(input.dailyCosts, f.currency, input.today, input.coverage.first_snapshot_at, input.incompleteDays),
      };
    });
  return {
    first_covered_day: input.coverage.first_snapshot_at?.slice(0, 10) ?? null,
    period: {
      label: input.period.label,
      from: input.period.fromDay,
      to: input.period.lastDay,
      previous: { from: input.period.previous.fromDay, to: input.period.previous.toDay },
    },
    kpis,
  };
}

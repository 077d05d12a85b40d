/** What a report over a period knows (costing/coverage.ts), as the reports show it. */
import { coveredTime, hoursOf } from '../../costing/coverage.js';
import type { Column, Coverage } from '../report.js';
import { formatInstant } from './format.js';
import type { DayRange, ResolvedPeriod } from './period.js';
import type { ReportCtx } from './types.js';

/** The coverage of a resolved period (up to its end or now, whichever is earlier). */
export async function periodCoverage(ctx: ReportCtx, period: Pick<ResolvedPeriod, 'start' | 'end' | 'fromDay' | 'lastDay'>): Promise<Coverage> {
  const { coveredSecs, firstAt: first } = await coveredTime(ctx.db, ctx.config, period);
  return {
    from: period.start.toISOString(),
    to: period.end.toISOString(),
    covered_hours: hoursOf(coveredSecs),
    period_hours: hoursOf((period.end.getTime() - period.start.getTime()) / 1000),
    first_snapshot_at: first ? first.toISOString() : null,
  };
}

/** The coverage of whole days (a previous period, a month): up to the end of toDay, or now if earlier. */
export function rangeCoverage(ctx: ReportCtx, range: DayRange): Promise<Coverage> {
  const dayEnd = new Date(Date.parse(`${range.toDay}T00:00:00Z`) + 86_400_000);
  const start = new Date(`${range.fromDay}T00:00:00Z`);
  // A range that has not begun covers nothing of nothing.
  const end = new Date(Math.max(start.getTime(), Math.min(dayEnd.getTime(), ctx.now.getTime())));
  const lastDay = end.getTime() === dayEnd.getTime() ? range.toDay : end.toISOString().slice(0, 10);
  return periodCoverage(ctx, { start, end, fromDay: range.fromDay, lastDay: lastDay < range.fromDay ? range.fromDay : lastDay });
}

/** Whether any hour of the period is covered: without one its spend is unknown (null), never 0. */
export function hasData(coverage: Coverage): boolean {
  return coverage.covered_hours > 0;
}

const uncovered = (c: Coverage) => c.period_hours - c.covered_hours;

/**
 * Whether a change against the previous period means anything: the previous period is covered at
 * least as well as the current one, within an hour (its uncovered hours at most the current
 * period's + 1). Otherwise the change would measure missing snapshots, not spend.
 */
export function comparable(current: Coverage, previous: Coverage): boolean {
  return hasData(current) && hasData(previous) && uncovered(previous) <= uncovered(current) + 1;
}

/**
 * Why a headline's change against the previous period is not given, or null when it is: it is
 * honest only when both periods are fully covered (a change between partly collected periods
 * measures the missing snapshots, not spend). Stricter than `comparable`, which a table may use
 * beside the coverage note of each period; a single headline figure has no room for that caveat.
 */
export function changeReason(current: Coverage, previous: Coverage): string | null {
  if (!hasData(current)) return 'this period has no data';
  if (isPartial(current)) return `this period not fully collected (${coveredText(current)})`;
  if (!hasData(previous)) return 'previous period not collected (no data)';
  if (isPartial(previous)) return `previous period not fully collected (${coveredText(previous)})`;
  return null;
}

/**
 * The note under a table with a column per month: which months have no data (empty cells, not
 * 0) and which are partly covered, so that its totals are of the covered hours only.
 */
export function monthsNote(months: readonly string[], coverage: Record<string, Coverage>): string | null {
  const none = months.filter((m) => !hasData(coverage[m]!));
  const partly = months.filter((m) => hasData(coverage[m]!) && isPartial(coverage[m]!));
  if (none.length === 0 && partly.length === 0) return null;
  const parts = [
    ...(none.length > 0 ? [`${none.join(', ')} ${none.length === 1 ? 'has' : 'have'} no data (no snapshot covers ${none.length === 1 ? 'it' : 'them'}): empty, not 0`] : []),
    ...partly.map((m) => `${m} ${coveredText(coverage[m]!)}`),
  ];
  return `${parts.join('; ')}. Totals are of the covered hours only: spend in the hours no snapshot covers is unknown.`;
}

/** "covered 27 of 120 h" */
export const coveredText = (c: Coverage) => `covered ${c.covered_hours} of ${c.period_hours} h`;

/** The note beside a comparison with the previous period: what it covers, and why a change % is not given. */
export function comparisonNote(current: Coverage, previous: Coverage): string {
  const span = `${previous.from.slice(0, 10)} to ${new Date(Date.parse(previous.to) - 1).toISOString().slice(0, 10)}`;
  if (!hasData(previous)) return `The previous period (${span}) has no data (nothing collected covers it): its spend is unknown, not 0, and no change % is given.`;
  if (!comparable(current, previous)) {
    return `No change % is given: the previous period (${span}) ${coveredText(previous)}, this one ${coveredText(current)}; a change would measure the missing snapshots, not spend.`;
  }
  return `The previous period (${span}) ${coveredText(previous)}${isPartial(previous) ? ': its spend is the spend of those hours' : ''}.`;
}

export function isPartial(coverage: Coverage): boolean {
  return coverage.covered_hours < coverage.period_hours;
}

const days = (h: number) => String(Math.round((h / 24) * 10) / 10);

/** The plain note at the top of a page: "covers 7.1 of 23 days: collection began 2026-11-16 20:00 UTC". */
export function coverageNote(coverage: Coverage): string {
  const of = `${days(coverage.period_hours)} day${coverage.period_hours === 24 ? '' : 's'}`;
  if (!isPartial(coverage)) return `The figures cover all ${of} of the period (${coverage.from.slice(0, 16).replace('T', ' ')} to ${coverage.to.slice(0, 16).replace('T', ' ')} UTC).`;
  const reasons: string[] = [];
  if (coverage.first_snapshot_at === null) reasons.push('nothing has been collected yet');
  else if (coverage.first_snapshot_at > coverage.from) reasons.push(`collection began ${formatInstant(new Date(coverage.first_snapshot_at))}`);
  if (coverage.first_snapshot_at !== null) reasons.push('hours in a gap between snapshots longer than the gap cap count as not covered');
  return `The figures cover ${days(coverage.covered_hours)} of ${of}: ${reasons.join('; ')}. Spend in the uncovered hours is unknown, not zero.`;
}

/**
 * A spend column of a period: its label says when the period has no data or is partly covered
 * (so the CSV carries it too), and its empty cells read "no data" when no hour is covered.
 */
export function spendColumn(key: string, label: string, coverage: Coverage): Column {
  const column: Column = { key, label, kind: 'money', currencyKey: 'currency' };
  if (!hasData(coverage)) return { ...column, label: `${label} (no data)`, emptyText: 'no data' };
  return isPartial(coverage) ? { ...column, label: `${label} (${coveredText(coverage)})` } : column;
}

/**
 * The change column: its label says why no change is given when the periods are not comparable.
 * `names` says what is compared (default: "Change %", "previous period", "this period").
 */
export function changeColumn(current: Coverage, previous: Coverage, names: { label?: string; previous?: string; current?: string } = {}): Column {
  const { label = 'Change %', previous: previousName = 'previous period', current: currentName = 'this period' } = names;
  const column: Column = { key: 'change_percent', label, kind: 'decimal', sortable: true };
  if (comparable(current, previous)) return column;
  const why = hasData(previous) ? `${previousName} ${coveredText(previous)}` : `${previousName} has no data`;
  return { ...column, label: `${label} (not given: ${hasData(current) ? why : `${currentName} has no data`})` };
}

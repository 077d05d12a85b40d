/** What a report over a period knows (costing/coverage.ts), as the reports show it. */
import { coveredTime, hoursOf } from '../../costing/coverage.js';
import type { Coverage } from '../report.js';
import { formatInstant } from './format.js';
import type { ResolvedPeriod } from './period.js';
import type { ReportCtx } from './types.js';

/** The coverage of a resolved period (up to its end or now, whichever is earlier). */
export async function periodCoverage(ctx: ReportCtx, period: ResolvedPeriod): Promise<Coverage> {
  const { coveredSecs, firstAt: first } = await coveredTime(ctx.db, ctx.config, period);
  return {
    from: period.start.toISOString(),
    to: period.end.toISOString(),
    covered_hours: hoursOf(coveredSecs),
    period_hours: hoursOf((period.end.getTime() - period.start.getTime()) / 1000),
    first_snapshot_at: first ? first.toISOString() : null,
  };
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

/** Whether anything was collected before the end of `range` (else its spend is unknown, not 0). */
export function collectedBy(coverage: Coverage, range: { toDay: string }): boolean {
  return coverage.first_snapshot_at !== null && Date.parse(coverage.first_snapshot_at) < Date.parse(`${range.toDay}T00:00:00Z`) + 86_400_000;
}

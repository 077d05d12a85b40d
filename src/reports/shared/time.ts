/** Month-to-date and day ranges for the reports, and how they describe the gap caps. */
import type { Config } from '../../config/index.js';
import { addDays, isoDay, monthBounds } from './format.js';

/** How gaps are capped, for the reports' notes: "gaps longer than ... are capped". */
export function gapCapText(config: Config): string {
  return config.costMaxGapHours === null ? 'gaps longer than twice the schedule' : `gaps longer than ${config.costMaxGapHours} h`;
}

/**
 * The current UTC month so far: first day .. today, and the seconds left until the month ends,
 * exactly (decimal text to the millisecond, "1234.567": the projection counts every one of them).
 */
export function monthToDate(now: Date): { fromDay: string; toDay: string; secondsLeft: string; month: string } {
  const { start, end } = monthBounds(now);
  return { ...periodToDate(now, isoDay(start), end), month: isoDay(start).slice(0, 7) };
}

/**
 * A period that began on `fromDay` and ends at `endsAt` (exclusive), seen at `now`: its first
 * day, today, and the seconds left until it ends, exactly ("1234.567"; 0 once it has ended).
 */
export function periodToDate(now: Date, fromDay: string, endsAt: Date): { fromDay: string; toDay: string; secondsLeft: string } {
  const ms = Math.max(0, endsAt.getTime() - now.getTime());
  return { fromDay, toDay: isoDay(now), secondsLeft: `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}` };
}

/** Every day of [fromDay, toDay], for chart axes without holes. */
export function daysBetween(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  for (let d = fromDay; d <= toDay; d = addDays(d, 1)) days.push(d);
  return days;
}

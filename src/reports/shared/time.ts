/** Month-to-date and day ranges for the reports, and how they describe the gap caps. */
import type { Config } from '../../config/index.js';
import { addDays, isoDay, monthBounds } from './format.js';

/** How gaps are capped, for the reports' notes: "gaps longer than ... are capped". */
export function gapCapText(config: Config): string {
  return config.costMaxGapHours === null ? 'gaps longer than twice the schedule' : `gaps longer than ${config.costMaxGapHours} h`;
}

/** The current UTC month so far: first day .. today, and the seconds left until the month ends. */
export function monthToDate(now: Date): { fromDay: string; toDay: string; secondsLeft: number; month: string } {
  const { start, end } = monthBounds(now);
  return {
    fromDay: isoDay(start),
    toDay: isoDay(now),
    secondsLeft: Math.max(0, Math.floor((end.getTime() - now.getTime()) / 1000)),
    month: isoDay(start).slice(0, 7),
  };
}

/** Every day of [fromDay, toDay], for chart axes without holes. */
export function daysBetween(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  for (let d = fromDay; d <= toDay; d = addDays(d, 1)) days.push(d);
  return days;
}

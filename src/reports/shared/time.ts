/** Month-to-date, projection and daily series built on the cost model's daily integration. */
import { costOverDays, dailyCosts, gapCapsFor, type BucketCostRow, type CostBucket, type DailyCostRow } from '../../db/cost-model.js';
import type { Queryable } from '../../db/connection.js';
import type { Config } from '../../config/index.js';
import type { CostFilter } from './costs.js';
import { addDays, isoDay, monthBounds } from './format.js';

/** How gaps are capped, for the reports' notes: "gaps longer than ... are capped". */
export function gapCapText(config: Config): string {
  return config.costMaxGapHours === null ? 'gaps longer than twice the schedule' : `gaps longer than ${config.costMaxGapHours} h`;
}

/** Daily cost rows for [fromDay, toDay] with the configured caps and the report's now. */
export function dailyCostsFor(q: Queryable, config: Config, now: Date, dimension: string, fromDay: string, toDay: string, filter: CostFilter = {}): Promise<DailyCostRow[]> {
  return dailyCosts(q, {
    fromDay,
    toDay,
    dimension,
    now,
    maxGapHours: gapCapsFor(config),
    kind: filter.kind,
    projectId: filter.projectId,
    regionId: filter.regionId,
  });
}

/** Cost per group and currency over [fromDay, toDay], summed per month or over the whole range in SQL. */
export function bucketCostsFor(
  q: Queryable,
  config: Config,
  now: Date,
  dimension: string,
  range: { fromDay: string; toDay: string },
  bucket: CostBucket,
  filter: CostFilter = {},
): Promise<BucketCostRow[]> {
  return costOverDays(
    q,
    { fromDay: range.fromDay, toDay: range.toDay, dimension, now, maxGapHours: gapCapsFor(config), kind: filter.kind, projectId: filter.projectId, regionId: filter.regionId },
    bucket,
  );
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

/** Gap caps: the longest time one snapshot's run-rate is assumed to hold, from the collection schedules. */
import cron from 'node-cron';

import type { PricedKind } from './pricing.js';
/** Longest time (hours) one snapshot's run-rate is assumed to hold, per priced kind. */
export type GapCaps = Record<PricedKind, number>;

/** 2 x the default schedules: instances and clusters hourly, Kubernetes prices every 6 hours. */
export const DEFAULT_MAX_GAP_HOURS: Readonly<GapCaps> = Object.freeze({ instance: 2, cluster: 2, k8s_price: 12 });

/**
 * The longest time between two runs of a cron schedule, in hours (exact for schedules that fire
 * every day; for day-restricted ones an upper bound: a week, or a month).
 */
export function cronGapHours(expression: string): number {
  // Asked for by every cost statement a report builds: node-cron's parse is the costly part.
  let hours = gapHoursByExpression.get(expression);
  if (hours === undefined) {
    hours = computeCronGapHours(expression);
    if (gapHoursByExpression.size < 64) gapHoursByExpression.set(expression, hours);
  }
  return hours;
}

const gapHoursByExpression = new Map<string, number>();

function computeCronGapHours(expression: string): number {
  const fields = cron.parse(expression);
  const everyDay = fields.dayOfMonth.length >= 31 && fields.month.length >= 12 && fields.dayOfWeek.length >= 7;
  if (!everyDay) return fields.dayOfMonth.length >= 31 && fields.month.length >= 12 ? 7 * 24 : 31 * 24;
  const minutes = [...new Set(fields.hour.flatMap((h) => fields.minute.map((m) => h * 60 + m)))].sort((a, b) => a - b);
  if (minutes.length === 0) return 24;
  let gap = minutes[0]! + 1440 - minutes[minutes.length - 1]!;
  for (let i = 1; i < minutes.length; i++) gap = Math.max(gap, minutes[i]! - minutes[i - 1]!);
  // A sub-minute schedule (six fields) still gives at most one snapshot a minute in practice.
  return gap / 60;
}

/** Caps of 2 x each priced collector's schedule (config.schedules). */
export function maxGapHoursForSchedules(schedules: { readonly instances: string; readonly clusters: string; readonly k8s_prices: string }): GapCaps {
  return {
    instance: 2 * cronGapHours(schedules.instances),
    cluster: 2 * cronGapHours(schedules.clusters),
    k8s_price: 2 * cronGapHours(schedules.k8s_prices),
  };
}

/** What of the configuration decides the gap caps. */
export interface GapCapSettings {
  readonly costMaxGapHours: number | null;
  readonly schedules: { readonly instances: string; readonly clusters: string; readonly k8s_prices: string };
}

/** The caps of a configuration: its costMaxGapHours for every kind, else 2 x each schedule. */
export function gapCapsFor(config: GapCapSettings): number | GapCaps {
  return config.costMaxGapHours ?? maxGapHoursForSchedules(config.schedules);
}

/**
 * Slack on every gap cap: a snapshot's rate holds until the next snapshot of its kind and scope
 * when that arrives within cap + CAP_TOLERANCE_SECS; when none does, it holds for the cap and the
 * rest is a gap. A cap is a schedule's gap (or twice it) and schedules fire on whole minutes, but
 * the snapshots they produce are taken seconds late (the process's timer, the cloud API's answer,
 * the scopes queued before in the same run), one time later than the next: with a cap of exactly
 * the schedule (the demo collects every 6 h under a 6 h cap) those seconds would count as not
 * covered. One minute absorbs that drift, while a collection missed by a minute or more still
 * leaves a gap of everything past the cap.
 */
export const CAP_TOLERANCE_SECS = 60;

/** Each priced kind's cap in whole seconds (the rule that uses them: time-pieces.ts rateEndSql). */
export function capSeconds(maxGapHours: number | Partial<GapCaps> | undefined): Readonly<Record<PricedKind, number>> {
  const caps = resolveCaps(maxGapHours);
  const secs = (h: number) => Math.round(h * 3600);
  return { instance: secs(caps.instance), cluster: secs(caps.cluster), k8s_price: secs(caps.k8s_price) };
}

/** The furthest a snapshot's rate can reach after it: the longest cap plus the tolerance, in seconds. */
export function reachSeconds(maxGapHours: number | Partial<GapCaps> | undefined): number {
  const c = capSeconds(maxGapHours);
  return Math.max(c.instance, c.cluster, c.k8s_price) + CAP_TOLERANCE_SECS;
}

export function resolveCaps(maxGapHours: number | Partial<GapCaps> | undefined): GapCaps {
  const caps: GapCaps =
    typeof maxGapHours === 'number'
      ? { instance: maxGapHours, cluster: maxGapHours, k8s_price: maxGapHours }
      : { ...DEFAULT_MAX_GAP_HOURS, ...(maxGapHours ?? {}) };
  for (const [kind, hours] of Object.entries(caps)) {
    if (!Number.isFinite(hours) || hours <= 0) throw new Error(`maxGapHours for ${kind} must be a positive number of hours (got ${hours})`);
  }
  return caps;
}


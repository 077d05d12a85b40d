/**
 * Cutting the complete priced snapshots' run-rates into per-UTC-day pieces of time: the shared
 * core of every integration of cost over time (daily costs, closed days, FOCUS price pieces).
 */
import { sqlLiteral as sqlText } from '../db/sql-literal.js';
import { sql, type SQL } from '../db/statement.js';
import { CAP_TOLERANCE_SECS, capSeconds, type GapCaps } from './gap-caps.js';
import { PRICED_KINDS, type PricedKind } from './pricing.js';


export interface CostOverTimeOptions {
  /**
   * Longest time one snapshot's run-rate is assumed to hold: one number for every kind, or per
   * kind (default DEFAULT_MAX_GAP_HOURS: 2 x the default schedules).
   */
  maxGapHours?: number | Partial<GapCaps>;
  /** End of the open interval after the newest snapshot of each (kind, scope) (default: the real time). */
  now?: Date;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

export function checkDayRange(fn: string, fromDay: string, toDay: string): void {
  const valid = (d: string) => DAY.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`));
  if (!valid(fromDay) || !valid(toDay)) {
    throw new Error(`${fn}: fromDay and toDay must be dates YYYY-MM-DD (got ${JSON.stringify(fromDay)}, ${JSON.stringify(toDay)})`);
  }
  if (fromDay > toDay) throw new Error(`${fn}: fromDay ${fromDay} is after toDay ${toDay}`);
}

/**
 * The window of an integration over days: [fromDay, toDay], each priced kind's gap cap in seconds,
 * and `now`, the end of the open interval after each (kind, scope)'s newest snapshot.
 */
export interface PieceWindow {
  fromDay: string;
  toDay: string;
  capSecs: Readonly<Record<PricedKind, number>>;
  now: string;
}

export function pieceWindow(fromDay: string, toDay: string, opts: CostOverTimeOptions): PieceWindow {
  return { fromDay, toDay, capSecs: capSeconds(opts.maxGapHours), now: (opts.now ?? new Date()).toISOString() };
}

/** The furthest any rate of the window reaches: its longest cap plus the tolerance. */
export function reachSecs(w: PieceWindow): number {
  return Math.max(w.capSecs.instance, w.capSecs.cluster, w.capSecs.k8s_price) + CAP_TOLERANCE_SECS;
}

/** reachSecs as an SQL interval. */
function longestCap(w: PieceWindow): SQL {
  return sql`make_interval(secs => ${reachSecs(w)}::int)`;
}

/**
 * The one rule of how long a snapshot's rate holds (cost figures and coverage alike): from
 * `takenAt` until `bound` (the next snapshot of its kind and scope, or the end of what is known)
 * when that comes within cap + CAP_TOLERANCE_SECS (gap-caps.ts), else for the cap only.
 * `capSecs` is an SQL integer expression (a kind's cap in seconds).
 */
export function rateEndSql(takenAt: SQL, bound: SQL, capSecs: SQL): SQL {
  return sql`(case when ${bound} <= ${takenAt} + make_interval(secs => ${capSecs} + ${CAP_TOLERANCE_SECS}::int) then ${bound}
    else ${takenAt} + make_interval(secs => ${capSecs}) end)`;
}

/** A kind's cap in seconds, as an SQL integer expression over a column `kind`. */
export function kindCapSql(caps: Readonly<Record<PricedKind, number>>): SQL {
  return sql`(case kind when 'instance' then ${caps.instance}::int when 'cluster' then ${caps.cluster}::int else ${caps.k8s_price}::int end)`;
}

/**
 * CTEs (`live_from`, `win`, `intervals`, `pieces`) cutting the complete priced snapshots' run-rates
 * into per-UTC-day pieces for the days of `w` not in `storedDays`: each snapshot's rate holds from
 * its taken_at until the next complete snapshot of the same (kind, scope), the newest until
 * `w.now`, by the rule of rateEndSql (the cap, with its tolerance).
 */
export function piecesCte(storedDays: SQL, w: PieceWindow): SQL {
  const kinds = sql.raw(PRICED_KINDS.map(sqlText).join(', '));
  // Pieces are only ever made for days not in `storedDays` (a relation with a column day): snapshots
  // that end before the first such day (their rate holds at most the cap) are not read at all, so a
  // year of stored history costs nothing here.
  return sql`live_from as (
    select min(d)::date as day from generate_series(${w.fromDay}::date, ${w.toDay}::date, interval '1 day') d
    where d::date not in (select day from ${storedDays})
  ),
  win as (
    select id, kind, scope_key, project_id, region_id, taken_at,
      lead(taken_at) over (partition by kind, scope_key order by taken_at, id) as next_at
    from snapshots
    where complete and kind in (${kinds})
      and ${windowTimeRange(sql.raw('taken_at'), w)}
  ),
  intervals as (
    select w.*, ${rateEndSql(sql.raw('w.taken_at'), sql`coalesce(w.next_at, ${w.now}::timestamptz)`, kindCapSql(w.capSecs))} as end_at from win w
  ),
  pieces as materialized (
    select iv.id, iv.kind, iv.scope_key, iv.project_id, iv.region_id, iv.taken_at, d.day::date as day,
      extract(epoch from least(iv.end_at, d.day + interval '1 day') - greatest(iv.taken_at, d.day)) as secs
    from intervals iv
    cross join lateral generate_series(date_trunc('day', iv.taken_at), iv.end_at - interval '1 microsecond', interval '1 day') as d(day)
    where iv.end_at > iv.taken_at
      and d.day::date between ${w.fromDay}::date and ${w.toDay}::date
      and d.day::date not in (select day from ${storedDays})
  )`;
}

/**
 * The condition that a snapshot time `takenAt` lies in the range piecesCte reads (also bounds
 * rollup reads by the dimension/time index). Needs the `live_from` CTE.
 */
export function windowTimeRange(takenAt: SQL, w: PieceWindow): SQL {
  return sql`${takenAt} >= (select day from live_from) - ${longestCap(w)}
      and ${takenAt} < ${w.toDay}::date + 1 + ${longestCap(w)}`;
}

/**
 * GPU-seconds, their price-seconds and the seconds of resources with an unreadable GPU count,
 * integrated over the pieces `e` (columns gpu_count, gpu_price_per_hour, gpu_unknown_count, secs),
 * undivided (summed first, divided by 3600 once by the reader): NULL when a rollup predates GPU
 * counting (its GPUs are unknown, never 0).
 */
export function gpuSums(e: string): string {
  const known = `bool_and(${e}.gpu_count is not null)`;
  return `case when ${known} then sum(${e}.gpu_count * ${e}.secs) end as gpu_seconds,
    case when ${known} then sum(${e}.gpu_price_per_hour * ${e}.secs) end as gpu_price_seconds,
    case when ${known} then sum(${e}.gpu_unknown_count * ${e}.secs) end as gpu_unknown_resource_seconds`;
}

/** The gap caps (seconds per priced kind) a closed day was computed with, as stored in cost_daily_closed_days.caps. */
export function capsKey(w: PieceWindow): string {
  return `instance=${w.capSecs.instance},cluster=${w.capSecs.cluster},k8s_price=${w.capSecs.k8s_price},tolerance=${CAP_TOLERANCE_SECS}`;
}


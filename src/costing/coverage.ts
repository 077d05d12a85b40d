/**
 * What is known of a span of time: the hours during which some complete priced snapshot's
 * run-rate holds (from its taken_at until the next snapshot of its kind and scope, by the gap cap
 * and its tolerance: the one rule the cost figures use, time-pieces.ts rateEndSql), plus the days sealed with daily figures (their hourly
 * detail is gone; they were computed from it). Everything else, before collection began or in a
 * gap longer than the cap, is not covered.
 */
import type { Queryable } from '../db/connection.js';
import { arrayParam, queryRows, sql, type SQL } from '../db/statement.js';
import { capSeconds, gapCapsFor, reachSeconds, type GapCapSettings } from './gap-caps.js';
import { PRICED_KINDS } from './pricing.js';
import { kindCapSql, rateEndSql } from './time-pieces.js';

/** Each snapshot's interval end: by the cost figures' rule (rateEndSql), at most `end`. */
function intervalEnd(settings: GapCapSettings, end: string): SQL {
  const next = sql.raw('lead(taken_at) over (partition by kind, scope_key order by taken_at, id)');
  return sql`least(${rateEndSql(sql.raw('taken_at'), sql`coalesce(${next}, ${end}::timestamptz)`, kindCapSql(capSeconds(gapCapsFor(settings))))}, ${end}::timestamptz)`;
}

export interface CoveredTime {
  coveredSecs: number;
  /** The first complete priced snapshot or sealed day; null when nothing was collected. */
  firstAt: Date | null;
}

/** The covered seconds of [start, end) (its days fromDay .. lastDay), merged over every scope. */
export async function coveredTime(
  q: Queryable,
  settings: GapCapSettings,
  span: { start: Date; end: Date; fromDay: string; lastDay: string },
): Promise<CoveredTime> {
  const start = span.start.toISOString();
  const end = span.end.toISOString();
  const kinds = arrayParam(PRICED_KINDS);
  const [row] = await queryRows<{ covered_secs: number; first_at: Date | string | null }>(
    q,
    sql`with sealed as (
      select s.day from cost_daily_sealed_days s
      where s.day between ${span.fromDay}::date and ${span.lastDay}::date
        -- Not correlated: Citus cannot plan a correlated subquery from a reference table.
        and s.day in (select d.day from cost_daily d where d.dimension = 'kind' and d.day between ${span.fromDay}::date and ${span.lastDay}::date)
    ),
    iv as (
      select taken_at as s, ${intervalEnd(settings, end)} as e
      from snapshots
      where complete and kind = any(${kinds}::text[]) and taken_at < ${end}::timestamptz
        and taken_at >= ${start}::timestamptz - make_interval(secs => ${reachSeconds(gapCapsFor(settings))}::int)
        and (taken_at at time zone 'UTC')::date not in (select day from sealed)
      union all
      select day::timestamp at time zone 'UTC', (day + 1)::timestamp at time zone 'UTC' from sealed
    ),
    clipped as (
      select greatest(s, ${start}::timestamptz) as s, least(e, ${end}::timestamptz) as e from iv
      where e > ${start}::timestamptz and s < ${end}::timestamptz and e > s
    ),
    marked as (
      select s, e, case when s <= max(e) over (order by s, e rows between unbounded preceding and 1 preceding) then 0 else 1 end as starts
      from clipped
    ),
    islands as (select s, e, sum(starts) over (order by s, e rows unbounded preceding) as island from marked),
    merged as (select min(s) as s, max(e) as e from islands group by island)
    select coalesce(sum(extract(epoch from e - s)), 0)::float8 as covered_secs,
      least(
        (select min(taken_at) from snapshots where complete and kind = any(${kinds}::text[])),
        (select min(day)::timestamp at time zone 'UTC' from cost_daily_sealed_days)
      ) as first_at
    from merged`,
  );
  return { coveredSecs: Number(row?.covered_secs ?? 0), firstAt: row?.first_at ? new Date(row.first_at) : null };
}

/** A (kind, scope) that did not cover a whole day it was expected to (see dailyGaps). */
export interface DayGap {
  day: string;
  kind: string;
  scope_key: string;
  covered_hours: number;
}

/**
 * The gaps of each complete UTC day of [fromDay, toDay]: the (kind, scope) pairs collected both
 * before the day began and since (so expected to cover it) whose complete snapshots' run-rates do
 * not hold for the whole day (by the rule of coveredTime and the cost figures: cap + tolerance;
 * judged on hours to 2 decimals, so "24 of 24 h" is never a gap), with the hours they do cover (a failed collection, a gap longer
 * than the cap, a restart). Sealed days count as covered. `lookbackDays` bounds how far back
 * "collected before" is looked for.
 */
export async function dailyGaps(q: Queryable, settings: GapCapSettings, range: { fromDay: string; toDay: string }, lookbackDays: number): Promise<DayGap[]> {
  const start = `${range.fromDay}T00:00:00Z`;
  const end = new Date(Date.parse(`${range.toDay}T00:00:00Z`) + 86_400_000).toISOString();
  const rows = await queryRows<{ day: string; kind: string; scope_key: string; covered_secs: number }>(
    q,
    sql`with days as (
      select d as ds from generate_series(${start}::timestamptz, ${end}::timestamptz - interval '1 day', interval '1 day') d
      where (d at time zone 'UTC')::date not in (select day from cost_daily_sealed_days where day between ${range.fromDay}::date and ${range.toDay}::date)
    ),
    snaps as (
      select kind, scope_key, taken_at, ${intervalEnd(settings, end)} as e
      from snapshots
      where complete and kind = any(${arrayParam(PRICED_KINDS)}::text[]) and taken_at < ${end}::timestamptz
        and taken_at >= ${start}::timestamptz - make_interval(secs => ${lookbackDays * 86_400}::int)
    ),
    spans as (select kind, scope_key, min(taken_at) as first_at, max(taken_at) as last_at from snaps group by kind, scope_key),
    expected as (
      select d.ds, p.kind, p.scope_key from days d join spans p on p.first_at < d.ds and p.last_at >= d.ds
    ),
    -- Each snapshot's interval cut at the UTC midnights it spans (a run-rate holds for at most its
    -- gap cap: mostly one day, two across midnight): one pass over the snapshots, where joining
    -- each expected day to its scope's snapshots compared every day with every snapshot.
    pieces as (
      select s.kind, s.scope_key, d.ds, extract(epoch from least(s.e, d.ds + interval '1 day') - greatest(s.taken_at, d.ds)) as secs
      from snaps s
      cross join lateral generate_series(date_trunc('day', s.taken_at), s.e - interval '1 microsecond', interval '1 day') as d(ds)
      where s.e > s.taken_at and s.e > ${start}::timestamptz
    ),
    day_secs as (select ds, kind, scope_key, sum(secs) as secs from pieces group by ds, kind, scope_key),
    covered as (
      select x.ds, x.kind, x.scope_key, coalesce(c.secs, 0)::float8 as secs
      from expected x
      left join day_secs c on c.ds = x.ds and c.kind = x.kind and c.scope_key = x.scope_key
    )
    select to_char(ds at time zone 'UTC', 'YYYY-MM-DD') as day, kind, scope_key, secs as covered_secs
    -- Judged on the hours as shown (hoursOf): a day whose gaps round to nothing is no gap.
    from covered where round((secs / 3600)::numeric, 2) < 24
    order by 1, kind, scope_key`,
  );
  return rows.map((r) => ({ day: r.day, kind: r.kind, scope_key: r.scope_key, covered_hours: hoursOf(Number(r.covered_secs)) }));
}

/**
 * Hours to 2 decimals, but a covered second never rounds to none: "has data" is judged on these
 * hours (reports/shared/coverage.ts hasData), and the seconds right after the first collection
 * are data.
 */
export const hoursOf = (secs: number) => (secs > 0 ? Math.max(0.01, Math.round((secs / 3600) * 100) / 100) : 0);

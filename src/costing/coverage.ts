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
import { PRICED_KINDS, type PricedKind } from './pricing.js';
import { capsKey, kindCapSql, pieceWindow, rateEndSql } from './time-pieces.js';

type CapSecs = Readonly<Record<PricedKind, number>>;

/** Each snapshot's interval end: by the cost figures' rule (rateEndSql), at most `end`. */
function intervalEnd(caps: CapSecs, end: string): SQL {
  const next = sql.raw('lead(taken_at) over (partition by kind, scope_key order by taken_at, id)');
  return sql`least(${rateEndSql(sql.raw('taken_at'), sql`coalesce(${next}, ${end}::timestamptz)`, kindCapSql(caps))}, ${end}::timestamptz)`;
}

/**
 * The intervals of relation `iv` (columns kind, scope_key, taken_at, e) cut at the UTC midnights
 * they span (a rate holds at most its cap: mostly one day, two across midnight): columns day,
 * kind, scope_key, s, e. One pass over the snapshots, where joining days to snapshots compared
 * every day with every snapshot. Closing and the live readers cut alike, so a closed day's stored
 * coverage is what they would integrate.
 */
function dayPiecesSql(iv: string): SQL {
  return sql.raw(`select (d.ds at time zone 'UTC')::date as day, ${iv}.kind, ${iv}.scope_key,
      greatest(${iv}.taken_at, d.ds) as s, least(${iv}.e, d.ds + interval '1 day') as e
    from ${iv} cross join lateral generate_series(date_trunc('day', ${iv}.taken_at), ${iv}.e - interval '1 microsecond', interval '1 day') as d(ds)
    where ${iv}.e > ${iv}.taken_at`);
}

/**
 * SQL: the merged length in seconds of the intervals (s, e) of relation `pieces`, per value of
 * `by` (an expression over its columns, or a constant for one total): overlapping intervals, of
 * one scope or of several, count once.
 */
function mergedSecondsSql(pieces: string, by: string): SQL {
  return sql.raw(`select grp, sum(extract(epoch from e - s)) as secs from (
      select grp, min(s) as s, max(e) as e from (
        select grp, s, e, sum(starts) over (partition by grp order by s, e rows unbounded preceding) as island from (
          select ${by} as grp, s, e,
            case when s <= max(e) over (partition by ${by} order by s, e rows between unbounded preceding and 1 preceding) then 0 else 1 end as starts
          from ${pieces}
        ) marked
      ) islands
      group by grp, island
    ) merged
    group by grp`);
}

/** The caps key under which closed days' stored coverage is read (cost_daily_closed_days.caps). */
const capsKeyOf = (settings: GapCapSettings) => capsKey(pieceWindow('2000-01-01', '2000-01-01', { maxGapHours: gapCapsFor(settings) }));

/**
 * SQL: the days of [fromDay, lastDay] closed under `caps` with their coverage stored (columns day,
 * covered_secs): read instead of integrating their snapshots.
 */
function storedDaysSql(caps: string, fromDay: string, lastDay: string): SQL {
  return sql`select c.day, c.covered_secs from cost_daily_closed_days c
    where c.caps = ${caps} and c.covered_secs is not null and c.day between ${fromDay}::date and ${lastDay}::date`;
}

export interface CoveredTime {
  coveredSecs: number;
  /** The first complete priced snapshot or sealed day; null when nothing was collected. */
  firstAt: Date | null;
}

/**
 * The covered seconds of [start, end) (its days fromDay .. lastDay), merged over every scope:
 * sealed days whole, days closed with their coverage stored (and wholly inside the span) as
 * stored, the rest integrated from the snapshots whose rates reach it.
 */
export async function coveredTime(
  q: Queryable,
  settings: GapCapSettings,
  span: { start: Date; end: Date; fromDay: string; lastDay: string },
): Promise<CoveredTime> {
  const start = span.start.toISOString();
  const end = span.end.toISOString();
  const kinds = arrayParam(PRICED_KINDS);
  const reach = reachSeconds(gapCapsFor(settings));
  const [row] = await queryRows<{ covered_secs: number; first_at: Date | string | null }>(
    q,
    sql`with sealed as (
      select s.day from cost_daily_sealed_days s
      where s.day between ${span.fromDay}::date and ${span.lastDay}::date
        -- Not correlated: Citus cannot plan a correlated subquery from a reference table.
        and s.day in (select d.day from cost_daily d where d.dimension = 'kind' and d.day between ${span.fromDay}::date and ${span.lastDay}::date)
    ),
    stored as (
      select day, covered_secs from (${storedDaysSql(capsKeyOf(settings), span.fromDay, span.lastDay)}) c
      where c.day not in (select day from sealed)
        and c.day::timestamp at time zone 'UTC' >= ${start}::timestamptz and (c.day + 1)::timestamp at time zone 'UTC' <= ${end}::timestamptz
    ),
    -- The first day integrated live: snapshots whose rates end before it are not read at all.
    live_from as (
      select min(d)::date as day from generate_series(${span.fromDay}::date, ${span.lastDay}::date, interval '1 day') d
      where d::date not in (select day from sealed) and d::date not in (select day from stored)
    ),
    iv as (
      select kind, scope_key, taken_at, ${intervalEnd(capSeconds(gapCapsFor(settings)), end)} as e
      from snapshots
      where complete and kind = any(${kinds}::text[]) and taken_at < ${end}::timestamptz
        and taken_at >= ${start}::timestamptz - make_interval(secs => ${reach}::int)
        and taken_at >= (select day from live_from)::timestamp at time zone 'UTC' - make_interval(secs => ${reach}::int)
    ),
    pieces as (${dayPiecesSql('iv')}),
    clipped as (
      select greatest(s, ${start}::timestamptz) as s, least(e, ${end}::timestamptz) as e from pieces
      where day not in (select day from sealed) and day not in (select day from stored)
      union all
      select greatest(day::timestamp at time zone 'UTC', ${start}::timestamptz), least((day + 1)::timestamp at time zone 'UTC', ${end}::timestamptz) from sealed
    ),
    live as (${mergedSecondsSql('(select * from clipped where e > s) c', '1')})
    select (coalesce((select sum(secs) from live), 0) + coalesce((select sum(covered_secs) from stored), 0))::float8 as covered_secs,
      least(
        (select min(taken_at) from snapshots where complete and kind = any(${kinds}::text[])),
        (select min(day)::timestamp at time zone 'UTC' from cost_daily_sealed_days)
      ) as first_at`,
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
 * than the cap, a restart). Sealed days count as covered; closed days with their coverage stored
 * are read from cost_daily_coverage. `lookbackDays` bounds how far back "collected before" is looked for.
 */
export async function dailyGaps(q: Queryable, settings: GapCapSettings, range: { fromDay: string; toDay: string }, lookbackDays: number): Promise<DayGap[]> {
  const start = `${range.fromDay}T00:00:00Z`;
  const end = new Date(Date.parse(`${range.toDay}T00:00:00Z`) + 86_400_000).toISOString();
  const kinds = arrayParam(PRICED_KINDS);
  const collected = sql`complete and kind = any(${kinds}::text[]) and taken_at < ${end}::timestamptz
    and taken_at >= ${start}::timestamptz - make_interval(secs => ${lookbackDays * 86_400}::int)`;
  const rows = await queryRows<{ day: string; kind: string; scope_key: string; covered_secs: number }>(
    q,
    sql`with days as (
      select d as ds from generate_series(${start}::timestamptz, ${end}::timestamptz - interval '1 day', interval '1 day') d
      where (d at time zone 'UTC')::date not in (select day from cost_daily_sealed_days where day between ${range.fromDay}::date and ${range.toDay}::date)
    ),
    stored as (select day from (${storedDaysSql(capsKeyOf(settings), range.fromDay, range.toDay)}) c),
    live_from as (select min((ds at time zone 'UTC')::date) as day from days where (ds at time zone 'UTC')::date not in (select day from stored)),
    spans as (select kind, scope_key, min(taken_at) as first_at, max(taken_at) as last_at from snapshots where ${collected} group by kind, scope_key),
    expected as (
      select d.ds, p.kind, p.scope_key from days d join spans p on p.first_at < d.ds and p.last_at >= d.ds
    ),
    iv as (
      select kind, scope_key, taken_at, ${intervalEnd(capSeconds(gapCapsFor(settings)), end)} as e
      from snapshots
      where ${collected} and taken_at >= (select day from live_from)::timestamp at time zone 'UTC' - make_interval(secs => ${reachSeconds(gapCapsFor(settings))}::int)
    ),
    pieces as (${dayPiecesSql('iv')}),
    day_secs as (
      select day, kind, scope_key, sum(extract(epoch from e - s)) as secs from pieces
      where day not in (select day from stored)
      group by day, kind, scope_key
      union all
      select v.day, v.kind, v.scope_key, v.covered_secs from cost_daily_coverage v where v.day in (select day from stored)
    ),
    covered as (
      select x.ds, x.kind, x.scope_key, coalesce(c.secs, 0)::float8 as secs
      from expected x
      left join day_secs c on c.day = (x.ds at time zone 'UTC')::date and c.kind = x.kind and c.scope_key = x.scope_key
    )
    select to_char(ds at time zone 'UTC', 'YYYY-MM-DD') as day, kind, scope_key, secs as covered_secs
    -- Judged on the hours as shown (hoursOf): a day whose gaps round to nothing is no gap.
    from covered where round((secs / 3600)::numeric, 2) < 24
    order by 1, kind, scope_key`,
  );
  return rows.map((r) => ({ day: r.day, kind: r.kind, scope_key: r.scope_key, covered_hours: hoursOf(Number(r.covered_secs)) }));
}

/**
 * Stores the coverage of closed `days` ('YYYY-MM-DD', rows of cost_daily_closed_days): per
 * (kind, scope) in cost_daily_coverage, merged over every scope in covered_secs, by the rule the
 * live readers above integrate with (a day has ended, so `now` no longer changes it). Run it in
 * the transaction that closes them (or, for days closed before coverage was stored, under the
 * same lock).
 */
export async function storeClosedDayCoverage(q: Queryable, days: readonly string[], opts: { maxGapHours: Parameters<typeof capSeconds>[0]; now: Date }): Promise<void> {
  if (days.length === 0) return;
  const sorted = [...days].sort();
  const now = opts.now.toISOString();
  const reach = reachSeconds(opts.maxGapHours);
  // Read first, then written with plain values: Citus refuses STABLE timestamp arithmetic in a
  // modification, and the day's pieces are few (scopes x kinds).
  const iv = sql`iv as (
      select kind, scope_key, taken_at, ${intervalEnd(capSeconds(opts.maxGapHours), now)} as e
      from snapshots
      where complete and kind = any(${arrayParam(PRICED_KINDS)}::text[]) and taken_at < ${now}::timestamptz
        and taken_at >= ${sorted[0]}::date - make_interval(secs => ${reach}::int)
        and taken_at < ${sorted[sorted.length - 1]}::date + 1 + make_interval(secs => ${reach}::int)
    ),
    pieces as (select * from (${dayPiecesSql('iv')}) p where p.day = any(${arrayParam(sorted)}::date[]))`;
  // One pass over the pieces: per (kind, scope) rows, and per day the merged seconds (kind NULL).
  const rows = await queryRows<{ day: string; kind: string | null; scope_key: string | null; secs: string }>(
    q,
    sql`with ${iv}
      select to_char(day, 'YYYY-MM-DD') as day, kind, scope_key, sum(extract(epoch from e - s))::text as secs from pieces group by day, kind, scope_key
      union all
      select to_char(grp, 'YYYY-MM-DD'), null, null, secs::text from (${mergedSecondsSql('pieces', 'day')}) m`,
  );
  const pairs = rows.filter((r) => r.kind !== null);
  const merged = rows.filter((r) => r.kind === null);
  await q.execute('delete from cost_daily_coverage where day = any($1::date[])', [sorted]);
  if (pairs.length > 0) {
    await q.execute(
      `insert into cost_daily_coverage (day, kind, scope_key, covered_secs)
       select * from unnest($1::date[], $2::text[], $3::text[], $4::numeric[])`,
      [pairs.map((p) => p.day), pairs.map((p) => p.kind), pairs.map((p) => p.scope_key), pairs.map((p) => p.secs)],
    );
  }
  const mergedOf = new Map(merged.map((m) => [m.day, m.secs]));
  await q.execute(
    `update cost_daily_closed_days c set covered_secs = v.secs
       from unnest($1::date[], $2::numeric[]) as v(day, secs) where c.day = v.day`,
    [sorted, sorted.map((d) => mergedOf.get(d) ?? '0')],
  );
}

/**
 * Hours to 2 decimals, but a covered second never rounds to none: "has data" is judged on these
 * hours (reports/shared/coverage.ts hasData), and the seconds right after the first collection
 * are data.
 */
export const hoursOf = (secs: number) => (secs > 0 ? Math.max(0.01, Math.round((secs / 3600) * 100) / 100) : 0);

/**
 * What a report over a period knows: the hours of the period during which some complete priced
 * snapshot's run-rate holds (from its taken_at until the next snapshot of its kind and scope, at
 * most the gap cap: the same rule the cost figures use), plus the days sealed with daily figures
 * (their hourly detail is gone; they were computed from it). Everything else, before collection
 * began or in a gap longer than the cap, is not covered.
 */
import { gapCapsFor, type GapCaps } from '../../costing/gap-caps.js';
import { PRICED_KINDS } from '../../costing/pricing.js';
import type { Coverage } from '../report.js';
import { formatInstant } from './format.js';
import type { ResolvedPeriod } from './period.js';
import type { ReportCtx } from './types.js';

function capSeconds(caps: number | GapCaps): [number, number, number] {
  const c = typeof caps === 'number' ? { instance: caps, cluster: caps, k8s_price: caps } : caps;
  return [c.instance, c.cluster, c.k8s_price].map((h) => Math.round(h * 3600)) as [number, number, number];
}

const COVERAGE_SQL = `with sealed as (
    select s.day from cost_daily_sealed_days s
    where s.day between $7::date and $8::date
      and exists (select 1 from cost_daily d where d.dimension = 'kind' and d.day = s.day)
  ),
  iv as (
    select taken_at as s,
      least(coalesce(lead(taken_at) over (partition by kind, scope_key order by taken_at, id), $2::timestamptz),
        taken_at + make_interval(secs => case kind when 'instance' then $3::int when 'cluster' then $4::int else $5::int end),
        $2::timestamptz) as e
    from snapshots
    where complete and kind = any($6::text[]) and taken_at < $2::timestamptz
      and taken_at >= $1::timestamptz - make_interval(secs => greatest($3::int, $4::int, $5::int))
      and (taken_at at time zone 'UTC')::date not in (select day from sealed)
    union all
    select day::timestamp at time zone 'UTC', (day + 1)::timestamp at time zone 'UTC' from sealed
  ),
  clipped as (
    select greatest(s, $1::timestamptz) as s, least(e, $2::timestamptz) as e from iv
    where e > $1::timestamptz and s < $2::timestamptz and e > s
  ),
  marked as (
    select s, e, case when s <= max(e) over (order by s, e rows between unbounded preceding and 1 preceding) then 0 else 1 end as starts
    from clipped
  ),
  islands as (select s, e, sum(starts) over (order by s, e rows unbounded preceding) as island from marked),
  merged as (select min(s) as s, max(e) as e from islands group by island)
  select coalesce(sum(extract(epoch from e - s)), 0)::float8 as covered_secs,
    least(
      (select min(taken_at) from snapshots where complete and kind = any($6::text[])),
      (select min(day)::timestamp at time zone 'UTC' from cost_daily_sealed_days)
    ) as first_at
  from merged`;

/**
 * Per UTC day of [$1, $2) (timestamps): the (kind, scope) pairs collected both before the day
 * began and since (so expected to cover it) whose complete snapshots' run-rates do not hold for
 * the whole day, with the seconds they do cover. Sealed days ($7 .. $8, figures kept) count as
 * covered. Same intervals and caps ($3..$5, $6 kinds) as COVERAGE_SQL.
 */
const DAILY_GAPS_SQL = `with days as (
    select d as ds, d + interval '1 day' as de from generate_series($1::timestamptz, $2::timestamptz - interval '1 day', interval '1 day') d
    where (d at time zone 'UTC')::date not in (select day from cost_daily_sealed_days where day between $7::date and $8::date)
  ),
  snaps as (
    select kind, scope_key, taken_at,
      least(coalesce(lead(taken_at) over (partition by kind, scope_key order by taken_at, id), $2::timestamptz),
        taken_at + make_interval(secs => case kind when 'instance' then $3::int when 'cluster' then $4::int else $5::int end),
        $2::timestamptz) as e
    from snapshots
    where complete and kind = any($6::text[]) and taken_at < $2::timestamptz
      and taken_at >= $1::timestamptz - make_interval(secs => $9::int)
  ),
  spans as (select kind, scope_key, min(taken_at) as first_at, max(taken_at) as last_at from snaps group by kind, scope_key),
  expected as (
    select d.ds, d.de, p.kind, p.scope_key from days d join spans p on p.first_at < d.ds and p.last_at >= d.ds
  ),
  covered as (
    select x.ds, x.kind, x.scope_key,
      -- least/greatest skip NULLs: a day without any snapshot (s is NULL) must sum to 0, not 24 h.
      coalesce(sum(case when s.taken_at is not null then extract(epoch from least(s.e, x.de) - greatest(s.taken_at, x.ds)) end), 0)::float8 as secs
    from expected x
    left join snaps s on s.kind = x.kind and s.scope_key = x.scope_key and s.e > x.ds and s.taken_at < x.de
    group by x.ds, x.kind, x.scope_key
  )
  select to_char(ds at time zone 'UTC', 'YYYY-MM-DD') as day, kind, scope_key, secs as covered_secs
  from covered where secs < 86400
  order by 1, kind, scope_key`;

/** A (kind, scope) that did not cover a whole day it was expected to (see DAILY_GAPS_SQL). */
export interface DayGap {
  day: string;
  kind: string;
  scope_key: string;
  covered_hours: number;
}

/**
 * The gaps of each complete UTC day of [fromDay, toDay]: the scopes collected before and after
 * the day whose snapshots do not cover all of it (a failed collection, a gap longer than the cap,
 * a restart). `lookbackDays` bounds how far back "collected before" is looked for.
 */
export async function dailyGaps(ctx: ReportCtx, range: { fromDay: string; toDay: string }, lookbackDays: number): Promise<DayGap[]> {
  const rows = await ctx.db.query<{ day: string; kind: string; scope_key: string; covered_secs: number }>(DAILY_GAPS_SQL, [
    `${range.fromDay}T00:00:00Z`,
    new Date(Date.parse(`${range.toDay}T00:00:00Z`) + 86_400_000).toISOString(),
    ...capSeconds(gapCapsFor(ctx.config)),
    PRICED_KINDS,
    range.fromDay,
    range.toDay,
    lookbackDays * 86_400,
  ]);
  return rows.map((r) => ({ day: r.day, kind: r.kind, scope_key: r.scope_key, covered_hours: hours(Number(r.covered_secs)) }));
}

const hours = (secs: number) => Math.round((secs / 3600) * 100) / 100;

/** The coverage of a resolved period (up to its end or now, whichever is earlier). */
export async function periodCoverage(ctx: ReportCtx, period: ResolvedPeriod): Promise<Coverage> {
  const [row] = await ctx.db.query<{ covered_secs: number; first_at: Date | string | null }>(COVERAGE_SQL, [
    period.start.toISOString(),
    period.end.toISOString(),
    ...capSeconds(gapCapsFor(ctx.config)),
    PRICED_KINDS,
    period.fromDay,
    period.lastDay,
  ]);
  const first = row?.first_at ? new Date(row.first_at) : null;
  return {
    from: period.start.toISOString(),
    to: period.end.toISOString(),
    covered_hours: hours(Number(row?.covered_secs ?? 0)),
    period_hours: hours((period.end.getTime() - period.start.getTime()) / 1000),
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

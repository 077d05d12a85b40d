import type { Queryable } from '../db/connection.js';
import { sqlLiteral as sqlText } from '../db/sql-literal.js';
import { PRICED_KINDS, type PricedKind } from './pricing.js';
import { queryRows, sql, type SQL } from '../db/statement.js';
import { checkDayRange, pieceWindow, piecesCte, type CostOverTimeOptions } from './time-pieces.js';
/** Per-snapshot pieces of time, for per-resource integration (the FOCUS export). */

/** An instant as ISO 8601 UTC text with microseconds, whatever the session's time zone. */
function isoText(at: SQL): SQL {
  return sql`to_char(${at} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

export interface PricePiece {
  /** The priced snapshot whose run-rates hold during the piece. */
  snapshot_id: number;
  kind: PricedKind;
  scope_key: string;
  project_id: number | null;
  region_id: number | null;
  taken_at: Date;
  day: string;
  /** Only resources priced in this currency (sealed days); NULL = every resource of the snapshot. */
  currency: string | null;
  /** Seconds the snapshot's rates hold on that day (exact decimal text). */
  secs: string;
  /**
   * When the piece starts and ends (ISO 8601, end exclusive): the part of the day the snapshot's
   * rates hold. A sealed day's piece is the whole day (its hours are scaled, not placed in time).
   */
  starts_at: string;
  ends_at: string;
  /** The snapshot's rows of its own kind (snapshots.row_count, written with its completion). */
  row_count: number;
}

/**
 * The time each complete priced snapshot's run-rates hold on each UTC day of [fromDay, toDay]:
 * the same pieces dailyCosts integrates, so a resource's cost = sum(price_per_hour x secs) / 3600.
 * Sealed days have lost their hourly detail: there the day's last kept snapshot stands for the
 * whole day, its hours scaled per currency so that the day's total equals the stored cost_daily.
 */
export async function pricePieces(q: Queryable, query: { fromDay: string; toDay: string } & CostOverTimeOptions): Promise<PricePiece[]> {
  checkDayRange('pricePieces', query.fromDay, query.toDay);
  const kinds = sql.raw(PRICED_KINDS.map(sqlText).join(', '));
  const w = pieceWindow(query.fromDay, query.toDay, query);
  return queryRows<PricePiece & Record<string, unknown>>(
    q,
    sql`with ${piecesCte(sql.raw('cost_daily_sealed_days'), w)},
    sealed_snaps as (
      select distinct on (kind, scope_key, taken_at::date) id, kind, scope_key, project_id, region_id, taken_at, taken_at::date as day
      from snapshots
      where complete and kind in (${kinds}) and taken_at::date between ${w.fromDay}::date and ${w.toDay}::date
        and taken_at::date in (select day from cost_daily_sealed_days)
      order by kind, scope_key, taken_at::date, taken_at desc, id desc
    ),
    -- The rates first, then the days: cost_rollups and cost_daily are sharded by different columns,
    -- which Citus joins only through a result read in between.
    sealed_rates as materialized (
      select s.id, s.kind, s.scope_key, s.project_id, s.region_id, s.taken_at, s.day, r.currency, r.price_per_hour
      from sealed_snaps s join cost_rollups r on r.snapshot_id = s.id and r.dimension = 'kind'
      where r.price_per_hour > 0 and r.currency is not null
    ),
    sealed_pieces as (
      select s.id, s.kind, s.scope_key, s.project_id, s.region_id, s.taken_at, s.day, d.currency,
        -- To 40 decimals (the dividend's scale sets the quotient's): the rows' price x secs add up to the day's total far below the 16 decimals of a figure.
        d.price_seconds * ${sql.raw(`1.${'0'.repeat(40)}`)} / s.price_per_hour as secs
      from sealed_rates s
      join cost_daily d on d.day = s.day and d.kind = s.kind and d.scope_key = s.scope_key and d.dimension = 'kind' and d.currency = s.currency
    )
    select u.snapshot_id, u.kind, u.scope_key, u.project_id, u.region_id, u.taken_at, to_char(u.day, 'YYYY-MM-DD') as day, u.currency, u.secs,
      ${isoText(sql.raw('u.starts_at'))} as starts_at, ${isoText(sql.raw('u.ends_at'))} as ends_at, s.row_count from (
      select id as snapshot_id, kind, scope_key, project_id, region_id, taken_at, day, null::text as currency, secs,
        greatest(taken_at, day::timestamptz) as starts_at, greatest(taken_at, day::timestamptz) + make_interval(secs => secs::double precision) as ends_at
      from pieces
      union all
      select id, kind, scope_key, project_id, region_id, taken_at, day, currency, secs, day::timestamptz, day::timestamptz + interval '1 day' from sealed_pieces
    ) u join snapshots s on s.id = u.snapshot_id
    order by u.day, u.kind, u.scope_key, u.snapshot_id`,
  );
}

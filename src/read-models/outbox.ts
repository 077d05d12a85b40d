/**
 * What the notification outbox (src/notify) holds, for collection health and the metrics:
 * deliveries that failed or are overdue, counts per channel and status, and the latest slot of
 * each scheduled delivery. Reads the database only.
 */
import type { Queryable } from '../db/connection.js';

/** The outbox key of a scheduled delivery's slot: `delivery:<name or index>:<slot ISO>`. */
export function deliveryMessageKey(deliveryId: string, slot: Date): string {
  return `${deliveryKeyPrefix(deliveryId)}${slot.toISOString()}`;
}

export function deliveryKeyPrefix(deliveryId: string): string {
  return `delivery:${deliveryId}:`;
}

export interface OutboxCounts {
  /** Per channel: deliveries now failed (within `days`), pending, and pending past their time by more than `overdueMinutes`. */
  channels: Array<{ channel: string; failed: number; pending: number; overdue: number }>;
}

/**
 * Per channel: failed deliveries of messages created in the last `days`, pending ones, and
 * overdue ones (pending with their next attempt more than `overdueMinutes` ago: no dispatcher is
 * sending them).
 */
export async function outboxCounts(db: Queryable, now: Date, options: { days: number; overdueMinutes: number }): Promise<OutboxCounts> {
  const rows = await db.query<{ channel: string; failed: number; pending: number; overdue: number }>(
    `select d.channel,
            count(*) filter (where d.status = 'failed' and m.created_at >= $1::timestamptz - make_interval(days => $2::int))::int as failed,
            count(*) filter (where d.status = 'pending')::int as pending,
            count(*) filter (where d.status = 'pending' and d.next_attempt_at < $1::timestamptz - make_interval(mins => $3::int))::int as overdue
       from notify_deliveries d join notify_messages m on m.id = d.message_id
      where d.status <> 'sent'
      group by d.channel order by d.channel`,
    [now, options.days, Math.ceil(options.overdueMinutes)],
  );
  return { channels: rows };
}

export interface OutboxProblem {
  key: string;
  channel: string;
  status: 'failed' | 'pending';
  overdue: boolean;
  attempts: number;
  createdAt: Date;
  nextAttemptAt: Date | null;
  lastError: string | null;
}

/** Failed deliveries (messages of the last `days`) and pending ones that have had a failed attempt or are overdue, newest first. */
export async function outboxProblems(db: Queryable, now: Date, options: { days: number; overdueMinutes: number; limit: number; offset: number }): Promise<{ rows: OutboxProblem[]; total: number }> {
  const rows = await db.query<{
    key: string;
    channel: string;
    status: 'failed' | 'pending';
    overdue: boolean;
    attempts: number;
    created_at: Date;
    next_attempt_at: Date;
    last_error: string | null;
    total: number;
  }>(
    `select m.key, d.channel, d.status, d.attempts, m.created_at, d.next_attempt_at, d.last_error,
            (d.status = 'pending' and d.next_attempt_at < $1::timestamptz - make_interval(mins => $3::int)) as overdue,
            count(*) over ()::int as total
       from notify_deliveries d join notify_messages m on m.id = d.message_id
      where (d.status = 'failed' and m.created_at >= $1::timestamptz - make_interval(days => $2::int))
         or (d.status = 'pending' and (d.attempts > 0 or d.next_attempt_at < $1::timestamptz - make_interval(mins => $3::int)))
      order by m.created_at desc, d.id desc
      limit $4 offset $5`,
    [now, options.days, Math.ceil(options.overdueMinutes), options.limit, options.offset],
  );
  return {
    rows: rows.map((r) => ({
      key: r.key,
      channel: r.channel,
      status: r.status,
      overdue: r.overdue,
      attempts: r.attempts,
      createdAt: r.created_at,
      nextAttemptAt: r.status === 'pending' ? r.next_attempt_at : null,
      lastError: r.last_error,
    })),
    total: rows[0]?.total ?? 0,
  };
}

export interface LastDelivery {
  /** The slot's message key, e.g. `delivery:monthly-finance:2026-12-01T07:00:00.000Z`. */
  key: string;
  createdAt: Date;
  /** sent: every channel got it; failed: some channel failed for good; pending: still being sent. */
  status: 'sent' | 'failed' | 'pending';
  /** Per channel: `name: status (attempts)`. */
  channels: Array<{ channel: string; status: string; attempts: number; sentAt: Date | null; lastError: string | null }>;
}

/** The latest slot enqueued for each scheduled delivery id (absent: none yet). */
export async function lastDeliveries(db: Queryable, deliveryIds: readonly string[]): Promise<Map<string, LastDelivery>> {
  const result = new Map<string, LastDelivery>();
  if (deliveryIds.length === 0) return result;
  const rows = await db.query<{ id: string; key: string; created_at: Date; deliveries: Array<{ channel: string; status: string; attempts: number; sent_at: string | null; last_error: string | null }> }>(
    `select p.id, m.key, m.created_at,
            coalesce((select jsonb_agg(jsonb_build_object('channel', d.channel, 'status', d.status, 'attempts', d.attempts, 'sent_at', d.sent_at, 'last_error', d.last_error) order by d.channel)
                        from notify_deliveries d where d.message_id = m.id), '[]'::jsonb) as deliveries
       from unnest($1::text[], $2::text[]) as p(id, prefix)
       cross join lateral (
         select id, key, created_at from notify_messages
          where left(key, length(p.prefix)) = p.prefix
          order by created_at desc, id desc limit 1) m`,
    [deliveryIds, deliveryIds.map(deliveryKeyPrefix)],
  );
  for (const r of rows) {
    const channels = r.deliveries.map((d) => ({ channel: d.channel, status: d.status, attempts: d.attempts, sentAt: d.sent_at ? new Date(d.sent_at) : null, lastError: d.last_error }));
    const status = channels.some((c) => c.status === 'failed') ? 'failed' : channels.every((c) => c.status === 'sent') ? 'sent' : 'pending';
    result.set(r.id, { key: r.key, createdAt: r.created_at, status, channels });
  }
  return result;
}

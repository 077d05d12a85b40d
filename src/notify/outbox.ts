/**
 * The notification outbox: producers (budget alerts, anomaly alerts, scheduled deliveries) put a
 * message in with `enqueueMessage`; the dispatcher (dispatcher.ts) delivers it to each of its
 * channels, once, with retries. Everything about "once" lives in the database: the message key is
 * unique, so every replica and every restart agrees on whether a notice was already queued.
 */
import type { Database, Queryable } from '../db/connection.js';
import type { OutgoingMessage } from './message.js';

/** What is stored in notify_messages.payload (the message without its key and channels). */
export type StoredMessage = Omit<OutgoingMessage, 'key' | 'channels'>;

/**
 * Queues `msg` for each of its channels. Returns true when the key is new, false when a message
 * with this key is already in the outbox (then nothing changes). One statement, so the message and
 * its deliveries appear together, and concurrent replicas enqueueing the same key insert it once.
 * May run inside a producer's transaction (then it commits or rolls back with it).
 */
export async function enqueueMessage(db: Queryable | Database, msg: OutgoingMessage): Promise<boolean> {
  if (msg.key.trim() === '') throw new Error('notification message key must not be empty');
  const payload: StoredMessage = {
    subject: msg.subject,
    text: msg.text,
    data: msg.data,
    ...(msg.link !== undefined ? { link: msg.link } : {}),
    ...(msg.attachment !== undefined ? { attachment: msg.attachment } : {}),
    ...(msg.sidecar !== undefined ? { sidecar: msg.sidecar } : {}),
  };
  const channels = [...new Set(msg.channels)];
  const rows = await db.query<{ created: string }>(
    `WITH m AS (
       INSERT INTO notify_messages (key, payload) VALUES ($1, $2::jsonb)
       ON CONFLICT (key) DO NOTHING
       RETURNING id),
     d AS (
       INSERT INTO notify_deliveries (message_id, channel)
       SELECT m.id, c.channel FROM m CROSS JOIN unnest($3::text[]) AS c(channel)
       RETURNING 1)
     SELECT count(*)::int8 AS created FROM m`,
    [msg.key, JSON.stringify(payload), channels],
  );
  return rows[0]?.created === '1';
}

/** A delivery claimed by a dispatcher: one message for one channel, with its attempt number. */
export interface ClaimedDelivery {
  id: number;
  channel: string;
  /** This attempt's number (1 for the first). */
  attempt: number;
  key: string;
  message: StoredMessage;
  createdAt: Date;
}

/**
 * Claims up to `limit` pending deliveries due at `now` (never tried yet, or their next attempt
 * has come) for `claimant`: sets a lease
 * (`claimed_until`) and counts the attempt. Rows locked by another replica's claim are skipped
 * (FOR UPDATE SKIP LOCKED), rows under another replica's lease too, so each attempt is made by one
 * dispatcher. A dispatcher that dies mid-send leaves the row to be tried again when its lease ends.
 */
export async function claimDueDeliveries(db: Queryable, claimant: string, now: Date, options: { limit: number; leaseMs: number }): Promise<ClaimedDelivery[]> {
  const rows = await db.query<{ id: string; channel: string; attempts: number; key: string; payload: StoredMessage; created_at: Date }>(
    `WITH due AS (
       SELECT id FROM notify_deliveries
        WHERE status = 'pending' AND (attempts = 0 OR next_attempt_at <= $2) AND (claimed_until IS NULL OR claimed_until <= $2)
        ORDER BY next_attempt_at, id
        LIMIT $3
        FOR UPDATE SKIP LOCKED),
     claimed AS (
       UPDATE notify_deliveries d
          SET claimed_by = $1, claimed_until = $2::timestamptz + ($4::double precision * interval '1 millisecond'), attempts = d.attempts + 1
         FROM due WHERE d.id = due.id
       RETURNING d.id, d.message_id, d.channel, d.attempts)
     SELECT c.id, c.channel, c.attempts, m.key, m.payload, m.created_at
       FROM claimed c JOIN notify_messages m ON m.id = c.message_id
      ORDER BY c.id`,
    [claimant, now, options.limit, options.leaseMs],
  );
  return rows.map((r) => ({ id: Number(r.id), channel: r.channel, attempt: r.attempts, key: r.key, message: r.payload, createdAt: r.created_at }));
}

export type DeliveryOutcome =
  | { status: 'sent' }
  /** Try again at `retryAt`. */
  | { status: 'retry'; error: string; retryAt: Date }
  | { status: 'failed'; error: string };

/**
 * Records the outcome of a claimed attempt (only while this claimant still holds the claim). A
 * delivery that arrives after failed attempts keeps the last error: the alert history shows what
 * failed before it recovered.
 */
export async function settleDelivery(db: Queryable, claimant: string, id: number, now: Date, outcome: DeliveryOutcome): Promise<void> {
  const error = outcome.status === 'sent' ? null : outcome.error.slice(0, 1000);
  await db.execute(
    `UPDATE notify_deliveries
        SET status = $3, last_error = coalesce($4, last_error), sent_at = CASE WHEN $3 = 'sent' THEN $5::timestamptz END,
            next_attempt_at = coalesce($6::timestamptz, next_attempt_at), claimed_by = NULL, claimed_until = NULL
      WHERE id = $1 AND claimed_by = $2`,
    [id, claimant, outcome.status === 'retry' ? 'pending' : outcome.status, error, now, outcome.status === 'retry' ? outcome.retryAt : null],
  );
}

/**
 * Seconds to wait after failed attempt number `attempt` (1-based): `first`, doubling after each
 * further failure, at most `max`.
 */
export function retryDelaySeconds(attempt: number, settings: { firstRetrySeconds: number; maxRetrySeconds: number }): number {
  return Math.min(settings.maxRetrySeconds, settings.firstRetrySeconds * 2 ** Math.max(0, Math.min(attempt - 1, 40)));
}

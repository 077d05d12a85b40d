/**
 * The dispatcher: claims due deliveries from the outbox, sends each to its channel, and records
 * the outcome: sent; or pending again with the next attempt moved out by exponential backoff; or
 * failed after `outbox.max_attempts` attempts (or at once when the channel refused for good, or
 * is no longer configured). Replicas may all run it: each attempt is claimed by one of them.
 * Delivery is at least once: a replica that dies after sending but before recording it leaves the
 * message to be sent again when its claim's lease ends (receivers can de-duplicate on `key`).
 */
import { randomBytes } from 'node:crypto';
import type { ChannelSettings, Config, DeepReadonly } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { Resolver } from './destination.js';
import { createMailer, type Mailer } from './email.js';
import type { PostResult } from './http.js';
import { claimDueDeliveries, retryDelaySeconds, settleDelivery, type ClaimedDelivery, type DeliveryOutcome } from './outbox.js';
import { sendToWebhook } from './webhook.js';

export interface DispatcherDeps {
  db: Queryable;
  config: Pick<Config, 'channels' | 'smtp' | 'outbox'>;
  logger: Logger;
  /** Who claims (default: host, pid and a random part). */
  claimant?: string;
  /** How destination host names are resolved (tests); default the system's resolver. */
  resolve?: Resolver;
}

export interface DispatchResult {
  sent: number;
  retrying: number;
  failed: number;
}

export interface Dispatcher {
  /** Sends everything due at `now` (in batches until none is left). */
  dispatch(now: Date): Promise<DispatchResult>;
  close(): void;
}

const BATCH = 20;
/** At most this many batches per call, so one call ends even if producers keep adding. */
const MAX_BATCHES = 50;

export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { outbox } = deps.config;
  const claimant = deps.claimant ?? `dispatch-${process.pid}-${randomBytes(4).toString('hex')}`;
  const log = deps.logger.child({ component: 'notify' });
  const channels = new Map<string, DeepReadonly<ChannelSettings>>(deps.config.channels.map((c) => [c.name, c]));
  const mailer: Mailer | null = deps.config.smtp
    ? createMailer(deps.config.smtp, { timeoutMs: outbox.timeoutMs, maxAnswerBytes: outbox.maxSmtpAnswerBytes, resolve: deps.resolve })
    : null;
  // A claim outlives the longest attempt (an SMTP conversation: CONVERSATION_STEPS x timeoutMs).
  const leaseMs = Math.max(5 * 60_000, 6 * outbox.timeoutMs);

  async function send(delivery: ClaimedDelivery, now: Date): Promise<PostResult> {
    const channel = channels.get(delivery.channel);
    if (!channel) return { ok: false, status: null, retryable: false, error: `channel "${delivery.channel}" is not configured (any more)` };
    if (channel.type === 'webhook') return sendToWebhook(channel, delivery.key, delivery.message, now, outbox.timeoutMs, deps.resolve);
    if (!mailer) return { ok: false, status: null, retryable: false, error: 'CLOUDTALLY_SMTP_URL is not set' };
    return mailer.send(channel, delivery.key, delivery.message);
  }

  function outcomeOf(delivery: ClaimedDelivery, result: PostResult, now: Date): DeliveryOutcome {
    if (result.ok) return { status: 'sent' };
    const error = result.error ?? 'failed';
    if (!result.retryable) return { status: 'failed', error };
    if (delivery.attempt >= outbox.maxAttempts) return { status: 'failed', error: `${error} (after ${delivery.attempt} attempt${delivery.attempt === 1 ? '' : 's'})` };
    return { status: 'retry', error, retryAt: new Date(now.getTime() + retryDelaySeconds(delivery.attempt, outbox) * 1000) };
  }

  return {
    async dispatch(now) {
      const result: DispatchResult = { sent: 0, retrying: 0, failed: 0 };
      for (let batch = 0; batch < MAX_BATCHES; batch++) {
        const claimed = await claimDueDeliveries(deps.db, claimant, now, { limit: BATCH, leaseMs });
        for (const delivery of claimed) {
          const outcome = outcomeOf(delivery, await send(delivery, now), now);
          await settleDelivery(deps.db, claimant, delivery.id, now, outcome);
          const fields = { key: delivery.key, channel: delivery.channel, attempt: delivery.attempt };
          if (outcome.status === 'sent') {
            result.sent++;
            log.info(fields, 'notification sent');
          } else if (outcome.status === 'retry') {
            result.retrying++;
            log.warn({ ...fields, error: outcome.error, retryAt: outcome.retryAt.toISOString() }, 'notification not delivered; will retry');
          } else {
            result.failed++;
            log.error({ ...fields, error: outcome.error }, 'notification failed');
          }
        }
        if (claimed.length < BATCH) break;
      }
      return result;
    },
    close() {
      mailer?.close();
    },
  };
}

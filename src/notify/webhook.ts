/**
 * Webhook channels: POST of a documented JSON body (docs/notifications.md)
 *
 *   { "text": "<subject>\n\n<text>\n<link>", "subject", "key", "link", "data", "sent_at" }
 *
 * `text` is Slack-compatible (a Slack incoming webhook shows it). With a secret the body is signed:
 *
 *   X-Cloudtally-Timestamp: <unix seconds>
 *   X-Cloudtally-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the secret>
 *
 * so a receiver can check that the body came from cloudtally and is recent.
 */
import { createHmac } from 'node:crypto';
import type { DeepReadonly, WebhookChannel } from '../config/index.js';
import type { Resolver } from './destination.js';
import { postJson, type PostResult } from './http.js';
import type { StoredMessage } from './outbox.js';

export const SIGNATURE_HEADER = 'X-Cloudtally-Signature';
export const TIMESTAMP_HEADER = 'X-Cloudtally-Timestamp';

export interface WebhookBody {
  text: string;
  subject: string;
  key: string;
  link: string | null;
  data: Record<string, unknown>;
  sent_at: string;
}

/** The plain-text rendering every channel shares: subject, blank line, text, then the link. */
export function plainText(message: StoredMessage): string {
  return [message.subject, '', message.text, ...(message.link ? ['', message.link] : [])].join('\n');
}

export function webhookBody(key: string, message: StoredMessage, sentAt: Date): WebhookBody {
  return { text: plainText(message), subject: message.subject, key, link: message.link ?? null, data: message.data, sent_at: sentAt.toISOString() };
}

/** `sha256=<hex>` of `<timestamp>.<body>`. */
export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

export async function sendToWebhook(
  channel: DeepReadonly<WebhookChannel>,
  key: string,
  message: StoredMessage,
  now: Date,
  timeoutMs: number,
  resolve?: Resolver,
): Promise<PostResult> {
  const body = JSON.stringify(webhookBody(key, message, now));
  const headers: Record<string, string> = {};
  if (channel.secret !== null) {
    const timestamp = String(Math.floor(now.getTime() / 1000));
    headers[TIMESTAMP_HEADER] = timestamp;
    headers[SIGNATURE_HEADER] = signature(channel.secret, timestamp, body);
  }
  return postJson(channel.url, body, { timeoutMs, headers, allowPrivateNetwork: channel.allowPrivateNetwork, resolve });
}

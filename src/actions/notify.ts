import type { NotificationSettings } from '../config/index.js';
import type { DeepReadonly } from '../config/index.js';
import type { Resolver } from '../notify/destination.js';
import { postJson } from '../notify/http.js';

/*
 * Webhook notices, Slack-compatible: POST {"text": "..."} as JSON. Each attempt has its own
 * timeout; network errors, timeouts, 429 and 5xx are retried with a growing pause; any other
 * answer is final. The webhook URL usually holds a token, so errors name only its host.
 */

export interface WebhookResult {
  status: 'sent' | 'failed' | 'not_configured';
  attempts: number;
  error: string | null;
}

export interface SendOptions {
  /** First pause between attempts (doubles each time, at most 5 s). Default 500 ms. */
  backoffMs?: number;
  /** How the webhook's host name is resolved (tests); default the system's resolver. */
  resolve?: Resolver;
}

export async function sendWebhook(settings: DeepReadonly<NotificationSettings> | null, text: string, options: SendOptions = {}): Promise<WebhookResult> {
  if (!settings) return { status: 'not_configured', attempts: 0, error: null };
  const body = JSON.stringify({ text });
  const maxAttempts = settings.retries + 1;
  const backoff = options.backoffMs ?? 500;
  let lastError = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const result = await postJson(settings.webhookUrl, body, { timeoutMs: settings.timeoutMs, allowPrivateNetwork: settings.allowPrivateNetwork, resolve: options.resolve });
    if (result.ok) return { status: 'sent', attempts: attempt, error: null };
    lastError = result.error ?? '';
    const retry = result.retryable;
    if (!retry) return { status: 'failed', attempts: attempt, error: lastError };
    if (attempt < maxAttempts) await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, backoff * 2 ** (attempt - 1))));
  }
  return { status: 'failed', attempts: maxAttempts, error: `${lastError} (after ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'})` };
}

import { request } from 'undici';
import type { NotificationSettings } from '../config.js';
import type { DeepReadonly } from '../config.js';

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
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

export async function sendWebhook(settings: DeepReadonly<NotificationSettings> | null, text: string, options: SendOptions = {}): Promise<WebhookResult> {
  if (!settings) return { status: 'not_configured', attempts: 0, error: null };
  const host = hostOf(settings.webhookUrl);
  const body = JSON.stringify({ text });
  const maxAttempts = settings.retries + 1;
  const backoff = options.backoffMs ?? 500;
  let lastError = '';
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    let retry = true;
    try {
      const res = await request(settings.webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      const answer = (await res.body.text()).slice(0, 200).replace(/\s+/g, ' ').trim();
      if (res.statusCode >= 200 && res.statusCode < 300) return { status: 'sent', attempts: attempt, error: null };
      lastError = `webhook at ${host} answered ${res.statusCode}${answer ? `: ${answer}` : ''}`;
      retry = res.statusCode === 429 || res.statusCode >= 500;
    } catch (err) {
      const e = err as Error & { code?: string };
      lastError =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? `webhook at ${host} did not answer within ${settings.timeoutMs} ms`
          : `webhook at ${host} failed: ${e.code ?? e.name}${e.message && !e.message.includes(settings.webhookUrl) ? ` (${e.message})` : ''}`;
    }
    if (!retry) return { status: 'failed', attempts: attempt, error: lastError };
    if (attempt < maxAttempts) await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, backoff * 2 ** (attempt - 1))));
  }
  return { status: 'failed', attempts: maxAttempts, error: `${lastError} (after ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'})` };
}

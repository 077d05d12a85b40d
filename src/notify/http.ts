/**
 * One POST of a JSON body to a webhook, shared by every webhook cloudtally calls (stop notices in
 * src/actions/notify.ts, notification channels in webhook.ts). The URL usually holds a token, so
 * errors name only its host. Whether and when to try again is the caller's decision: `retryable`
 * says whether another attempt could succeed (network errors, timeouts, 429 and 5xx).
 */
import { request } from 'undici';

export interface PostResult {
  ok: boolean;
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  retryable: boolean;
  /** Why it failed (host only, never the URL); null when ok. */
  error: string | null;
}

export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

export async function postJson(url: string, body: string, options: { timeoutMs: number; headers?: Record<string, string> }): Promise<PostResult> {
  const host = hostOf(url);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    const answer = (await res.body.text()).slice(0, 200).replace(/\s+/g, ' ').trim();
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, status: res.statusCode, retryable: false, error: null };
    return {
      ok: false,
      status: res.statusCode,
      retryable: res.statusCode === 429 || res.statusCode >= 500,
      error: `webhook at ${host} answered ${res.statusCode}${answer ? `: ${answer}` : ''}`,
    };
  } catch (err) {
    const e = err as Error & { code?: string };
    const error =
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? `webhook at ${host} did not answer within ${options.timeoutMs} ms`
        : `webhook at ${host} failed: ${e.code ?? e.name}${e.message && !e.message.includes(url) ? ` (${e.message})` : ''}`;
    return { ok: false, status: null, retryable: true, error };
  }
}

/**
 * One POST of a JSON body to a webhook, shared by every webhook cloudtally calls (stop notices in
 * src/actions/notify.ts, notification channels in webhook.ts). The URL usually holds a token, so
 * errors name only its host. Whether and when to try again is the caller's decision: `retryable`
 * says whether another attempt could succeed (network errors, timeouts, 429 and 5xx).
 */
import { request, type Dispatcher } from 'undici';

export interface PostResult {
  ok: boolean;
  /** The HTTP status, or null when no answer came. */
  status: number | null;
  retryable: boolean;
  /** Why it failed (host only, never the URL); null when ok. */
  error: string | null;
}

/** Bytes of a webhook's answer that are read: only its first 200 characters are ever used. */
export const ANSWER_READ_BYTES = 4096;

/**
 * The start of an answer's body, at most `maxBytes`; the rest is never read (the body is
 * destroyed, and its connection with it). A body that breaks off gives what had arrived: the
 * status has already said how the request went.
 */
export async function answerStart(body: Dispatcher.ResponseData['body'], maxBytes = ANSWER_READ_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= maxBytes) break;
    }
  } catch {
    // what had arrived is enough
  } finally {
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
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
    const answer = (await answerStart(res.body)).slice(0, 200).replace(/\s+/g, ' ').trim();
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

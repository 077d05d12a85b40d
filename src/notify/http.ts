/**
 * One POST of a JSON body to a webhook, shared by every webhook cloudtally calls (stop notices in
 * src/actions/notify.ts, notification channels in webhook.ts). The URL usually holds a token, so
 * errors name only its host. Whether and when to try again is the caller's decision: `retryable`
 * says whether another attempt could succeed (network errors, timeouts, 429 and 5xx).
 *
 * The destination must be a public address unless the caller allows private networks
 * (destination.ts). What a destination answers is never kept: an error names its status and the
 * length of its body, which is read and dropped, because the error is stored, logged and shown
 * (outbox, collection health, the scheduled-stops report), and a destination that is an internal
 * service would otherwise have its error pages read back through cloudtally.
 */
import { request } from 'undici';
import { destinationDispatcher, type Resolver } from './destination.js';

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

export interface PostOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
  /** The channel's `allow_private_network`: a private, loopback, link-local ... address may be called. */
  allowPrivateNetwork: boolean;
  /** How names are resolved (tests); default the system's resolver. */
  resolve?: Resolver;
}

/** A body is counted up to this many bytes, then the rest is dropped unread (its connection with it). */
export const MAX_COUNTED_BODY_BYTES = 4096;

/**
 * What an error says of an answer's body (`what`: "body", "answer"): "no body", "body of 512
 * bytes not kept", "body of more than 4096 bytes not kept".
 */
export function droppedBodyText(bytes: number, more = false, what = 'body'): string {
  if (bytes === 0 && !more) return `no ${what}`;
  return `${what} of ${more ? 'more than ' : ''}${bytes} byte${bytes === 1 && !more ? '' : 's'} not kept`;
}

/** Reads and drops an answer's body, counting its bytes (at most MAX_COUNTED_BODY_BYTES are read). */
async function bodyLength(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<{ bytes: number; more: boolean }> {
  let bytes = 0;
  try {
    for await (const chunk of body) {
      bytes += chunk.length;
      if (bytes > MAX_COUNTED_BODY_BYTES) return { bytes: MAX_COUNTED_BODY_BYTES, more: true };
    }
  } catch {
    // A body that breaks off: the status has already said how the request went.
  } finally {
    body.destroy();
  }
  return { bytes, more: false };
}

export async function postJson(url: string, body: string, options: PostOptions): Promise<PostResult> {
  const host = hostOf(url);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
      dispatcher: destinationDispatcher({ allowPrivateNetwork: options.allowPrivateNetwork, resolve: options.resolve }),
    });
    const length = await bodyLength(res.body);
    if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, status: res.statusCode, retryable: false, error: null };
    return {
      ok: false,
      status: res.statusCode,
      retryable: res.statusCode === 429 || res.statusCode >= 500,
      error: `webhook at ${host} answered ${res.statusCode}, ${droppedBodyText(length.bytes, length.more)}`,
    };
  } catch (err) {
    const e = err as Error & { code?: string };
    if (e.code === 'EPRIVATEDESTINATION') {
      // Refused before anything was sent; it will not change by trying again.
      return { ok: false, status: null, retryable: false, error: `webhook at ${host} refused: ${e.message}` };
    }
    const error =
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? `webhook at ${host} did not answer within ${options.timeoutMs} ms`
        : `webhook at ${host} failed: ${e.code ?? e.name}${e.message && !e.message.includes(url) ? ` (${e.message})` : ''}`;
    return { ok: false, status: null, retryable: true, error };
  }
}

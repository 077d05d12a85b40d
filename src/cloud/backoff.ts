/** Retry timing: exponential backoff with full jitter, and the Retry-After header. */

export interface RetrySettings {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** Full jitter: a random delay between 0 and min(cap, base * 2^(attempt-1)). `attempt` counts from 1. */
export function backoffDelayMs(attempt: number, settings: RetrySettings, random: () => number = Math.random): number {
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/**
 * Reads Retry-After, given either as delay seconds (`120`) or as an HTTP date; null when absent
 * or unreadable. A date in the past gives 0.
 */
export function parseRetryAfterMs(header: string | string[] | undefined, now: number = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * The wait before the next attempt: the server's Retry-After when it gave one (capped at
 * maxDelayMs, so a huge value cannot stall a collection run), else the jittered backoff.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | null, settings: RetrySettings): number {
  if (retryAfterMs !== null) return Math.min(retryAfterMs, settings.maxDelayMs);
  return backoffDelayMs(attempt, settings);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What a database error means for the caller: retry later, or give up. Works on both drivers. */

/** SQLSTATE of a lock wait that gave up (lock_timeout, NOWAIT). */
export const LOCK_NOT_AVAILABLE = '55P03';

/** A statement gave up waiting for a lock (lock_timeout). */
export function isLockTimeout(err: unknown): boolean {
  return someError(err, (e) => codeOf(e) === LOCK_NOT_AVAILABLE);
}

/** SQLSTATEs of a session the server ended: shutdown, crash restart, terminated, idle transaction. */
const SESSION_ENDED = new Set(['57P01', '57P02', '57P03', '25P03']);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * The connection to the database was lost or could not be made (server restarting or gone, the
 * session terminated, the network down): trying again later may succeed. A closed pool or an SQL
 * error is not such a loss.
 */
export function isConnectionLost(err: unknown): boolean {
  return someError(err, (e) => {
    const code = codeOf(e);
    if (code !== undefined && (SESSION_ENDED.has(code) || code.startsWith('08') || NETWORK_CODES.has(code))) return true;
    const message = e instanceof Error ? e.message : '';
    return /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Connection refused/i.test(message);
  });
}

function codeOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** The error, its causes and (AggregateError) its parts, a few levels deep. */
function someError(err: unknown, test: (e: unknown) => boolean, depth = 0): boolean {
  if (err === null || err === undefined || depth > 5) return false;
  if (test(err)) return true;
  if (err instanceof AggregateError && err.errors.some((e) => someError(e, test, depth + 1))) return true;
  return someError((err as { cause?: unknown }).cause, test, depth + 1);
}

/** What a database error means for the caller: retry later, or give up. Works on both drivers. */

/** SQLSTATE of a lock wait that gave up (lock_timeout, NOWAIT). */
export const LOCK_NOT_AVAILABLE = '55P03';

/** A statement gave up waiting for a lock (lock_timeout). */
export function isLockTimeout(err: unknown): boolean {
  return someError(err, (e) => codeOf(e) === LOCK_NOT_AVAILABLE);
}

/** SQLSTATEs of a session the server ended: shutdown, crash restart, terminated, idle transaction. */
const SESSION_ENDED = new Set(['57P01', '57P02', '57P03', '25P03']);
/** Socket errors of a connection refused, reset or cut, or a host that cannot be reached now. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EAI_AGAIN', 'ENOTFOUND']);
/** pg and pg-pool have no codes for these; their messages are stable (and checked by a test). */
const LOST_MESSAGE = /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Connection refused/i;

/**
 * The connection to the database was lost or could not be made (server restarting or gone, the
 * session terminated, the network down): trying again later may succeed. A closed pool or an SQL
 * error is not such a loss.
 */
export function isConnectionLost(err: unknown): boolean {
  return someError(err, (e) => {
    const code = codeOf(e);
    // protocol_violation (08P01) is a bug, not an outage.
    if (code !== undefined && (SESSION_ENDED.has(code) || (code.startsWith('08') && code !== '08P01') || NETWORK_CODES.has(code))) return true;
    // A Unix socket path whose server is stopped (the socket file is gone).
    if (code === 'ENOENT' && (e as { syscall?: unknown }).syscall === 'connect') return true;
    return e instanceof Error && LOST_MESSAGE.test(e.message);
  });
}

/** A database that refuses new connections for now: too_many_connections. */
const BUSY_SQLSTATES = new Set(['53300']);
/** A handle that can no longer be used (the pool was ended, PGlite closed): the database is not available to this process. */
const CLOSED_MESSAGES = [/^Client was closed and is not queryable$/, /^Cannot use a pool after calling end on the pool$/, /^PGlite is closed$/];

/**
 * Whether an error (or one it wraps: `cause`, AggregateError's `errors`, as drizzle and our
 * transactions wrap them) says the database cannot be reached now rather than that a statement
 * is wrong: a lost connection, a server refusing connections, a closed handle.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (isConnectionLost(err)) return true;
  return someError(err, (e) => {
    const code = codeOf(e);
    return (code !== undefined && BUSY_SQLSTATES.has(code)) || (e instanceof Error && CLOSED_MESSAGES.some((pattern) => pattern.test(e.message)));
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

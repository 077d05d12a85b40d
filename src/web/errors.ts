/** One bad input, named the way the client sent it (`query.limit`, `body.return_to`). */
export interface FieldError {
  field: string;
  message: string;
}

/** An error the client caused: shown to the client as it is (status, code, message, fields). */
export class ClientError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ClientError';
  }
}

export function invalidParameters(errors: FieldError[]): ClientError {
  const message = `Invalid parameters: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`;
  return new ClientError(400, 'invalid_parameters', message, errors);
}

export function notFound(message: string): ClientError {
  return new ClientError(404, 'not_found', message);
}

/**
 * Errors from other layers that carry an HTTP 4xx status (http-errors style, e.g. csrf-csrf's
 * EBADCSRFTOKEN, or a report throwing `Object.assign(new Error('...'), { status: 400 })`) are
 * client errors too; everything else is an internal error whose details stay in the log.
 */
export function asClientError(err: unknown): ClientError | null {
  if (err instanceof ClientError) return err;
  if (!(err instanceof Error)) return null;
  const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  if (typeof status !== 'number' || status < 400 || status > 499) return null;
  const code = (err as { code?: unknown }).code;
  if (code === 'EBADCSRFTOKEN') {
    return new ClientError(403, 'invalid_csrf_token', 'Missing or invalid CSRF token: reload the page and try again.');
  }
  // Body-parser errors (413, 400 on bad encoding) have safe messages; so do reports' own, which may
  // name their fields (reports/shared/params.ts invalidParameter).
  const fields = (err as { errors?: unknown }).errors;
  const errors = Array.isArray(fields) ? fields.filter((f): f is FieldError => typeof f?.field === 'string' && typeof f?.message === 'string') : [];
  return new ClientError(status, typeof code === 'string' ? code.toLowerCase() : 'bad_request', err.message, errors);
}

/*
 * A database that is down or restarting is not a bug of ours: requests are answered 503 with
 * Retry-After (error-handler.ts), and a CSV export it cuts says so in its last line. Decided here,
 * once, from what Postgres, pg, pg-pool and PGlite throw.
 */

/** How long a client is told to wait before asking again while the database is unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 10;

/**
 * SQLSTATEs of a server that is going away or not taking connections: admin_shutdown,
 * crash_shutdown, cannot_connect_now, too_many_connections, and class 08 (connection exceptions)
 * except protocol_violation, which is a bug rather than an outage.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '08000', '08001', '08003', '08004', '08006']);
/** Socket errors of a connection refused, reset or cut, or a host that cannot be reached now. */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EAI_AGAIN', 'ENOTFOUND']);
/** pg and pg-pool have no codes for these; their messages are stable (and checked by a test). */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
  /^PGlite is closed$/,
];

/**
 * Whether an error (or one it wraps: `cause`, AggregateError's `errors`, as drizzle and our
 * transactions wrap them) says the database cannot be reached now rather than that a statement
 * is wrong.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): boolean => {
    if (!(e instanceof Error) || seen.has(e) || depth > 6) return false;
    seen.add(e);
    const { code, syscall } = e as { code?: unknown; syscall?: unknown };
    if (typeof code === 'string') {
      if (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code)) return true;
      // A Unix socket path whose server is stopped (the socket file is gone).
      if (code === 'ENOENT' && syscall === 'connect') return true;
    }
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(e.message))) return true;
    if (visit(e.cause, depth + 1)) return true;
    return e instanceof AggregateError && e.errors.some((inner) => visit(inner, depth + 1));
  };
  return visit(err, 0);
}

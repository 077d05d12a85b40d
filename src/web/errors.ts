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

export { isDatabaseUnavailable } from '../db/errors.js';

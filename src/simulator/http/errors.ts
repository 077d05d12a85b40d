import type { ApiErrorBody, FieldProblem } from '../../cloud/schemas/error-body.js';

/**
 * An answer other than 2xx, with the one error body shape of the simulator
 * (src/cloud/schemas/error-body.ts): `{code, message, errors?}`.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors?: FieldProblem[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): ApiErrorBody {
    return this.errors
      ? { code: this.code, message: this.message, errors: this.errors.map((e) => ({ field: e.field, message: e.message })) }
      : { code: this.code, message: this.message };
  }
}

export function notFound(message: string): HttpError {
  return new HttpError(404, 'not_found', message);
}

export function validationFailed(errors: FieldProblem[]): HttpError {
  const fields = errors.map((e) => e.field).join(', ');
  return new HttpError(400, 'validation_failed', `request is invalid: ${fields}`, errors);
}

/** Error codes per status for the faults the simulator injects. */
export function faultCode(status: number): string {
  if (status === 429) return 'rate_limited';
  if (status === 401) return 'unauthorized';
  if (status === 404) return 'not_found';
  if (status === 409) return 'conflict';
  if (status >= 500) return 'unavailable';
  return 'validation_failed';
}

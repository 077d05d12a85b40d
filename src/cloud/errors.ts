import type { ApiErrorBody, FieldProblem, Task } from './schemas/index.js';

/**
 * Typed errors of the cloud client. Every message is one readable line naming the client
 * operation, the HTTP method and path, the status and what was wrong. None of them ever receives
 * the API key: the transport never hands headers to an error, and it scrubs the key from any
 * response text before quoting it.
 */

/** What identifies a request in an error: the client operation and the HTTP request. */
export interface RequestIdentity {
  /** Client method, e.g. `listKeypairs`. */
  operation: string;
  /** HTTP method, e.g. `GET`. */
  method: string;
  /** Path as sent, relative to the base URL, with the query string (or the route template when nothing was sent). */
  path: string;
  /** Route template, e.g. `GET /cloud/v1/keypairs/{project_id}/{region_id}`. */
  endpoint: string;
}

const MAX_PROBLEMS_IN_MESSAGE = 5;

/** Collapses whitespace so that a message stays on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function describeProblems(problems: readonly FieldProblem[]): string {
  const shown = problems.slice(0, MAX_PROBLEMS_IN_MESSAGE).map((p) => `${p.field}: ${p.message}`);
  const more = problems.length - shown.length;
  return oneLine(shown.join('; ') + (more > 0 ? `; and ${more} more` : ''));
}

export class CloudError extends Error {
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly endpoint: string;

  constructor(problem: string, id: RequestIdentity, options?: { cause?: unknown }) {
    super(oneLine(`${id.operation}: ${id.method} ${id.path} ${problem}`), options);
    this.name = new.target.name;
    this.operation = id.operation;
    this.method = id.method;
    this.path = id.path;
    this.endpoint = id.endpoint;
  }

  /** A plain, serialisable form (used by JSON.stringify and loggers); never holds a key. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) out[key] = value;
    return out;
  }
}

/** The API answered with a non-2xx status (after any retries). */
export class CloudApiError extends CloudError {
  readonly status: number;
  /** The error body when it parsed as the shared error shape, else null. */
  readonly body: ApiErrorBody | null;
  /** The start of the body text when it did not parse (scrubbed), else null. */
  readonly bodyExcerpt: string | null;
  /** Retry-After of the last answer, in milliseconds, when it carried one. */
  readonly retryAfterMs: number | null;
  readonly attempts: number;

  constructor(
    id: RequestIdentity,
    details: {
      status: number;
      body: ApiErrorBody | null;
      bodyExcerpt: string | null;
      retryAfterMs: number | null;
      attempts: number;
    },
  ) {
    const { status, body, bodyExcerpt, attempts } = details;
    let what = '';
    if (body) {
      const parts = [body.code, body.message].filter((p): p is string => !!p);
      what = parts.join(': ');
      if (body.errors && body.errors.length > 0) what += ` (${describeProblems(body.errors)})`;
    } else if (bodyExcerpt) {
      what = `body ${JSON.stringify(bodyExcerpt)}`;
    }
    const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
    super(`answered ${status}${tries}${what ? `: ${what}` : ''}`, id);
    this.status = status;
    this.body = body;
    this.bodyExcerpt = bodyExcerpt;
    this.retryAfterMs = details.retryAfterMs;
    this.attempts = attempts;
  }

  /** The error code of the body (`validation_failed`, `not_found`...), when there is one. */
  get code(): string | null {
    return this.body?.code ?? null;
  }
}

/** An input broke a rule of the spec; nothing was sent. */
export class CloudValidationError extends CloudError {
  readonly problems: FieldProblem[];

  constructor(id: RequestIdentity, problems: FieldProblem[]) {
    super(`rejected before sending: ${describeProblems(problems)}`, id);
    this.problems = problems;
  }
}

/** A 2xx answer whose body is not JSON or does not have the expected shape. */
export class CloudResponseError extends CloudError {
  readonly status: number;
  readonly problems: FieldProblem[];
  /** The start of the body (scrubbed of the key). */
  readonly excerpt: string;

  constructor(id: RequestIdentity, details: { status: number; problems: FieldProblem[]; excerpt: string }) {
    super(
      `answered ${details.status} with an unusable body: ${describeProblems(details.problems)}; body starts ${JSON.stringify(details.excerpt)}`,
      id,
    );
    this.status = details.status;
    this.problems = details.problems;
    this.excerpt = details.excerpt;
  }
}

/**
 * A 2xx answer whose body passed the client's size limit for its kind of answer (a list page or
 * any other): reading stopped there, nothing of it was used.
 */
export class CloudResponseTooLargeError extends CloudResponseError {
  readonly limitBytes: number;

  constructor(id: RequestIdentity, details: { status: number; limitBytes: number; limitName: string; excerpt: string }) {
    const problem = `larger than the limit of ${details.limitBytes} bytes (${details.limitName}); reading stopped there`;
    super(id, { status: details.status, problems: [{ field: '(body)', message: problem }], excerpt: details.excerpt });
    this.limitBytes = details.limitBytes;
  }
}

/** A request (every attempt of it) or a task wait took longer than allowed. */
export class CloudTimeoutError extends CloudError {
  readonly timeoutMs: number;
  readonly attempts: number;
  /** For task waits: the latest record of every task (some not final). */
  readonly tasks: Task[] | undefined;

  constructor(id: RequestIdentity, details: { timeoutMs: number; attempts: number; what?: string; detail?: string; tasks?: Task[] }) {
    const tries = details.attempts > 1 ? ` (${details.attempts} attempts)` : '';
    super(`${details.what ?? 'timed out'} after ${details.timeoutMs} ms${tries}${details.detail ? `: ${details.detail}` : ''}`, id);
    this.timeoutMs = details.timeoutMs;
    this.attempts = details.attempts;
    this.tasks = details.tasks;
  }
}

/** The connection failed (refused, reset, DNS...) after any retries. */
export class CloudNetworkError extends CloudError {
  /** The system or undici error code, e.g. `ECONNREFUSED`, `UND_ERR_SOCKET`. */
  readonly code: string;
  readonly attempts: number;

  constructor(id: RequestIdentity, details: { code: string; detail: string; attempts: number }, options?: { cause?: unknown }) {
    const tries = details.attempts > 1 ? ` after ${details.attempts} attempts` : '';
    super(`failed${tries}: ${details.code}${details.detail ? ` (${details.detail})` : ''}`, id, options);
    this.code = details.code;
    this.attempts = details.attempts;
  }
}

/** One or more awaited tasks ended in ERROR. */
export class CloudTaskError extends CloudError {
  /** The final record of every awaited task, in the order asked for. */
  readonly tasks: Task[];

  constructor(id: RequestIdentity, tasks: Task[], failed: Task[]) {
    const described = failed.map((t) => `task ${t.id} ERROR${t.error ? `: ${t.error}` : ''}`).join('; ');
    super(`reports ${failed.length} of ${tasks.length} awaited task(s) in ERROR: ${described}`, id);
    this.tasks = tasks;
  }
}

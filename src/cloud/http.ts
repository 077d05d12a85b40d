import { performance } from 'node:perf_hooks';
import { Agent, type Dispatcher } from 'undici';
import { ApiErrorBodySchema, type ApiErrorBody, type FieldProblem } from './schemas/index.js';
import { parseRetryAfterMs, retryDelayMs, sleep, type RetrySettings } from './backoff.js';
import {
  CloudApiError,
  CloudNetworkError,
  CloudResponseError,
  CloudResponseTooLargeError,
  CloudTimeoutError,
  oneLine,
  type RequestIdentity,
} from './errors.js';
import { endpointOf, fillPath, queryString, splitBaseUrl, type QueryValue, type Route } from './paths.js';
import { redactSecretsInPlace } from './raw.js';
import { readResponse } from './read-response.js';
import { Limiter } from '../limiter.js';

/** A pino-compatible logger (only these four methods are used). */
export interface CloudLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: CloudLogger = { debug() {}, info() {}, warn() {}, error() {} };

/** One attempt of one request, reported to `onRequest` (for metrics). */
export interface RequestEvent {
  method: string;
  /** Route template, e.g. `GET /cloud/v1/keypairs/{project_id}/{region_id}`. */
  endpoint: string;
  /** Path as sent, relative to the base URL, with the query string. */
  path: string;
  /** HTTP status, or null when no answer came (timeout, network error). */
  status: number | null;
  durationMs: number;
  /** 1 for the first attempt. */
  attempt: number;
  /** `retry`: this attempt failed and another follows; `error`: the request failed for good. */
  outcome: 'ok' | 'retry' | 'error';
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  /** Time for one attempt, from sending to the last byte of the body. */
  timeoutMs: number;
  /** Largest body of a list answer (one page) read; a larger one fails the request unread. */
  maxPageBytes: number;
  /** Largest body of any other answer (a record, a task, an error) read. */
  maxRecordBytes: number;
  maxConcurrency: number;
  retry: RetrySettings;
  logger: CloudLogger;
  onRequest?: ((event: RequestEvent) => void) | undefined;
  dispatcher?: Dispatcher | undefined;
}

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

export interface Call<T> {
  /** Client method name, for errors and logs. */
  operation: string;
  route: Route;
  params?: Record<string, string | number>;
  query?: Record<string, QueryValue>;
  body?: unknown;
  /** True when sending the request twice has the same effect as once: then it is retried on any transient failure. */
  idempotent: boolean;
  /** A list answer (one page), which may be as large as maxPageBytes; any other answer: maxRecordBytes. */
  page?: boolean;
  /** Turns the answer's JSON (secrets already redacted) into the result; absent for answers without a body. */
  decode?: (json: unknown) => DecodeResult<T>;
}

type AttemptResult =
  | { kind: 'response'; status: number; headers: Record<string, string | string[] | undefined>; text: string }
  /** A 2xx body over the limit: only its start was read. */
  | { kind: 'too_large'; status: number; limitBytes: number; limitName: string; head: string }
  /** `bodyBytes`: what had arrived of the body when time ran out (null: no answer yet). */
  | { kind: 'timeout'; bodyBytes: number | null }
  | { kind: 'network'; code: string; detail: string; cause: unknown };

/** Failures that prove the request never reached the server, so even a create may be sent again. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'EAI_AGAIN']);
/** The client itself was closed: retrying cannot help. */
const FATAL_CODES = new Set(['UND_ERR_CLOSED', 'UND_ERR_DESTROYED', 'CLIENT_CLOSED']);
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const RETRY_STATUSES = new Set([502, 503, 504]);
const EXCERPT_LENGTH = 200;
const SECRET_IN_TEXT = /("(?:user_data|password|private_key|encrypted_password)"\s*:\s*)"(?:[^"\\]|\\.)*(?:"|\\?$)/g;

function errorCode(err: unknown, depth = 0): string {
  if (typeof err === 'object' && err !== null && depth < 4) {
    const e = err as { code?: unknown; errors?: unknown; cause?: unknown };
    if (typeof e.code === 'string') return e.code;
    if (Array.isArray(e.errors)) {
      for (const inner of e.errors) {
        const code = errorCode(inner, depth + 1);
        if (code !== 'UNKNOWN') return code;
      }
    }
    if (e.cause !== undefined) return errorCode(e.cause, depth + 1);
  }
  return 'UNKNOWN';
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

interface Secret {
  authorization: string;
  key: string;
}
/** The key lives here, outside the transport object, so that no inspection of a client can reveal it. */
const secrets = new WeakMap<Transport, Secret>();

export class Transport {
  private readonly origin: string;
  private readonly prefix: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly limiter: Limiter;
  private readonly options: Omit<TransportOptions, 'apiKey' | 'dispatcher'>;
  private closed = false;

  constructor(options: TransportOptions) {
    const { apiKey, dispatcher, ...rest } = options;
    this.options = rest;
    const { origin, prefix } = splitBaseUrl(options.baseUrl);
    this.origin = origin;
    this.prefix = prefix;
    this.limiter = new Limiter(options.maxConcurrency);
    this.ownsDispatcher = dispatcher === undefined;
    this.dispatcher =
      dispatcher ??
      new Agent({
        connections: options.maxConcurrency,
        keepAliveTimeout: 10_000,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
    secrets.set(this, { authorization: `apikey ${apiKey}`, key: apiKey });
  }

  private get secret(): Secret {
    const secret = secrets.get(this);
    if (!secret) throw new Error('transport without a key');
    return secret;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  async send<T>(call: Call<T>): Promise<T> {
    const { route } = call;
    const apiPath = fillPath(route.template, call.params) + queryString(call.query);
    const id: RequestIdentity = { operation: call.operation, method: route.method, path: apiPath, endpoint: endpointOf(route) };
    const bodyText = call.body === undefined ? undefined : JSON.stringify(call.body);
    const { maxAttempts } = this.options.retry;

    for (let attempt = 1; ; attempt++) {
      // Timed from the moment a concurrency slot is held, so queueing does not count as latency.
      let durationMs = 0;
      const result: AttemptResult = this.closed
        ? { kind: 'network', code: 'CLIENT_CLOSED', detail: 'the cloud client was closed', cause: undefined }
        : await this.limiter.run(async () => {
            const started = performance.now();
            try {
              return await this.attemptOnce(route, this.prefix + apiPath, bodyText, call.page === true);
            } finally {
              durationMs = performance.now() - started;
            }
          });
      const status = result.kind === 'response' || result.kind === 'too_large' ? result.status : null;
      const event = (outcome: RequestEvent['outcome']) =>
        this.report({ method: route.method, endpoint: id.endpoint, path: apiPath, status, durationMs, attempt, outcome });

      if (result.kind === 'response' && isSuccess(result.status)) {
        try {
          const value = this.decode(call, id, result.status, result.text);
          event('ok');
          return value;
        } catch (err) {
          event('error');
          throw err;
        }
      }

      const retryAfterMs = result.kind === 'response' ? parseRetryAfterMs(result.headers['retry-after']) : null;
      if (attempt < maxAttempts && this.mayRetry(result, call.idempotent)) {
        event('retry');
        const delayMs = retryDelayMs(attempt, retryAfterMs, this.options.retry);
        this.options.logger.warn(
          {
            operation: id.operation,
            method: id.method,
            endpoint: id.endpoint,
            path: apiPath,
            status,
            code: result.kind === 'network' ? result.code : result.kind === 'timeout' ? 'TIMEOUT' : undefined,
            attempt,
            delayMs,
          },
          'cloud API request failed, retrying',
        );
        await sleep(delayMs);
        continue;
      }

      event('error');
      throw this.failure(id, result, attempt, retryAfterMs, call.idempotent);
    }
  }

  private mayRetry(result: AttemptResult, idempotent: boolean): boolean {
    switch (result.kind) {
      case 'response':
        // 429 means the server refused to process the request: safe to repeat even for creates.
        return result.status === 429 || (idempotent && RETRY_STATUSES.has(result.status));
      case 'too_large':
        // The same request gets the same answer: asking again only reads it again.
        return false;
      case 'timeout':
        return idempotent;
      case 'network':
        return !FATAL_CODES.has(result.code) && (idempotent || NOT_SENT_CODES.has(result.code));
    }
  }

  private async attemptOnce(route: Route, fullPath: string, bodyText: string | undefined, page: boolean): Promise<AttemptResult> {
    const { timeoutMs, maxPageBytes, maxRecordBytes } = this.options;
    const headers: Record<string, string> = {
      authorization: this.secret.authorization,
      accept: 'application/json',
      'user-agent': 'cloudtally',
    };
    if (bodyText !== undefined) headers['content-type'] = 'application/json';
    const exchange = await readResponse(
      this.dispatcher,
      { origin: this.origin, path: fullPath, method: route.method, headers, body: bodyText ?? null, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
      {
        timeoutMs,
        limitOf: (status) => (page && isSuccess(status) ? maxPageBytes : maxRecordBytes),
        // The head must hold what excerpt() looks at in characters of up to 4 bytes, a key included, to scrub it.
        headBytes: 4 * (EXCERPT_LENGTH * 2 + this.secret.key.length),
      },
    );
    if (exchange.kind === 'timeout') return exchange;
    if (exchange.kind === 'error') {
      const code = errorCode(exchange.error);
      if (TIMEOUT_CODES.has(code)) return { kind: 'timeout', bodyBytes: exchange.bodyBytes };
      return { kind: 'network', code, detail: this.scrub(oneLine(exchange.error.message)).slice(0, EXCERPT_LENGTH), cause: exchange.error };
    }
    const { status, body } = exchange;
    if (body.complete) return { kind: 'response', status, headers: exchange.headers, text: body.text };
    // An error answer is judged by its status; its start is all an error message quotes.
    if (!isSuccess(status)) return { kind: 'response', status, headers: exchange.headers, text: body.head };
    const [limitBytes, limitName] = page ? [maxPageBytes, 'client.max_page_bytes'] : [maxRecordBytes, 'client.max_record_bytes'];
    return { kind: 'too_large', status, limitBytes, limitName, head: body.head };
  }

  private decode<T>(call: Call<T>, id: RequestIdentity, status: number, text: string): T {
    if (!call.decode) return undefined as T;
    const reject = (problems: FieldProblem[]) => new CloudResponseError(id, { status, problems, excerpt: this.excerpt(text) });
    if (text.trim() === '') throw reject([{ field: '(body)', message: 'empty body where JSON was expected' }]);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw reject([{ field: '(body)', message: `not JSON (${err instanceof Error ? err.message : String(err)})` }]);
    }
    redactSecretsInPlace(json);
    const decoded = call.decode(json);
    if (!decoded.ok) throw reject(decoded.problems);
    return decoded.value;
  }

  private failure(
    id: RequestIdentity,
    result: AttemptResult,
    attempts: number,
    retryAfterMs: number | null,
    idempotent: boolean,
  ): Error {
    switch (result.kind) {
      case 'timeout':
        if (result.bodyBytes === null) return new CloudTimeoutError(id, { timeoutMs: this.options.timeoutMs, attempts });
        return new CloudTimeoutError(id, {
          timeoutMs: this.options.timeoutMs,
          attempts,
          what: 'timed out reading the body',
          detail: `${result.bodyBytes} bytes had arrived; an answer must arrive whole within client.timeout_ms`,
        });
      case 'too_large':
        return new CloudResponseTooLargeError(id, { status: result.status, limitBytes: result.limitBytes, limitName: result.limitName, excerpt: this.excerpt(result.head) });
      case 'network': {
        const unsure = !idempotent && !NOT_SENT_CODES.has(result.code) && !FATAL_CODES.has(result.code);
        const detail = unsure ? `${result.detail}; the request may have been processed, so it was not resent` : result.detail;
        return new CloudNetworkError(id, { code: result.code, detail, attempts }, { cause: result.cause });
      }
      case 'response': {
        const body = this.errorBody(result.text);
        return new CloudApiError(id, {
          status: result.status,
          body,
          bodyExcerpt: body === null && result.text.trim() !== '' ? this.excerpt(result.text) : null,
          retryAfterMs,
          attempts,
        });
      }
    }
  }

  private errorBody(text: string): ApiErrorBody | null {
    try {
      const json: unknown = JSON.parse(this.scrub(text));
      redactSecretsInPlace(json);
      const parsed = ApiErrorBodySchema.safeParse(json);
      return parsed.success ? parsed.data : null;
    } catch {
      return null; // not JSON: the caller quotes an excerpt instead
    }
  }

  /** The start of a body, one line, without the API key or secret field values. */
  private excerpt(text: string): string {
    const head = text.slice(0, EXCERPT_LENGTH * 2 + this.secret.key.length);
    return this.scrub(head).replace(SECRET_IN_TEXT, '$1"[redacted]"').slice(0, EXCERPT_LENGTH);
  }

  private scrub(text: string): string {
    return text.split(this.secret.key).join('[redacted]');
  }

  private report(event: RequestEvent): void {
    this.options.logger.debug(event, 'cloud API request');
    if (!this.options.onRequest) return;
    try {
      this.options.onRequest(event);
    } catch (err) {
      this.options.logger.warn(
        { endpoint: event.endpoint, error: err instanceof Error ? err.message : String(err) },
        'onRequest hook threw; the request itself is unaffected',
      );
    }
  }
}

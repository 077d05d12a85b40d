/**
 * One HTTP exchange through undici's dispatch interface: status, headers and the body collected
 * straight from the handler's callbacks. `dispatcher.request()` wraps the same exchange in a
 * Readable stream, an AbortSignal and an async iterator per request; measured here that doubled
 * the client's CPU per request (~60 against ~30 µs), which the ports collector pays once per
 * instance.
 */
import type { Dispatcher } from 'undici';

export type BodyRead = { complete: true; text: string } | { complete: false; head: string };

export type Exchange =
  | { kind: 'read'; status: number; headers: Record<string, string | string[] | undefined>; body: BodyRead }
  /** `bodyBytes`: what had arrived of the body when time ran out (null: no answer yet). */
  | { kind: 'timeout'; bodyBytes: number | null }
  /** `bodyBytes` as for a timeout (undici's own headers and body timeouts end here, by their error codes). */
  | { kind: 'error'; error: Error; bodyBytes: number | null };

export interface ExchangeLimits {
  /** Time for the whole exchange, from sending to the last byte of the body. */
  timeoutMs: number;
  /** Largest body read for an answer of this status; a larger one stops being read (see readResponse). */
  limitOf(status: number): number;
  /** What is kept of a body over its limit, for an excerpt. */
  headBytes: number;
}

/**
 * Sends the request and reads the answer until its end or until more than the status's limit
 * came (or a Content-Length says it will): then it aborts the exchange (the connection is not
 * reused) and keeps only the first `headBytes` of the body, for an excerpt. Never rejects.
 */
export function readResponse(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, limits: ExchangeLimits): Promise<Exchange> {
  return new Promise((resolve) => {
    const handler = new ExchangeHandler(limits, resolve);
    try {
      dispatcher.dispatch(options, handler);
    } catch (err) {
      handler.fail(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

const OVER_LIMIT = new Error('the answer is larger than its limit: not read further');

class ExchangeHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private readonly timer: NodeJS.Timeout;
  private settled = false;
  private timedOut = false;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> = {};
  private limit = 0;
  private stopAfter = 0;
  /** Bytes of the body so far; null until the answer's headers came. */
  private bytes: number | null = null;
  private readonly chunks: Buffer[] = [];

  constructor(
    private readonly limits: ExchangeLimits,
    private readonly resolve: (exchange: Exchange) => void,
  ) {
    // Bounds the body's reading too (a trickle that never ends), not only the wait for headers.
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.settle({ kind: 'timeout', bodyBytes: this.bytes });
      this.controller?.abort(new Error(`no complete answer within ${limits.timeoutMs} ms`));
    }, limits.timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Time ran out while the request waited for a connection.
    if (this.settled) controller.abort(new Error('the exchange had already ended'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: Record<string, string | string[] | undefined>): void {
    if (status < 200) return; // 1xx: informational, the answer follows
    this.status = status;
    this.headers = headers;
    this.limit = this.limits.limitOf(status);
    const contentLength = headers['content-length'];
    const declared = typeof contentLength === 'string' && /^\d+$/.test(contentLength) ? Number(contentLength) : null;
    this.stopAfter = declared !== null && declared > this.limit ? this.limits.headBytes : this.limit;
    this.bytes = 0;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.bytes! += chunk.length;
    if (this.bytes! > this.stopAfter) {
      // Settled first: aborting calls onResponseError at once.
      this.settle({ kind: 'read', status: this.status, headers: this.headers, body: { complete: false, head: utf8(this.chunks, this.limits.headBytes) } });
      controller.abort(OVER_LIMIT);
    }
  }

  onResponseEnd(): void {
    const body: BodyRead =
      this.stopAfter !== this.limit
        ? { complete: false, head: utf8(this.chunks, this.limits.headBytes) }
        : { complete: true, text: utf8(this.chunks, this.bytes ?? 0) };
    this.settle({ kind: 'read', status: this.status, headers: this.headers, body });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  fail(error: Error): void {
    this.settle(this.timedOut ? { kind: 'timeout', bodyBytes: this.bytes } : { kind: 'error', error, bodyBytes: this.bytes });
  }

  private settle(exchange: Exchange): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(exchange);
  }
}

/** The first `bytes` of the chunks as UTF-8 text, without a byte order mark (as undici's text()). */
function utf8(chunks: readonly Buffer[], bytes: number): string {
  const taken: Buffer[] = [];
  let length = 0;
  for (const chunk of chunks) {
    if (length >= bytes) break;
    const part = length + chunk.length > bytes ? chunk.subarray(0, bytes - length) : chunk;
    taken.push(part);
    length += part.length;
  }
  if (taken.length === 0) return '';
  const buffer = taken.length === 1 ? taken[0]! : Buffer.concat(taken, length);
  const start = buffer.length >= 3 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start);
}

import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSimulatorOwnPath, type FaultController, type FaultPlan, type RandomFaultSettings } from '../faults.js';
import type { SimState } from '../state.js';
import { faultCode, HttpError } from './errors.js';
import type { Router } from './router.js';
import type { Reply, RouteContext } from './types.js';

/** Runtime knobs the server reads on every request (setOptions changes them). */
export interface ServerSettings extends RandomFaultSettings {
  latencyMs: number;
  legacy: boolean;
}

export interface RequestLogEntry {
  method: string;
  path: string;
  status: number;
}

export interface ServerDeps {
  router: Router;
  state: SimState;
  faults: FaultController;
  settings: ServerSettings;
  apiKey: string;
  requestLog: RequestLogEntry[];
}

export const MAX_BODY_BYTES = 1024 * 1024;
const GARBAGE_BODY = '<html><head><title>502 Bad Gateway</title></head><body>upstream sent an invalid response</body></html>';

/**
 * One request: faults first (as a gateway in front of the API would), then route, auth, body,
 * validation and the handler. Every answer is JSON with the error body shape for non-2xx.
 */
export function createRequestListener(deps: ServerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(deps, req, res).catch((error: unknown) => {
      // Only reached when writing itself failed (e.g. the client went away): nothing left to answer.
      if (!res.headersSent && !res.destroyed) writeError(res, new HttpError(500, 'internal', describe(error)));
    });
  };
}

async function handle(deps: ServerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = (req.method ?? 'GET').toUpperCase();
  const url = new URL(req.url ?? '/', 'http://simulator.local');
  const path = url.pathname;
  const log = (status: number) => deps.requestLog.push({ method, path, status });
  const plan = deps.faults.plan(method, path, deps.settings);

  if (plan.reset) {
    log(0);
    req.socket.destroy();
    return;
  }
  const delay = (isSimulatorOwnPath(path) ? 0 : deps.settings.latencyMs) + plan.delayMs;
  if (delay > 0) await sleep(delay);

  let reply: Reply;
  try {
    const raw = await readBody(req);
    reply = await answer(deps, { method, path, url, raw, authorization: req.headers.authorization, plan });
  } catch (error) {
    reply = errorReply(error);
  }

  if (plan.garbage) {
    log(200);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(GARBAGE_BODY) });
    res.end(GARBAGE_BODY);
    return;
  }
  log(reply.status);
  writeReply(res, reply, plan.truncate);
}

interface RequestFacts {
  method: string;
  path: string;
  url: URL;
  raw: Buffer;
  authorization: string | undefined;
  plan: FaultPlan;
}

async function answer(deps: ServerDeps, facts: RequestFacts): Promise<Reply> {
  if (facts.plan.status) {
    const { status, retryAfterSeconds } = facts.plan.status;
    const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
    const message = status === 429 ? 'too many requests, retry later' : `simulated fault: status ${status}`;
    throw new HttpError(status, faultCode(status), message, undefined, headers);
  }
  let match;
  try {
    match = deps.router.match(facts.method, facts.path);
  } catch {
    throw new HttpError(400, 'validation_failed', 'malformed percent-encoding in the path', [
      { field: 'path', message: 'malformed percent-encoding' },
    ]);
  }
  if (!(match.kind === 'found' && match.public)) checkAuth(facts.authorization, deps.apiKey);
  if (match.kind === 'none') throw new HttpError(404, 'not_found', `no such endpoint: ${facts.method} ${facts.path}`);
  if (match.kind === 'wrong_method') {
    throw new HttpError(405, 'method_not_allowed', `${facts.method} is not allowed on ${facts.path}; allowed: ${match.allowed.join(', ')}`, undefined, {
      allow: match.allowed.join(', '),
    });
  }
  const ctx: RouteContext = {
    method: facts.method,
    path: facts.path,
    params: match.params,
    query: Object.fromEntries(facts.url.searchParams),
    body: parseJsonBody(facts.raw),
    state: deps.state,
    legacy: deps.settings.legacy,
  };
  deps.state.settle();
  return await match.handler(ctx);
}

/** `Authorization: apikey <key>`, the scheme compared case-insensitively (SDKs send `APIKey`). */
function checkAuth(header: string | undefined, apiKey: string): void {
  if (header === undefined || header.trim() === '') throw new HttpError(401, 'unauthorized', 'missing Authorization header');
  const m = /^(\S+)\s+(\S.*)$/.exec(header.trim());
  if (!m || (m[1] ?? '').toLowerCase() !== 'apikey') {
    throw new HttpError(401, 'unauthorized', 'Authorization must be "apikey <key>"');
  }
  const given = Buffer.from(m[2] ?? '', 'utf8');
  const expected = Buffer.from(apiKey, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new HttpError(401, 'unauthorized', 'API key not accepted');
  }
}

function parseJsonBody(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, 'invalid_json', `request body is not valid JSON: ${describe(error)}`);
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'payload_too_large', `request body larger than ${MAX_BODY_BYTES} bytes`, undefined, { connection: 'close' });
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function errorReply(error: unknown): Reply {
  const httpError = error instanceof HttpError ? error : new HttpError(500, 'internal', `internal simulator error: ${describe(error)}`);
  return { status: httpError.status, body: httpError.body(), headers: httpError.headers };
}

function writeError(res: ServerResponse, error: HttpError): void {
  writeReply(res, { status: error.status, body: error.body(), headers: error.headers }, false);
}

/** Writes the reply; `truncate` sends half the body under the full Content-Length and closes the socket. */
function writeReply(res: ServerResponse, reply: Reply, truncate: boolean): void {
  const headers: Record<string, string | number> = { ...(reply.headers ?? {}) };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  const payload = Buffer.from(JSON.stringify(reply.body), 'utf8');
  headers['content-type'] = 'application/json; charset=utf-8';
  headers['content-length'] = payload.length;
  res.writeHead(reply.status, headers);
  if (truncate) {
    res.write(payload.subarray(0, Math.floor(payload.length / 2)), () => res.destroy());
    return;
  }
  res.end(payload);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

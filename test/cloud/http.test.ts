/**
 * The retry loop of the transport (src/cloud/http.ts) against a real loopback HTTP server
 * (node:http, helpers/test-server.ts): a 429 with Retry-After, 5xx answers and a reset connection
 * in one request; the waits it keeps between attempts; what it does not retry; and the error it
 * throws when it gives up (operation, method, path as sent, status, attempts), which never holds
 * the API key. Each failure on its own, POST safety, timeouts and bodies: transport.test.ts.
 */
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { CloudApiError, CloudNetworkError, createCloudClient, type CloudClientOptions, type RequestEvent } from '../../src/cloud/index.js';
import { keypairList, sendJson, startTestServer, type Handler, type TestServer } from './helpers/test-server.js';

const API_KEY = 'sk-HTTP-TEST-4u9q2w-NEVER-IN-ERRORS';

let server: TestServer | undefined;
const clients: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

async function setup(handler: Handler, options: Partial<CloudClientOptions> = {}) {
  server = await startTestServer(handler);
  const events: RequestEvent[] = [];
  const warnings: Array<Record<string, unknown>> = [];
  const client = createCloudClient({
    baseUrl: server.url,
    apiKey: API_KEY,
    retry: { maxAttempts: 5, baseDelayMs: 5, maxDelayMs: 1_000 },
    logger: { debug() {}, info() {}, warn: (obj) => void warnings.push(obj as Record<string, unknown>), error() {} },
    onRequest: (e) => events.push(e),
    ...options,
  });
  clients.push(client);
  return { server, client, events, warnings };
}

async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** Every way an error can be shown or stored. */
function renderings(err: Error): string[] {
  return [String(err), err.message, err.stack ?? '', inspect(err, { showHidden: true, depth: Infinity }), JSON.stringify(err)];
}

/** Milliseconds between the arrivals of consecutive requests. */
function gaps(requests: TestServer['requests']): number[] {
  return requests.slice(1).map((r, i) => r.at - requests[i]!.at);
}

/** Date.now() counts whole milliseconds and a timer may fire a hair early: a wait of d shows as at least d - 2. */
const SLACK_MS = 2;

describe('one GET through every transient failure', () => {
  it('retries 429, 503, 502, 504 and a reset connection, then returns the answer', async () => {
    const { client, server, events, warnings } = await setup(
      (_req, res, i) => {
        if (i === 0) sendJson(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '0.3' });
        else if (i === 1) sendJson(res, 503, { code: 'unavailable' }, { 'retry-after': '0.1' });
        else if (i === 2) sendJson(res, 502, { code: 'bad_gateway' });
        else if (i === 3) sendJson(res, 504, { code: 'gateway_timeout' });
        else if (i === 4) res.socket?.destroy();
        else sendJson(res, 200, keypairList());
      },
      { retry: { maxAttempts: 6, baseDelayMs: 20, maxDelayMs: 1_000 } },
    );

    const list = await client.listKeypairs(1, 2);
    expect(list.results.map((k) => k.name)).toEqual(['deploy-key']);
    expect(server.requests).toHaveLength(6);
    expect(events.map((e) => [e.attempt, e.status, e.outcome])).toEqual([
      [1, 429, 'retry'],
      [2, 503, 'retry'],
      [3, 502, 'retry'],
      [4, 504, 'retry'],
      [5, null, 'retry'],
      [6, 200, 'ok'],
    ]);
    expect(new Set(events.map((e) => e.path))).toEqual(new Set(['/cloud/v1/keypairs/1/2']));

    // One warning per retry, with the wait it chose: Retry-After when given, else the jittered
    // backoff below min(maxDelayMs, baseDelayMs * 2^(attempt - 1)).
    expect(warnings.map((w) => [w.attempt, w.status])).toEqual([
      [1, 429],
      [2, 503],
      [3, 502],
      [4, 504],
      [5, null],
    ]);
    const delays = warnings.map((w) => w.delayMs as number);
    expect(delays.slice(0, 2)).toEqual([300, 100]);
    expect(delays[2]).toBeLessThan(20 * 2 ** 2);
    expect(delays[3]).toBeLessThan(20 * 2 ** 3);
    expect(delays[4]).toBeLessThan(20 * 2 ** 4);
    expect(warnings[4]!.code).toEqual(expect.any(String));
    expect(warnings[4]!.code).not.toBe('TIMEOUT');

    // The waits are kept: no attempt arrives before the chosen delay after the one before.
    gaps(server.requests).forEach((gap, i) => expect(gap, `gap after attempt ${i + 1}`).toBeGreaterThanOrEqual(delays[i]! - SLACK_MS));
  });

  it('caps a Retry-After longer than maxDelayMs at maxDelayMs', async () => {
    const { client, server, warnings } = await setup(
      (_req, res, i) => (i === 0 ? sendJson(res, 429, { code: 'rate_limited' }, { 'retry-after': '30' }) : sendJson(res, 200, keypairList())),
      { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 150 } },
    );
    await client.listKeypairs(1, 2);
    expect(warnings.map((w) => w.delayMs)).toEqual([150]);
    const [gap] = gaps(server.requests);
    expect(gap).toBeGreaterThanOrEqual(150 - SLACK_MS);
    expect(gap).toBeLessThan(5_000);
  });
});

describe('what is not retried', () => {
  it.each([500, 501, 505])('answers %i at once, even for a GET: only 429, 502, 503 and 504 are transient', async (status) => {
    const { client, server, events } = await setup((_req, res) => sendJson(res, status, { code: 'server_error', message: 'broken' }));
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudApiError);
    expect(err).toMatchObject({ status, attempts: 1 });
    expect(err.message).toBe(`listKeypairs: GET /cloud/v1/keypairs/1/2 answered ${status}: server_error: broken`);
    expect(server.requests).toHaveLength(1);
    expect(events.map((e) => e.outcome)).toEqual(['error']);
  });
});

describe('giving up', () => {
  it('after maxAttempts answers of 429: the status, the last Retry-After, the attempts and the request with its query', async () => {
    const { client, server, events } = await setup(
      (_req, res) => sendJson(res, 429, { code: 'rate_limited', message: `too many requests for key ${API_KEY}` }, { 'retry-after': '0.05' }),
      { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1_000 } },
    );
    const err = await caught(client.listStorageKeys({ limit: 5, offset: 10 }));
    expect(err).toBeInstanceOf(CloudApiError);
    const path = server.requests[0]!.url;
    expect(path).toMatch(/^\/storage\/provisioning\/v2\/key\?/);
    expect(new URLSearchParams(path.split('?')[1]).get('limit')).toBe('5');
    expect(new URLSearchParams(path.split('?')[1]).get('offset')).toBe('10');
    expect(err).toMatchObject({
      operation: 'listStorageKeys',
      method: 'GET',
      path,
      endpoint: 'GET /storage/provisioning/v2/key',
      status: 429,
      attempts: 3,
      retryAfterMs: 50,
      code: 'rate_limited',
    });
    expect(err.message).toBe(`listStorageKeys: GET ${path} answered 429 after 3 attempts: rate_limited: too many requests for key [redacted]`);
    expect(server.requests).toHaveLength(3);
    expect(events.map((e) => e.outcome)).toEqual(['retry', 'retry', 'error']);
    gaps(server.requests).forEach((gap) => expect(gap).toBeGreaterThanOrEqual(50 - SLACK_MS));
    for (const text of renderings(err)) expect(text).not.toContain(API_KEY);
  });

  it('after maxAttempts 5xx answers, with the status of the last one', async () => {
    const { client, server } = await setup(
      (_req, res, i) => {
        res.writeHead([502, 503, 504][i] ?? 500, { 'content-type': 'text/plain' });
        res.end(`upstream down (apikey ${API_KEY})`);
      },
      { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } },
    );
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudApiError);
    expect(err).toMatchObject({ method: 'GET', path: '/cloud/v1/keypairs/1/2', status: 504, attempts: 3, retryAfterMs: null, bodyExcerpt: 'upstream down (apikey [redacted])' });
    expect(err.message).toBe('listKeypairs: GET /cloud/v1/keypairs/1/2 answered 504 after 3 attempts: body "upstream down (apikey [redacted])"');
    expect(server.requests).toHaveLength(3);
    for (const text of renderings(err)) expect(text).not.toContain(API_KEY);
  });

  it('after maxAttempts reset connections, with a CloudNetworkError naming the request', async () => {
    const { client, server, events } = await setup((_req, res) => void res.socket?.destroy(), { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 } });
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudNetworkError);
    expect(err).toMatchObject({ operation: 'listKeypairs', method: 'GET', path: '/cloud/v1/keypairs/1/2', attempts: 3 });
    const { code } = err as CloudNetworkError;
    expect(code).not.toBe('UNKNOWN');
    expect(err.message.startsWith(`listKeypairs: GET /cloud/v1/keypairs/1/2 failed after 3 attempts: ${code}`)).toBe(true);
    expect(server.requests).toHaveLength(3);
    expect(events.map((e) => [e.status, e.outcome])).toEqual([
      [null, 'retry'],
      [null, 'retry'],
      [null, 'error'],
    ]);
    for (const text of renderings(err)) expect(text).not.toContain(API_KEY);
  });

  it('names the path relative to the base URL, without the base URL path prefix', async () => {
    const { server: started } = await setup((_req, res) => sendJson(res, 503, { code: 'unavailable' }));
    const events: RequestEvent[] = [];
    const client = createCloudClient({ baseUrl: `${started.url}/api/`, apiKey: API_KEY, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 }, onRequest: (e) => events.push(e) });
    clients.push(client);
    const err = await caught(client.listKeypairs(7, 8));
    expect(started.requests.map((r) => r.url)).toEqual(['/api/cloud/v1/keypairs/7/8', '/api/cloud/v1/keypairs/7/8']);
    expect(err).toMatchObject({ path: '/cloud/v1/keypairs/7/8', status: 503, attempts: 2 });
    expect(err.message).toBe('listKeypairs: GET /cloud/v1/keypairs/7/8 answered 503 after 2 attempts: unavailable');
    expect(events.map((e) => e.path)).toEqual(['/cloud/v1/keypairs/7/8', '/cloud/v1/keypairs/7/8']);
  });
});

import { createServer } from 'node:http';
import { inspect } from 'node:util';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CloudApiError,
  CloudError,
  CloudNetworkError,
  CloudResponseError,
  CloudResponseTooLargeError,
  CloudTimeoutError,
  CloudValidationError,
  createCloudClient,
  parseRetryAfterMs,
  type CloudClientOptions,
  type RequestEvent,
} from '../../src/cloud/index.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { delay, keypairList, sendJson, startTestServer, type Handler, type TestServer } from './helpers/test-server.js';

const API_KEY = 'sk-TEST-KEY-zq81x7-DO-NOT-LEAK';
const KEYPAIRS_ENDPOINT = 'GET /cloud/v1/keypairs/{project_id}/{region_id}';

const CLUSTER_BODY = {
  flavor: 'bm3-ai-1xlarge-h100-80-8',
  image_id: '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b',
  interfaces: [{ type: 'external' as const }],
  name: 'train-01',
};

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
  const logs: Array<{ level: string; obj: object; msg?: string }> = [];
  const log = (level: string) => (obj: object, msg?: string) => logs.push({ level, obj, msg });
  const client = createCloudClient({
    baseUrl: server.url,
    apiKey: API_KEY,
    retry: { baseDelayMs: 5, maxDelayMs: 50 },
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    onRequest: (e) => events.push(e),
    ...options,
  });
  clients.push(client);
  return { server, client, events, logs };
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

/** Every way an error can be shown or stored. */
function renderings(err: unknown): string[] {
  return [
    String(err),
    (err as Error).message,
    (err as Error).stack ?? '',
    inspect(err, { showHidden: true, depth: Infinity }),
    JSON.stringify(err),
  ];
}

async function freePort(): Promise<number> {
  const { port, close } = await listenOnFreePort(createServer());
  await close();
  return port;
}

describe('requests', () => {
  it('sends Authorization exactly as "apikey <key>" with JSON accept, and parses the answer', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 200, keypairList()));
    const list = await client.listKeypairs(1, 2);
    expect(list.count).toBe(1);
    expect(list.results[0]!.name).toBe('deploy-key');
    expect(server.requests[0]!.headers['authorization']).toBe(`apikey ${API_KEY}`);
    expect(server.requests[0]!.headers['accept']).toBe('application/json');
    expect(server.requests[0]!.url).toBe('/cloud/v1/keypairs/1/2');
  });

  it('joins a base URL carrying a path prefix, with or without trailing slash', async () => {
    const { server } = await setup((_req, res) => sendJson(res, 200, keypairList()));
    for (const base of [`${server.url}/api`, `${server.url}/api/`]) {
      const client = createCloudClient({ baseUrl: base, apiKey: API_KEY });
      clients.push(client);
      await client.listKeypairs(1, 2);
    }
    expect(server.requests.map((r) => r.url)).toEqual(['/api/cloud/v1/keypairs/1/2', '/api/cloud/v1/keypairs/1/2']);
  });

  it('URL-encodes path segments, dots included', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 200, { count: 0, results: [] }));
    await client.listInstancePorts(1, 2, 'a/b c?d');
    await client.listInstancePorts(1, 2, '..');
    expect(server.requests.map((r) => r.url)).toEqual([
      '/cloud/v1/instances/1/2/a%2Fb%20c%3Fd/ports',
      '/cloud/v1/instances/1/2/%2E%2E/ports',
    ]);
  });

  it('sends validated bodies as JSON and query parameters as text', async () => {
    const { client, server } = await setup((req, res) =>
      req.method === 'POST' ? sendJson(res, 201, { tasks: ['t-1'] }) : sendJson(res, 200, { count: 0, results: [] }),
    );
    const tasks = await client.createGpuCluster(1, 2, CLUSTER_BODY);
    expect(tasks.tasks).toEqual(['t-1']);
    expect(JSON.parse(server.requests[0]!.body)).toEqual(CLUSTER_BODY);
    expect(server.requests[0]!.headers['content-type']).toBe('application/json');
    await client.listGpuFlavors(1, 2, { include_prices: true, disabled: false });
    expect(server.requests[1]!.url).toBe('/cloud/v1/ai/flavors/1/2?disabled=false&include_prices=true');
  });

  it('treats 204 without a body as success for deletes', async () => {
    const { client, server } = await setup((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    await expect(client.deleteStorageKey(12)).resolves.toBeUndefined();
    expect(server.requests[0]).toMatchObject({ method: 'DELETE', url: '/storage/provisioning/v1/key/12' });
  });

  it('rejects invalid input before sending anything, naming every field', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 200, {}));
    const err = await caught(
      client.createGpuCluster(0, 2, { ...CLUSTER_BODY, name: '-bad', interfaces: [], user_data: 'x', username: 'u' }),
    );
    expect(err).toBeInstanceOf(CloudValidationError);
    const fields = (err as CloudValidationError).problems.map((p) => p.field);
    expect(fields).toEqual(expect.arrayContaining(['path.project_id', 'body.name', 'body.interfaces', 'body.user_data']));
    expect((err as CloudValidationError).message).toMatch(/^createGpuCluster: POST \/cloud\/v1\/ai\/clusters\/gpu\/\{project_id\}\/\{region_id\} rejected before sending: .*body\.name: must match/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries a GET on 503 and then succeeds', async () => {
    const { client, server, events, logs } = await setup((_req, res, i) =>
      i < 2 ? sendJson(res, 503, { code: 'unavailable', message: 'try later' }) : sendJson(res, 200, keypairList()),
    );
    const list = await client.listKeypairs(1, 2);
    expect(list.results).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
    expect(events.map((e) => [e.attempt, e.status, e.outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 503, 'retry'],
      [3, 200, 'ok'],
    ]);
    expect(events[0]!.endpoint).toBe(KEYPAIRS_ENDPOINT);
    const warnings = logs.filter((l) => l.level === 'warn');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]!.obj).toMatchObject({ method: 'GET', endpoint: KEYPAIRS_ENDPOINT, status: 503, attempt: 1 });
    expect(warnings[0]!.obj).toHaveProperty('delayMs');
  });

  it('honours Retry-After on 429', async () => {
    const { client, server } = await setup(
      (_req, res, i) =>
        i === 0
          ? sendJson(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'retry-after': '1' })
          : sendJson(res, 200, keypairList()),
      { retry: { baseDelayMs: 1, maxDelayMs: 5_000 } },
    );
    await client.listKeypairs(1, 2);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(900);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(parseRetryAfterMs('3', now)).toBe(3000);
    expect(parseRetryAfterMs('Mon, 01 Jan 2024 00:00:05 GMT', now)).toBe(5000);
    expect(parseRetryAfterMs('Sun, 31 Dec 2023 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs('soon', now)).toBeNull();
    expect(parseRetryAfterMs(undefined, now)).toBeNull();
  });

  it('gives up after maxAttempts with a CloudApiError carrying the status', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 503, { code: 'unavailable', message: 'down' }), {
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
    });
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudApiError);
    expect(err).toMatchObject({ status: 503, attempts: 3, code: 'unavailable', endpoint: KEYPAIRS_ENDPOINT, method: 'GET' });
    expect((err as Error).message).toBe('listKeypairs: GET /cloud/v1/keypairs/1/2 answered 503 after 3 attempts: unavailable: down');
    expect(server.requests).toHaveLength(3);
  });

  it('does not retry other client errors', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 404, { code: 'not_found', message: 'no such region' }));
    const err = await caught(client.listKeypairs(1, 99));
    expect(err).toMatchObject({ status: 404, attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('does not retry a POST on 503 (it may have been processed)', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 503, { code: 'unavailable', message: 'down' }));
    const err = await caught(client.createGpuCluster(1, 2, CLUSTER_BODY));
    expect(err).toBeInstanceOf(CloudApiError);
    expect((err as CloudApiError).status).toBe(503);
    expect(server.requests).toHaveLength(1);
  });

  it('retries a POST on 429, which proves it was not processed', async () => {
    const { client, server } = await setup((_req, res, i) =>
      i === 0 ? sendJson(res, 429, { code: 'rate_limited' }, { 'retry-after': '0' }) : sendJson(res, 200, { tasks: ['t-9'] }),
    );
    await expect(client.createGpuCluster(1, 2, CLUSTER_BODY)).resolves.toMatchObject({ tasks: ['t-9'] });
    expect(server.requests).toHaveLength(2);
  });

  it('does not resend a POST whose connection was reset after sending', async () => {
    const { client, server } = await setup((req, res) => {
      void req;
      res.socket?.destroy();
    });
    const err = await caught(client.createLbPool(1, 2, { name: 'pool-1', lb_algorithm: 'ROUND_ROBIN', protocol: 'HTTP' }));
    expect(err).toBeInstanceOf(CloudNetworkError);
    expect(server.requests).toHaveLength(1);
  });

  it('retries stopInstance on 503 like a GET: stopping twice is a no-op', async () => {
    const { client, server } = await setup((_req, res, i) =>
      i === 0
        ? sendJson(res, 503, { code: 'unavailable' })
        : sendJson(res, 200, { count: 1, results: [{ id: 'i-1', status: 'SHUTOFF', vm_state: 'stopped' }] }),
    );
    const stopped = await client.stopInstance(1, 2, 'i-1');
    expect(stopped.results[0]).toMatchObject({ id: 'i-1', status: 'SHUTOFF' });
    expect(server.requests.map((r) => r.method)).toEqual(['POST', 'POST']);
  });

  it('fails fast once the client is closed', async () => {
    const { client, server } = await setup((_req, res) => sendJson(res, 200, keypairList()));
    await client.listKeypairs(1, 2);
    await client.close();
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudNetworkError);
    expect(err).toMatchObject({ code: 'CLIENT_CLOSED', attempts: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it('retries a GET whose connection was reset', async () => {
    const { client, server } = await setup((_req, res, i) => {
      if (i === 0) res.socket?.destroy();
      else sendJson(res, 200, keypairList());
    });
    await expect(client.listKeypairs(1, 2)).resolves.toMatchObject({ count: 1 });
    expect(server.requests).toHaveLength(2);
  });

  it('retries even a POST when the connection is refused, then fails with the code', async () => {
    const port = await freePort();
    const events: RequestEvent[] = [];
    const client = createCloudClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: API_KEY,
      retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 },
      onRequest: (e) => events.push(e),
    });
    clients.push(client);
    const err = await caught(client.createGpuCluster(1, 2, CLUSTER_BODY));
    expect(err).toBeInstanceOf(CloudNetworkError);
    expect(err).toMatchObject({ code: 'ECONNREFUSED', attempts: 3 });
    expect(events.map((e) => e.outcome)).toEqual(['retry', 'retry', 'error']);
    for (const text of renderings(err)) expect(text).not.toContain(API_KEY);
  });
});

describe('timeouts', () => {
  it('times out each attempt and retries a GET, then throws CloudTimeoutError', async () => {
    const { client, server } = await setup(
      async (_req, res) => {
        await delay(400);
        sendJson(res, 200, keypairList());
      },
      { timeoutMs: 60, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    );
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudTimeoutError);
    expect(err).toMatchObject({ timeoutMs: 60, attempts: 2, endpoint: KEYPAIRS_ENDPOINT });
    expect(server.requests).toHaveLength(2);
  });

  it('does not resend a POST that timed out', async () => {
    const { client, server } = await setup(
      async (_req, res) => {
        await delay(400);
        sendJson(res, 200, { tasks: [] });
      },
      { timeoutMs: 60 },
    );
    const err = await caught(client.createGpuCluster(1, 2, CLUSTER_BODY));
    expect(err).toBeInstanceOf(CloudTimeoutError);
    expect(server.requests).toHaveLength(1);
  });

  it('covers a body that stalls after the headers', async () => {
    const { client } = await setup(
      async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"count": 1, "results": [');
        await delay(400);
        res.end(']}');
      },
      { timeoutMs: 80, retry: { maxAttempts: 1 } },
    );
    await expect(client.listKeypairs(1, 2)).rejects.toBeInstanceOf(CloudTimeoutError);
  });
});

describe('response bodies', () => {
  it('rejects a non-JSON body with an error naming the operation and endpoint', async () => {
    const { client, events } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>gateway says hi</html>');
    });
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudResponseError);
    const e = err as CloudResponseError;
    expect(e.endpoint).toBe(KEYPAIRS_ENDPOINT);
    expect(e.operation).toBe('listKeypairs');
    expect(e.excerpt).toBe('<html>gateway says hi</html>');
    expect(e.message).toMatch(/^listKeypairs: GET \/cloud\/v1\/keypairs\/1\/2 answered 200 with an unusable body: \(body\): not JSON/);
    expect(events.map((ev) => ev.outcome)).toEqual(['error']);
  });

  it('rejects JSON cut short under a matching Content-Length as not JSON', async () => {
    const { client, server } = await setup((_req, res) => {
      const text = JSON.stringify(keypairList()).slice(0, 40);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    });
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudResponseError);
    expect((err as Error).message).toMatch(/not JSON/);
    expect(server.requests).toHaveLength(1); // a broken body is not a transient failure: not retried
  });

  it('rejects a wrong envelope, naming the problem', async () => {
    const { client } = await setup((_req, res) => sendJson(res, 200, { items: [] }));
    const err = await caught(client.listKeypairs(1, 2));
    expect(err).toBeInstanceOf(CloudResponseError);
    expect((err as CloudResponseError).problems.map((p) => p.field)).toContain('results');
  });

  it('rejects a record without an identifier', async () => {
    const { client } = await setup((_req, res) => sendJson(res, 200, { count: 1, results: [{ name: 'x' }] }));
    const err = await caught(client.listKeypairs(1, 2));
    expect((err as CloudResponseError).problems.map((p) => p.field)).toContain('results[0].id');
  });

  it('rejects an empty 200 body where JSON is expected', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200);
      res.end();
    });
    await expect(client.listKeypairs(1, 2)).rejects.toThrow(/empty body/);
  });

  it('parses the error body of a 400 into the error', async () => {
    const { client } = await setup((_req, res) =>
      sendJson(res, 400, {
        code: 'validation_failed',
        message: 'invalid request',
        errors: [{ field: 'body.name', message: 'too long' }],
      }),
    );
    const err = (await caught(client.createStorageKey({ key: 'ssh-ed25519 AAAA', name: 'k' }))) as CloudApiError;
    expect(err.body?.errors).toEqual([{ field: 'body.name', message: 'too long' }]);
    expect(err.message).toContain('body.name: too long');
    expect(err.bodyExcerpt).toBeNull();
  });

  it('quotes a non-JSON error body as an excerpt', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(502);
      res.end('Bad Gateway from the proxy');
    });
    const err = (await caught(client.createStorageKey({ key: 'k', name: 'n' }))) as CloudApiError;
    expect(err.status).toBe(502);
    expect(err.bodyExcerpt).toBe('Bad Gateway from the proxy');
  });
});

describe('size and time bounds of an answer', () => {
  /** Writes `total` bytes of a keypair list's start and spaces as fast as the client takes them. */
  const endless = (total: number, contentLength: boolean) => async (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'application/json', ...(contentLength ? { 'content-length': String(total) } : {}) });
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let sent = 0;
    res.write(`{"count": 1, "results": [ ${API_KEY} `);
    while (sent < total && !res.destroyed) {
      if (!res.write(chunk)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
      sent += chunk.length;
    }
    res.end();
  };

  for (const contentLength of [false, true]) {
    it(`stops reading a page past max_page_bytes and fails it once, naming method, path and limit (${contentLength ? 'Content-Length' : 'chunked'})`, async () => {
      const { client, server, events } = await setup(endless(64 * 1024 * 1024, contentLength), { maxPageBytes: 1024 * 1024 });
      const started = Date.now();
      const err = await caught(client.listKeypairs(1, 2));
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(err).toBeInstanceOf(CloudResponseTooLargeError);
      expect(err).toBeInstanceOf(CloudResponseError);
      expect((err as CloudResponseTooLargeError).limitBytes).toBe(1024 * 1024);
      expect((err as Error).message).toMatch(
        /^listKeypairs: GET \/cloud\/v1\/keypairs\/1\/2 answered 200 with an unusable body: \(body\): larger than the limit of 1048576 bytes \(client\.max_page_bytes\); reading stopped there; body starts "\{\\"count\\": 1, \\"results\\": \[ \[redacted\]/,
      );
      expect((err as Error).message.length).toBeLessThan(600);
      for (const text of renderings(err)) expect(text).not.toContain(API_KEY);
      // The same request gets the same answer: not asked again.
      expect(server.requests).toHaveLength(1);
      expect(events.map((e) => e.outcome)).toEqual(['error']);
    });
  }

  it('bounds any other answer by max_record_bytes, and an error answer is judged by its status', async () => {
    const { client } = await setup(
      (req, res) => {
        if (req.url.startsWith('/v1/tasks/')) return void endless(4 * 1024 * 1024, false)(req, res);
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('x'.repeat(4 * 1024 * 1024));
      },
      { maxPageBytes: 8 * 1024 * 1024, maxRecordBytes: 64 * 1024, retry: { maxAttempts: 1 } },
    );
    const task = await caught(client.getTask('3a1b2c3d-0000-4000-8000-000000000001'));
    expect(task).toBeInstanceOf(CloudResponseTooLargeError);
    expect((task as Error).message).toContain('larger than the limit of 65536 bytes (client.max_record_bytes)');
    const failed = await caught(client.listKeypairs(1, 2));
    expect(failed).toBeInstanceOf(CloudApiError);
    expect((failed as CloudApiError).status).toBe(503);
    expect((failed as CloudApiError).bodyExcerpt).toHaveLength(200);
  });

  it('ends a body that trickles forever at the attempt timeout, saying how much had arrived', async () => {
    const { client, server } = await setup(
      async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"count": 1, "results": [');
        while (!res.destroyed) {
          res.write(' ');
          await delay(20);
        }
      },
      { timeoutMs: 500, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } },
    );
    const started = Date.now();
    const err = await caught(client.listKeypairs(1, 2));
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(err).toBeInstanceOf(CloudTimeoutError);
    expect((err as Error).message).toMatch(
      /^listKeypairs: GET \/cloud\/v1\/keypairs\/1\/2 timed out reading the body after 500 ms \(2 attempts\): \d+ bytes had arrived; an answer must arrive whole within client\.timeout_ms$/,
    );
    expect(server.requests).toHaveLength(2);
  });
});

describe('concurrency', () => {
  it('never has more than maxConcurrency requests in flight', async () => {
    const { client, server } = await setup(
      async (_req, res) => {
        await delay(30);
        sendJson(res, 200, keypairList());
      },
      { maxConcurrency: 3 },
    );
    const results = await Promise.all(Array.from({ length: 10 }, () => client.listKeypairs(1, 2)));
    expect(results).toHaveLength(10);
    expect(server.requests).toHaveLength(10);
    expect(server.maxInFlight()).toBe(3);
  });

  it('limits in-flight requests itself, even over a dispatcher without a connection limit', async () => {
    const unbounded = new Agent();
    try {
      const { client, server } = await setup(
        async (req, res) => {
          await delay(30);
          if (req.url.startsWith('/v1/tasks/')) sendJson(res, 200, { id: req.url.split('/').pop(), state: 'FINISHED' });
          else sendJson(res, 200, keypairList());
        },
        { maxConcurrency: 3, dispatcher: unbounded },
      );
      await Promise.all([
        ...Array.from({ length: 6 }, () => client.listKeypairs(1, 2)),
        client.waitForTasks(['t1', 't2', 't3', 't4']), // task polls share the same limit
      ]);
      expect(server.requests).toHaveLength(10);
      expect(server.maxInFlight()).toBe(3);
    } finally {
      await unbounded.close();
    }
  });
});

describe('the API key never leaks', () => {
  it('is absent from every error rendering, log entry and the client object', async () => {
    const { client, logs } = await setup(
      (req, res) => {
        if (req.url.includes('/keypairs/1/')) {
          // A server that echoes the key it was given.
          sendJson(res, 401, { code: 'unauthorized', message: `key ${API_KEY} is not valid` });
        } else if (req.url.includes('/keypairs/2/')) {
          res.writeHead(200);
          res.end(`not json, but here is your key: ${API_KEY}`);
        } else if (req.url.includes('/keypairs/3/')) {
          res.writeHead(503);
          res.end(`down; auth was apikey ${API_KEY}`);
        } else {
          res.socket?.destroy();
        }
      },
      { retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } },
    );
    const errors = [
      await caught(client.listKeypairs(1, 1)),
      await caught(client.listKeypairs(2, 1)),
      await caught(client.listKeypairs(3, 1)),
      await caught(client.listKeypairs(4, 1)),
      await caught(client.createGpuCluster(1, 1, { ...CLUSTER_BODY, name: '' })),
    ];
    expect(errors.map((e) => (e as Error).constructor.name)).toEqual([
      'CloudApiError',
      'CloudResponseError',
      'CloudApiError',
      'CloudNetworkError',
      'CloudValidationError',
    ]);
    expect((errors[0] as CloudApiError).status).toBe(401);
    expect((errors[0] as CloudApiError).message).toContain('[redacted]');
    for (const err of errors) {
      expect(err).toBeInstanceOf(CloudError);
      for (const text of renderings(err)) expect(text).not.toContain(API_KEY);
    }
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain(API_KEY);
    expect(inspect(client, { showHidden: true, depth: Infinity })).not.toContain(API_KEY);
    expect(JSON.stringify(client)).not.toContain(API_KEY);
  });

  it('refuses bad options without echoing the key', () => {
    const badKey = `${API_KEY} with spaces`;
    let message = '';
    try {
      createCloudClient({ baseUrl: 'ftp://example.com', apiKey: badKey, maxConcurrency: 0 });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/options\.baseUrl/);
    expect(message).toMatch(/options\.apiKey/);
    expect(message).toMatch(/options\.maxConcurrency/);
    expect(message).not.toContain(API_KEY);
  });
});

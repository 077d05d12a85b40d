import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CloudApiError,
  CloudNetworkError,
  CloudResponseError,
  CloudTimeoutError,
  createCloudClient,
  type CloudClient,
} from '../../src/cloud/index.js';
import { startHarness, type SimHarness } from './helpers/sim.js';

/** Auth, scripted faults and broken bodies, against the simulator over real HTTP. */

let h: SimHarness;
let client: CloudClient;
let P: number;
let R: number;

beforeAll(async () => {
  h = await startHarness();
  client = h.client;
  const scope = h.sim.manifest().scopes[0]!;
  P = scope.project_id;
  R = scope.region_id;
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  h.sim.clearRequestLog();
});

const statuses = () => h.sim.requestLog.map((r) => r.status);

describe('authentication', () => {
  it('a wrong key gives CloudApiError 401, not retried, the key nowhere in the error', async () => {
    const wrongKey = 'sk-WRONG-KEY-91xq-never-show';
    const bad = createCloudClient({ baseUrl: h.sim.url, apiKey: wrongKey });
    try {
      h.sim.clearRequestLog();
      const err = await bad.listKeypairs(P, R).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CloudApiError);
      expect((err as CloudApiError).status).toBe(401);
      expect(statuses()).toEqual([401]);
      expect(JSON.stringify(err) + String(err)).not.toContain(wrongKey);
    } finally {
      await bad.close();
    }
  });

  it('the scheme is accepted as sent by the client (apikey)', async () => {
    await expect(client.listKeypairs(P, R)).resolves.toHaveProperty('results');
  });
});

describe('scripted faults', () => {
  it('retries a GET through 503s', async () => {
    h.sim.injectFaults({ kind: 'status', status: 503, count: 2, match: { path: /\/keypairs\// } });
    await expect(client.listKeypairs(P, R)).resolves.toHaveProperty('results');
    expect(statuses()).toEqual([503, 503, 200]);
  });

  it('retries after a 429 with Retry-After, waiting as told', async () => {
    h.sim.injectFaults({ kind: 'status', status: 429, retryAfterSeconds: 1, match: { path: /\/ai\/flavors\// } });
    const started = Date.now();
    await client.listGpuFlavors(P, R);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(statuses()).toEqual([429, 200]);
  });

  it('retries a create after 429 (not processed) but not after 503 (maybe processed)', async () => {
    const body = { name: 'pool-fault', lb_algorithm: 'ROUND_ROBIN' as const, protocol: 'HTTP' as const };
    h.sim.injectFaults({ kind: 'status', status: 429, retryAfterSeconds: 0, match: { method: 'POST' } });
    await expect(client.createLbPool(P, R, body)).resolves.toHaveProperty('tasks');
    expect(statuses()).toEqual([429, 200]);

    h.sim.clearRequestLog();
    h.sim.injectFaults({ kind: 'status', status: 503, match: { method: 'POST' } });
    const err = await client.createLbPool(P, R, body).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, attempts: 1 });
    expect(statuses()).toEqual([503]);
  });

  it('retries a GET whose connection was reset', async () => {
    h.sim.injectFaults({ kind: 'reset', match: { path: /\/keypairs\// } });
    await expect(client.listKeypairs(P, R)).resolves.toHaveProperty('results');
    expect(statuses().at(-1)).toBe(200);
  });

  it('times out a slow answer, then succeeds on the retry', async () => {
    const quick = h.clientWith({ timeoutMs: 100 });
    h.sim.injectFaults({ kind: 'delay', ms: 600, match: { path: /\/keypairs\// } });
    await expect(quick.listKeypairs(P, R)).resolves.toHaveProperty('results');
  });

  it('gives up with CloudTimeoutError when every attempt is too slow', async () => {
    const quick = h.clientWith({ timeoutMs: 80, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } });
    h.sim.injectFaults({ kind: 'delay', ms: 500, count: 2, match: { path: /\/keypairs\// } });
    const err = await quick.listKeypairs(P, R).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudTimeoutError);
    expect((err as CloudTimeoutError).attempts).toBe(2);
  });
});

describe('broken bodies are rejected clearly', () => {
  it('a body cut short (connection closed mid-body) is retried for a GET', async () => {
    h.sim.injectFaults({ kind: 'truncate', match: { path: /\/keypairs\// } });
    await expect(client.listKeypairs(P, R)).resolves.toHaveProperty('results');
    expect(h.sim.requestLog).toHaveLength(2);
  });

  it('a body cut short on every attempt fails with an error naming the endpoint', async () => {
    const once = h.clientWith({ retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 } });
    h.sim.injectFaults({ kind: 'truncate', count: 2, match: { path: /\/keypairs\// } });
    const err = await once.listKeypairs(P, R).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudNetworkError);
    const e = err as CloudNetworkError;
    expect(e.endpoint).toBe('GET /cloud/v1/keypairs/{project_id}/{region_id}');
    expect(e.attempts).toBe(2);
    expect(e.message).toMatch(/^listKeypairs: GET \/cloud\/v1\/keypairs\/\d+\/\d+ failed after 2 attempts: UND_ERR_/);
  });

  it('a create whose answer was cut short is not resent, and says it may have been processed', async () => {
    h.sim.injectFaults({ kind: 'truncate', match: { method: 'POST' } });
    const err = await client
      .createLbPool(P, R, { name: 'pool-cut', lb_algorithm: 'ROUND_ROBIN', protocol: 'HTTP' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudNetworkError);
    expect((err as Error).message).toContain('may have been processed');
    expect(h.sim.requestLog).toHaveLength(1);
  });

  it('a garbage body', async () => {
    h.sim.injectFaults({ kind: 'garbage', match: { path: /\/ai\/clusters\// } });
    const err = await client.listGpuClusters(P, R).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CloudResponseError);
    expect((err as Error).message).toContain('GET /cloud/v2/ai/clusters/');
  });
});

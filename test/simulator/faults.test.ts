import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.js';
import { API_KEY, firstScope, get, start } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await start({ seed: 3 });
});
afterAll(() => sim.close());
beforeEach(() => {
  sim.setOptions({ errorRate: 0, rateLimit: null, truncateRate: 0, latencyMs: 0 });
  sim.clearRequestLog();
});

const keypairsPath = () => `/cloud/v1/keypairs/${firstScope(sim).project_id}/${firstScope(sim).region_id}`;

describe('simulator faults', () => {
  it('a scripted 429 carries Retry-After and the error body, and is consumed once', async () => {
    sim.injectFaults({ kind: 'status', status: 429, retryAfterSeconds: 2 });
    const limited = await get(sim, keypairsPath());
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('2');
    expect(limited.json.code).toBe('rate_limited');
    expect((await get(sim, keypairsPath())).status).toBe(200);
    expect(sim.requestLog.map((e) => e.status)).toEqual([429, 200]);
    expect(sim.requestLog[0]).toEqual({ method: 'GET', path: keypairsPath(), status: 429 });
  });

  it('scripted faults match by method and path, with a count', async () => {
    sim.injectFaults({ kind: 'status', status: 503, count: 2, match: { method: 'GET', path: /\/keypairs\// } });
    expect((await get(sim, '/storage/provisioning/v2/key')).status).toBe(200);
    const first = await get(sim, keypairsPath());
    expect(first.status).toBe(503);
    expect(first.json.code).toBe('unavailable');
    expect((await get(sim, keypairsPath())).status).toBe(503);
    expect((await get(sim, keypairsPath())).status).toBe(200);
  });

  it('truncate sends half the body and closes the connection', async () => {
    sim.injectFaults({ kind: 'truncate' });
    const res = await request(`${sim.url}${keypairsPath()}`, { headers: { authorization: `apikey ${API_KEY}` } });
    expect(res.statusCode).toBe(200);
    const declared = Number(res.headers['content-length']);
    await expect(res.body.text()).rejects.toThrow();
    expect(declared).toBeGreaterThan(100);
    expect((await get(sim, keypairsPath())).status).toBe(200);
  });

  it('garbage answers 200 with a body that is not JSON', async () => {
    sim.injectFaults({ kind: 'garbage' });
    const answer = await get(sim, keypairsPath());
    expect(answer.status).toBe(200);
    expect(answer.text.length).toBeGreaterThan(0);
    expect(() => JSON.parse(answer.text)).toThrow();
  });

  it('reset destroys the socket without an answer', async () => {
    sim.injectFaults({ kind: 'reset' });
    await expect(request(`${sim.url}${keypairsPath()}`, { headers: { authorization: `apikey ${API_KEY}` } })).rejects.toThrow();
    expect(sim.requestLog.at(-1)?.status).toBe(0);
    expect((await get(sim, keypairsPath())).status).toBe(200);
  });

  it('delay still answers normally', async () => {
    sim.injectFaults({ kind: 'delay', ms: 20 });
    expect((await get(sim, keypairsPath())).status).toBe(200);
  });

  it('the rate limit option answers 429 for `burst` requests after every `every`', async () => {
    sim.setOptions({ rateLimit: { every: 2, burst: 1, retryAfterSeconds: 3 } });
    sim.injectFaults();
    const statuses: number[] = [];
    let retryAfter: unknown;
    for (let i = 0; i < 6; i++) {
      const answer = await get(sim, keypairsPath());
      statuses.push(answer.status);
      if (answer.status === 429) retryAfter = answer.headers['retry-after'];
    }
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
    expect(statuses.filter((s) => s === 200)).toHaveLength(4);
    expect(retryAfter).toBe('3');
    // The simulator's own routes are never limited.
    expect((await get(sim, '/_sim/health', { auth: null })).status).toBe(200);
  });

  it('error and truncate rates of 1 hit every request; 0 none', async () => {
    sim.setOptions({ errorRate: 1 });
    for (let i = 0; i < 5; i++) expect([502, 503, 504]).toContain((await get(sim, keypairsPath())).status);
    sim.setOptions({ errorRate: 0, truncateRate: 1 });
    const res = await request(`${sim.url}${keypairsPath()}`, { headers: { authorization: `apikey ${API_KEY}` } });
    await expect(res.body.text()).rejects.toThrow();
    sim.setOptions({ truncateRate: 0, latencyMs: 5 });
    expect((await get(sim, keypairsPath())).status).toBe(200);
  });

  it('rejects bad options and faults', () => {
    expect(() => sim.setOptions({ errorRate: 2 })).toThrow(/errorRate/);
    expect(() => sim.setOptions({ rateLimit: { every: 0, burst: 1, retryAfterSeconds: 1 } })).toThrow(/rateLimit.every/);
    expect(() => sim.injectFaults({ kind: 'status', status: 42 })).toThrow(/status/);
  });
});

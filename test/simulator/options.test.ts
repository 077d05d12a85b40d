import { describe, expect, it } from 'vitest';
import { simulatorOptionsFromEnv, startSimulator } from '../../src/simulator/index.js';

describe('simulatorOptionsFromEnv', () => {
  it('defaults to port 8088 and nothing else', () => {
    expect(simulatorOptionsFromEnv({})).toEqual({ host: '127.0.0.1', port: 8088 });
    expect(simulatorOptionsFromEnv({ SIM_PORT: '', SIM_LEGACY: '  ' })).toEqual({ host: '127.0.0.1', port: 8088 });
  });

  it('reads every SIM_ variable', () => {
    expect(
      simulatorOptionsFromEnv({
        SIM_HOST: '0.0.0.0',
        SIM_PORT: '9000',
        SIM_API_KEY: 'secret-key',
        SIM_SEED: '7',
        SIM_SIZE: '100000',
        SIM_TASK_DELAY_MS: '50',
        SIM_LATENCY_MS: '5',
        SIM_ERROR_RATE: '0.1',
        SIM_RATE_LIMIT_EVERY: '100',
        SIM_RATE_LIMIT_BURST: '5',
        SIM_RATE_LIMIT_RETRY_AFTER: '2',
        SIM_TRUNCATE_RATE: '0.01',
        SIM_LEGACY: 'true',
        UNRELATED: 'ignored',
      }),
    ).toEqual({
      host: '0.0.0.0',
      port: 9000,
      apiKey: 'secret-key',
      seed: 7,
      size: 100_000,
      taskDelayMs: 50,
      latencyMs: 5,
      errorRate: 0.1,
      rateLimit: { every: 100, burst: 5, retryAfterSeconds: 2 },
      truncateRate: 0.01,
      legacy: true,
    });
    expect(simulatorOptionsFromEnv({ SIM_RATE_LIMIT_EVERY: '10' }).rateLimit).toEqual({ every: 10, burst: 1, retryAfterSeconds: 1 });
  });

  it('throws one error listing every bad variable, without their values', () => {
    let message = '';
    try {
      simulatorOptionsFromEnv({ SIM_PORT: 'abc', SIM_ERROR_RATE: '2', SIM_LEGACY: 'maybe', SIM_SIZE: '-1', SIM_API_KEY: 'has space' });
    } catch (error) {
      message = (error as Error).message;
    }
    for (const name of ['SIM_PORT', 'SIM_ERROR_RATE', 'SIM_LEGACY', 'SIM_SIZE', 'SIM_API_KEY']) expect(message).toContain(name);
    expect(message).not.toContain('has space');
    expect(() => simulatorOptionsFromEnv({ SIM_RATE_LIMIT_BURST: '3' })).toThrow(/SIM_RATE_LIMIT_BURST: needs SIM_RATE_LIMIT_EVERY/);
  });
});

describe('startSimulator options', () => {
  it('rejects invalid options, naming them', async () => {
    await expect(startSimulator({ size: -1, errorRate: 1.5 })).rejects.toThrow(/size.*errorRate|errorRate.*size/);
  });

  it('makes up a key when none is given and accepts it', async () => {
    const sim = await startSimulator({ size: 5 });
    try {
      expect(sim.apiKey).toMatch(/^sim-\S{10,}$/);
      expect(sim.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${sim.url}/cloud/v1/keypairs/380101/76`, { headers: { authorization: `apikey ${sim.apiKey}` } });
      expect(res.status).toBe(200);
    } finally {
      await sim.close();
    }
  });
});

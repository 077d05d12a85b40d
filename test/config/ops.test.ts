import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/index.js';

const TOKEN = 'scrape-token-0123456789abcdef';

function problemsOf(env: Record<string, string>): Array<{ path: string; message: string }> {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('config: metrics access', () => {
  it('is open by default, and token when only a token is given', () => {
    expect(loadConfig({}).metrics).toEqual({ access: 'open', token: null });
    expect(loadConfig({ CLOUDTALLY_METRICS_TOKEN: TOKEN }).metrics).toEqual({ access: 'token', token: TOKEN });
  });

  it('takes an explicit mode, in any case', () => {
    expect(loadConfig({ CLOUDTALLY_METRICS_ACCESS: 'OFF' }).metrics).toEqual({ access: 'off', token: null });
    expect(loadConfig({ CLOUDTALLY_METRICS_ACCESS: 'token', CLOUDTALLY_METRICS_TOKEN: TOKEN }).metrics.access).toBe('token');
    expect(loadConfig({ CLOUDTALLY_METRICS_ACCESS: ' ' }).metrics.access).toBe('open');
  });

  it('rejects an unknown mode, a missing or short token, and a token that would be ignored', () => {
    expect(problemsOf({ CLOUDTALLY_METRICS_ACCESS: 'public' })).toEqual([
      { path: 'CLOUDTALLY_METRICS_ACCESS', message: 'must be one of open, token, off' },
    ]);
    expect(problemsOf({ CLOUDTALLY_METRICS_ACCESS: 'token' })).toEqual([
      { path: 'CLOUDTALLY_METRICS_TOKEN', message: 'is required when CLOUDTALLY_METRICS_ACCESS is token' },
    ]);
    const short = problemsOf({ CLOUDTALLY_METRICS_TOKEN: 'short-secret' });
    expect(short).toEqual([{ path: 'CLOUDTALLY_METRICS_TOKEN', message: expect.stringMatching(/at least 16/) }]);
    expect(JSON.stringify(short)).not.toContain('short-secret');
    expect(problemsOf({ CLOUDTALLY_METRICS_TOKEN: 'with a space inside it' })[0]!.message).toMatch(/without spaces/);
    expect(problemsOf({ CLOUDTALLY_METRICS_ACCESS: 'open', CLOUDTALLY_METRICS_TOKEN: TOKEN })).toEqual([
      { path: 'CLOUDTALLY_METRICS_TOKEN', message: expect.stringMatching(/would be ignored/) },
    ]);
  });

  it('never shows the token in the loggable copy', () => {
    const config = loadConfig({ CLOUDTALLY_METRICS_TOKEN: TOKEN });
    expect(describeConfig(config).metrics).toEqual({ access: 'token', token: '[redacted]' });
    expect(JSON.stringify(describeConfig(config))).not.toContain(TOKEN);
  });
});

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
    expect(loadConfig({}).metrics).toEqual({ access: 'open', token: null, costGroupings: ['tag:team', 'project'] });
    expect(loadConfig({ CLOUDTALLY_METRICS_TOKEN: TOKEN }).metrics).toMatchObject({ access: 'token', token: TOKEN });
  });

  it('takes an explicit mode, in any case', () => {
    expect(loadConfig({ CLOUDTALLY_METRICS_ACCESS: 'OFF' }).metrics).toMatchObject({ access: 'off', token: null });
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
    expect(describeConfig(config).metrics).toMatchObject({ access: 'token', token: '[redacted]' });
    expect(JSON.stringify(describeConfig(config))).not.toContain(TOKEN);
  });
});

describe('config: metrics cost groupings', () => {
  const withFile = (metrics: unknown) => ({ env: { CLOUDTALLY_CONFIG: 'cloudtally.json' }, opts: { readFile: () => JSON.stringify({ metrics }) } });
  const problemsOfFile = (metrics: unknown) => {
    const { env, opts } = withFile(metrics);
    try {
      loadConfig(env, opts);
    } catch (err) {
      if (err instanceof ConfigError) return [...err.problems];
      throw err;
    }
    throw new Error('expected a ConfigError');
  };

  it('are the team tag and the project by default, or the ones the file names', () => {
    expect(loadConfig({}).metrics.costGroupings).toEqual(['tag:team', 'project']);
    const { env, opts } = withFile({ cost_groupings: ['region', 'tag:cost-center'] });
    expect(loadConfig(env, opts).metrics.costGroupings).toEqual(['region', 'tag:cost-center']);
  });

  it('rejects what the cost report would not group by, a grouping named twice, and unknown keys', () => {
    expect(problemsOfFile({ cost_groupings: ['team'] })).toEqual([{ path: 'metrics.cost_groupings[0]', message: expect.stringContaining('must be one of project, region, kind, flavor, state or tag:<key>') }]);
    expect(problemsOfFile({ cost_groupings: ['tag:'] })[0]!.path).toBe('metrics.cost_groupings[0]');
    expect(problemsOfFile({ cost_groupings: ['project', 'project'] })).toEqual([{ path: 'metrics.cost_groupings', message: expect.stringContaining('names a grouping twice') }]);
    expect(problemsOfFile({ cost_grouping: ['project'] })[0]!.path).toMatch(/^metrics/);
    expect(problemsOfFile({ cost_groupings: 'project' })[0]!.path).toBe('metrics.cost_groupings');
  });
});

/**
 * The production documentation, the example configuration, the compose file and the Dockerfile
 * are checked against the code, so they cannot drift from it unnoticed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { listenHostFor } from '../../src/auth/mode.js';
import { hashPassword } from '../../src/auth/password.js';
import { ConfigError, DEFAULT_SCHEDULES, loadConfig } from '../../src/config/index.js';
import { collectionAllowanceMs } from '../../src/ops/allowance.js';
import { allReports } from '../../src/reports/index.js';
import type { ReportDefinition } from '../../src/reports/report.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** Every environment variable loadConfig reads, found by watching it read an empty environment. */
function variablesReadByConfig(): string[] {
  const seen = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get: (_target, key) => {
      if (typeof key === 'string') seen.add(key);
      return undefined;
    },
  });
  loadConfig(env);
  return [...seen].filter((key) => /^[A-Z][A-Z0-9_]*$/.test(key)).sort();
}

describe('docs/production.md', () => {
  const doc = read('docs/production.md');

  it('documents every environment variable the configuration reads', () => {
    const variables = variablesReadByConfig();
    expect(variables).toContain('DATABASE_URL');
    expect(variables).toContain('CLOUDTALLY_METRICS_TOKEN');
    expect(variables).toContain('SIM_SEED');
    const missing = variables.filter((name) => !doc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });

  it('names no variable the configuration does not read (no stale or misspelt rows)', () => {
    const known = new Set([...variablesReadByConfig(), 'NODE_ENV', 'NODE_OPTIONS', 'POSTGRES_PASSWORD', 'CLOUDTALLY_PORT', 'CLOUDTALLY_IMAGE_STEPS']);
    const named = new Set([...doc.matchAll(/`((?:CLOUDTALLY|SIM|DATABASE|LOG|NODE|POSTGRES)_[A-Z0-9_]+|PORT|HOST)`/g)].map((m) => m[1]!));
    expect([...named].filter((name) => !known.has(name))).toEqual([]);
  });

  it('states the readiness allowance the code computes for the default schedules', () => {
    expect(collectionAllowanceMs(DEFAULT_SCHEDULES)).toBe(2 * 3_600_000);
    expect(doc).toContain('(2 h by\ndefault');
  });
});

describe('docs/cloudtally.example.json', () => {
  const example = read('docs/cloudtally.example.json');
  const remoteEnv = {
    CLOUDTALLY_API_URL: 'https://api.cloud.example',
    CLOUDTALLY_API_KEY: 'example-key',
    CLOUDTALLY_CONFIG: '/etc/cloudtally/cloudtally.json',
    CLOUDTALLY_SESSION_SECRET: 'x'.repeat(32),
    HOST: '0.0.0.0',
    DATABASE_URL: 'postgres://cloudtally:pw@postgres:5432/cloudtally',
    // The example's channels: mail needs the SMTP server, the webhook its signing secret.
    CLOUDTALLY_SMTP_URL: 'smtps://alerts:pw@mail.example.com:465',
    FINANCE_HOOK_SECRET: 'example-signing-secret',
  };

  it('is refused as it is, with a message that says how to make the password hash', () => {
    try {
      loadConfig(remoteEnv, { readFile: () => example });
      expect.unreachable('the placeholder hash must not pass');
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([{ path: 'users[0].password_hash', message: expect.stringMatching(/hash-password/) }]);
    }
  });

  it('is a valid configuration for the container once the hash is filled in', async () => {
    const hash = await hashPassword('correct horse battery staple', { N: 2 ** 14 });
    const config = loadConfig(remoteEnv, {
      readFile: () => example.replace('REPLACE-with-the-output-of-hash-password', hash),
      // The deliveries' reports and parameters are checked against the real reports.
      reports: allReports() as ReportDefinition<unknown, unknown, unknown>[],
    });
    expect(config.scopes).toHaveLength(1);
    expect(config.deliveries.map((d) => d.report)).toEqual(['monthly']);
    expect(config.cloud.mode).toBe('remote');
    // With a user configured, the container may listen on every address.
    expect(listenHostFor(config)).toBe('0.0.0.0');
  });
});

describe('docker-compose.yml', () => {
  const compose = read('docker-compose.yml');

  it('gives cloudtally only variables the configuration reads', () => {
    const service = compose.slice(compose.indexOf('\n  cloudtally:'), compose.indexOf('\nvolumes:'));
    const environment = service.slice(service.indexOf('environment:'), service.indexOf('volumes:'));
    const names = [...environment.matchAll(/^ {6}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
    expect(names).toContain('DATABASE_URL');
    const known = new Set(variablesReadByConfig());
    expect(names.filter((name) => !known.has(name))).toEqual([]);
  });

  it('starts cloudtally only once Postgres is healthy, keeps the data in a named volume, and gives shutdown time', () => {
    expect(compose).toMatch(/image: postgres:15/);
    expect(compose).toMatch(/pg_isready/);
    expect(compose).toMatch(/condition: service_healthy/);
    expect(compose).toMatch(/- pgdata:\/var\/lib\/postgresql\/data/);
    expect(compose).toMatch(/stop_grace_period: 30s/);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

  it('builds through the package scripts, so both run the same commands', () => {
    const npmRuns = [...dockerfile.matchAll(/^RUN .*npm run ([\w:-]+)/gm)].map((m) => m[1]!);
    expect(npmRuns).toEqual(['build']);
    for (const name of npmRuns) expect(scripts[name]).toBeDefined();
    expect(scripts.build).toBe('tsc -p tsconfig.build.json');
  });

  it('copies files that exist, runs the compiled CLI as a non-root user, and checks /healthz with node', () => {
    for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
      for (const source of m[1]!.split(/\s+/)) expect(existsSync(join(root, source)), source).toBe(true);
    }
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "dist\/cli\.js", "start"\]$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "dist\/ops\/healthcheck\.js"\]$/m);
    expect(existsSync(join(root, 'src/ops/healthcheck.ts'))).toBe(true);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(dockerfile).not.toMatch(/API_KEY|PASSWORD|SECRET|TOKEN/);
  });

  it('keeps node_modules, data, .git and build output out of the build context', () => {
    const ignored = read('.dockerignore').split('\n').map((l) => l.trim());
    for (const entry of ['node_modules', 'data', '.git', 'dist', 'test-results', '.env']) expect(ignored).toContain(entry);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { problemsOf } from '../helpers/config-problems.js';
import {
  COLLECTOR_NAMES,
  ConfigError,
  DEFAULT_SCHEDULES,
  describeConfig,
  loadConfig,
  scopesFromManifest,
} from '../../src/config/index.js';
import { normaliseTagKey, normaliseTagValue } from '../../src/tags/normalise.js';

const API_KEY = 'ak-very-secret-0123456789';
const DB_PASSWORD = 'db-pa55-word';
const DB_URL = `postgres://app:${DB_PASSWORD}@db.internal:5433/cloudtally`;

/** A manifest exactly as the simulator's GET /_sim/manifest answers it. */
const MANIFEST = {
  scopes: [
    { project_id: 1, region_id: 1, security_groups: ['sg-1', 'sg-2'], k8s_clusters: ['k8s-a'] },
    { project_id: 2, region_id: 3, security_groups: [], k8s_clusters: [] },
  ],
  image_ids: ['0f3a7c9e-1111-4aaa-8bbb-222233334444'],
  free_feature_ids: [11, 12],
};

/** loadConfig with the file given as an object (or raw text), read through the readFile hook. */
function load(env: Record<string, string | undefined>, file?: unknown) {
  const readFile = (path: string) => {
    expect(path).toBe('/etc/cloudtally.json');
    return typeof file === 'string' ? file : JSON.stringify(file);
  };
  return loadConfig(file === undefined ? env : { CLOUDTALLY_CONFIG: '/etc/cloudtally.json', ...env }, { readFile });
}

function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig defaults', () => {
  it('needs nothing: simulator, PGlite in ./data, default schedules and limits', () => {
    const config = loadConfig({});
    expect(config).toEqual({
      cloud: { mode: 'simulator' },
      database: { driver: 'pglite', dataDir: './data' },
      databaseSessions: { idleInTransactionTimeoutMs: 60_000, lockTimeoutMs: 5_000, keepAliveSeconds: 10 },
      databaseReadUrl: null,
      server: { host: '127.0.0.1', port: 3000 },
      web: { publicUrl: null, trustedProxies: [] },
      logLevel: 'info',
      retentionDays: 90,
      retentionHourlyDays: 90,
      costMaxGapHours: null,
      simulator: { host: '127.0.0.1', port: 8088 },
      demoStateFile: 'data/demo-simulator.json',
      scopes: [],
      imageIds: [],
      freeFeatureIds: [],
      schedules: DEFAULT_SCHEDULES,
      tagAliases: {},
      tagKeyCase: 'lower',
      tagValueCase: 'preserve',
      tagValueAliases: {},
      focus: { billingAccountId: 'default', billingAccountName: 'default', providerName: 'Cloud provider', publisherName: 'Cloud provider', invoiceIssuerName: 'Cloud provider' },
      budgets: null,
      anomalies: { groupings: ['tag:team', 'project'], baselineDays: 14, minBaselineDays: 7, madMultiplier: '3', minChange: { default: '10', byCurrency: {} }, minChangePercent: '20', alerts: [] },
      // The demo's shared-cost rule (docs/allocation.md).
      allocation: [{ dimension: 'tag:team', source: '(untagged)', method: 'proportional', shares: null }],
      client: { timeoutMs: 30_000, maxConcurrency: 8, maxRetries: 4, maxPageBytes: 64 * 1024 * 1024, maxRecordBytes: 1024 * 1024 },
      collectOnStart: true,
      collectionRuns: { heartbeatMs: 15_000, staleAfterMs: 45_000 },
      // Users, sign-in and actions (issue 5; detailed in actions.test.ts).
      users: [],
      auth: { sessionSecret: null, sessionTtlHours: 12, loginThrottle: { freeFailuresPerAccount: 5, freeFailuresPerAddress: 20, firstDelaySeconds: 1, maxDelaySeconds: 900, forgetAfterHours: 24 }, proxy: null, oidc: null },
      idleRules: expect.any(Object),
      notifications: null,
      channels: [],
      smtp: null,
      outbox: { maxAttempts: 8, firstRetrySeconds: 30, maxRetrySeconds: 3600, timeoutMs: 10_000, intervalSeconds: 15, overdueAfterMinutes: 30, maxSmtpAnswerBytes: 65_536 },
      deliveries: [],
      stopGraceHours: 24,
      ownerTagKey: 'owner',
      metrics: { access: 'open', token: null, costGroupings: ['tag:team', 'project'] },
      configFile: null,
    });
    expect(Object.keys(config.schedules).sort()).toEqual([...COLLECTOR_NAMES].sort());
    expect(config.schedules.instances).toBe('0 * * * *');
    expect(config.schedules.flavors).toBe('0 */6 * * *');
    expect(config.schedules.free_features).toBe('0 3 * * *');
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig({ CLOUDTALLY_API_URL: '', CLOUDTALLY_API_KEY: ' ', DATABASE_URL: '', PORT: '' });
    expect(config.cloud).toEqual({ mode: 'simulator' });
    expect(config.database.driver).toBe('pglite');
    expect(config.server.port).toBe(3000);
  });

  it('reads every environment variable', () => {
    const config = load(
      {
        CLOUDTALLY_API_URL: 'https://api.example.test/',
        CLOUDTALLY_API_KEY: API_KEY,
        DATABASE_URL: DB_URL,
        PORT: '8080',
        HOST: '0.0.0.0',
        LOG_LEVEL: 'DEBUG',
        CLOUDTALLY_RETENTION_DAYS: '30',
        SIM_SEED: '7',
        SIM_SIZE: '100000',
        SIM_LATENCY_MS: '25',
        SIM_ERROR_RATE: '0.05',
        SIM_LEGACY: 'yes',
        SIM_PORT: '9099',
        SIM_API_KEY: 'sim-key',
      },
      { scopes: [MANIFEST.scopes[0]], retention_days: 400 },
    );
    expect(config.cloud).toEqual({ mode: 'remote', baseUrl: 'https://api.example.test', apiKey: API_KEY });
    expect(config.database).toEqual({ driver: 'pg', url: DB_URL });
    expect(config.server).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(config.logLevel).toBe('debug');
    expect(config.retentionDays).toBe(30); // the environment wins over the file
    expect(config.simulator).toEqual({ host: '127.0.0.1', seed: 7, size: 100_000, latencyMs: 25, errorRate: 0.05, legacy: true, port: 9099, apiKey: 'sim-key' });
  });

  it('takes retention from the file when the environment has none', () => {
    expect(load({}, { retention_days: 400, retention_hourly_days: 14 })).toMatchObject({ retentionDays: 400, retentionHourlyDays: 14 });
    expect(load({ CLOUDTALLY_RETENTION_HOURLY_DAYS: '3' }, { retention_hourly_days: 14 }).retentionHourlyDays).toBe(3);
  });

  it('takes the cost gap cap from the environment, else the file, and checks it', () => {
    expect(load({}, { cost_max_gap_hours: 8 }).costMaxGapHours).toBe(8);
    expect(load({ CLOUDTALLY_COST_MAX_GAP_HOURS: '3' }, { cost_max_gap_hours: 8 }).costMaxGapHours).toBe(3);
    expect(problemsOf(() => load({ CLOUDTALLY_COST_MAX_GAP_HOURS: '0' }, {})).map((p) => p.path)).toEqual(['CLOUDTALLY_COST_MAX_GAP_HOURS']);
    expect(problemsOf(() => load({}, { cost_max_gap_hours: 1000 })).map((p) => p.path)).toEqual(['cost_max_gap_hours']);
  });

  it('takes the database session bounds and the run heartbeat from the environment, and checks them', () => {
    const config = loadConfig({
      CLOUDTALLY_DB_IDLE_IN_TRANSACTION_SECONDS: '0',
      CLOUDTALLY_DB_LOCK_TIMEOUT_SECONDS: '2',
      CLOUDTALLY_DB_KEEPALIVE_SECONDS: '30',
      CLOUDTALLY_RUN_HEARTBEAT_SECONDS: '5',
    });
    expect(config.databaseSessions).toEqual({ idleInTransactionTimeoutMs: 0, lockTimeoutMs: 2_000, keepAliveSeconds: 30 });
    // Dead after three heartbeats unless told otherwise.
    expect(config.collectionRuns).toEqual({ heartbeatMs: 5_000, staleAfterMs: 15_000 });
    expect(loadConfig({ CLOUDTALLY_RUN_STALE_SECONDS: '120' }).collectionRuns).toEqual({ heartbeatMs: 15_000, staleAfterMs: 120_000 });
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_RUN_HEARTBEAT_SECONDS: '10', CLOUDTALLY_RUN_STALE_SECONDS: '15' }))).toEqual([
      { path: 'CLOUDTALLY_RUN_STALE_SECONDS', message: expect.stringMatching(/^must be at least twice the heartbeat \(20 s/) },
    ]);
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_DB_LOCK_TIMEOUT_SECONDS: '0', CLOUDTALLY_DB_KEEPALIVE_SECONDS: 'x' })).map((p) => p.path)).toEqual([
      'CLOUDTALLY_DB_LOCK_TIMEOUT_SECONDS',
      'CLOUDTALLY_DB_KEEPALIVE_SECONDS',
    ]);
  });

  it('keeps hourly detail no longer than the retention', () => {
    expect(loadConfig({ CLOUDTALLY_RETENTION_DAYS: '5' }).retentionHourlyDays).toBe(5);
    expect(problemsOf(() => load({ CLOUDTALLY_RETENTION_DAYS: '5' }, { retention_hourly_days: 6 }))).toEqual([
      { path: 'retention_hourly_days', message: 'must not exceed the retention (5 days)' },
    ]);
  });

  it('uses CLOUDTALLY_DATA_DIR for PGlite', () => {
    expect(loadConfig({ CLOUDTALLY_DATA_DIR: '/var/lib/cloudtally' }).database).toEqual({ driver: 'pglite', dataDir: '/var/lib/cloudtally' });
  });

  it('keeps the demo company in CLOUDTALLY_DATA_DIR, also with Postgres, and nowhere for memory://', () => {
    expect(loadConfig({ CLOUDTALLY_DATA_DIR: '/var/lib/cloudtally' }).demoStateFile).toBe('/var/lib/cloudtally/demo-simulator.json');
    expect(loadConfig({ CLOUDTALLY_DATA_DIR: '/srv/ct', DATABASE_URL: 'postgres://u@db/ct' }).demoStateFile).toBe('/srv/ct/demo-simulator.json');
    expect(loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://' }).demoStateFile).toBeNull();
  });

  it('returns a deep-frozen object', () => {
    const config = load({}, { ...MANIFEST, tag_aliases: { Team: 'team' } });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.scopes)).toBe(true);
    expect(Object.isFrozen(config.scopes[0])).toBe(true);
    expect(Object.isFrozen(config.scopes[0]!.securityGroups)).toBe(true);
    expect(Object.isFrozen(config.schedules)).toBe(true);
    expect(Object.isFrozen(config.tagAliases)).toBe(true);
    expect(() => {
      (config.scopes as unknown as unknown[]).push({});
    }).toThrow(TypeError);
  });
});

describe('loadConfig file', () => {
  it('accepts a simulator manifest as the configuration file', () => {
    const config = load({}, MANIFEST);
    expect(config.scopes).toEqual([
      { projectId: 1, regionId: 1, securityGroups: ['sg-1', 'sg-2'], k8sClusters: ['k8s-a'] },
      { projectId: 2, regionId: 3, securityGroups: [], k8sClusters: [] },
    ]);
    expect(config.imageIds).toEqual(MANIFEST.image_ids);
    expect(config.freeFeatureIds).toEqual([11, 12]);
    expect(config.configFile).toBe('/etc/cloudtally.json');
  });

  it('reads a real file from disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cloudtally-config-'));
    try {
      const path = join(dir, 'config.json');
      writeFileSync(path, JSON.stringify({ ...MANIFEST, collect_on_start: false }));
      const config = loadConfig({ CLOUDTALLY_CONFIG: path });
      expect(config.scopes).toHaveLength(2);
      expect(config.collectOnStart).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('merges schedules over the defaults and reads client tuning and tag settings', () => {
    const config = load(
      {},
      {
        schedules: { instances: '*/15 * * * *', flavors: '@hourly' },
        client: { timeout_ms: 5000, max_concurrency: 2, max_page_bytes: 8_388_608 },
        tag_aliases: { Team: 'team', 'owner-team': 'Team', 'Cost Center': 'cost.center' },
        tag_key_case: 'lower',
      },
    );
    expect(config.schedules).toEqual({ ...DEFAULT_SCHEDULES, instances: '*/15 * * * *', flavors: '@hourly' });
    expect(config.client).toEqual({ timeoutMs: 5000, maxConcurrency: 2, maxRetries: 4, maxPageBytes: 8_388_608, maxRecordBytes: 1_048_576 });
    expect(problemsOf(() => load({}, { client: { max_page_bytes: 100, max_record_bytes: 2 ** 40 } })).map((p) => p.path)).toEqual([
      'client.max_page_bytes',
      'client.max_record_bytes',
    ]);
    expect(config.tagAliases).toEqual({ team: 'team', 'owner-team': 'team', 'cost center': 'cost.center' });
  });

  it('requires at least one scope against a real cloud', () => {
    expect(problemsOf(() => load({ CLOUDTALLY_API_URL: 'https://api.example.test', CLOUDTALLY_API_KEY: API_KEY }, { scopes: [] }))).toEqual([
      { path: 'scopes', message: expect.stringContaining('at least one scope') },
    ]);
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_API_URL: 'https://api.example.test', CLOUDTALLY_API_KEY: API_KEY }))).toEqual([
      { path: 'scopes', message: expect.stringContaining('at least one scope') },
    ]);
  });

  it('reports an unreadable or non-JSON file against CLOUDTALLY_CONFIG', () => {
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_CONFIG: '/nonexistent/cloudtally.json' }))).toEqual([
      { path: 'CLOUDTALLY_CONFIG', message: 'cannot read "/nonexistent/cloudtally.json" (ENOENT)' },
    ]);
    expect(problemsOf(() => load({}, '{"scopes": ['))).toEqual([
      { path: 'CLOUDTALLY_CONFIG', message: expect.stringMatching(/^"\/etc\/cloudtally\.json" is not valid JSON/) },
    ]);
  });
});

describe('loadConfig problems', () => {
  it('reports every invalid field at once, each with its path', () => {
    const error = errorOf(() =>
      load(
        { PORT: 'eighty', HOST: 'ok', LOG_LEVEL: 'loud', SIM_ERROR_RATE: '1.5', SIM_LEGACY: 'maybe', CLOUDTALLY_RETENTION_DAYS: '0' },
        {
          scopes: [
            { project_id: 0, region_id: 'one', security_groups: [''], k8s_clusters: [] },
            { project_id: 5, region_id: 5, security_group: ['typo'] },
            { project_id: 5, region_id: 5 },
          ],
          free_feature_ids: [1, -2],
          schedules: { instances: 'every hour', ports: '61 * * * *', invoices: '0 * * * *' },
          tag_key_case: 'upper',
          client: { timeout_ms: 0 },
          tag_aliases: { 'Owner Team': '' },
          collect_on_start: 'yes',
          colour: 'blue',
        },
      ),
    );
    const paths = error.problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'PORT',
        'LOG_LEVEL',
        'SIM_ERROR_RATE',
        'SIM_LEGACY',
        'CLOUDTALLY_RETENTION_DAYS',
        'scopes[0].project_id',
        'scopes[0].region_id',
        'scopes[0].security_groups[0]',
        'scopes[1].security_group',
        'free_feature_ids[1]',
        'schedules.instances',
        'schedules.ports',
        'schedules.invoices',
        'tag_key_case',
        'client.timeout_ms',
        'tag_aliases["Owner Team"]',
        'collect_on_start',
        'colour',
      ]),
    );
    expect(paths).not.toContain('HOST');
    const byPath = new Map(error.problems.map((p) => [p.path, p.message]));
    expect(byPath.get('PORT')).toBe('must be a whole number from 0 to 65535');
    expect(byPath.get('schedules.ports')).toMatch(/is not a valid cron expression \(61 is a invalid expression for minute\)/);
    expect(byPath.get('schedules.instances')).toMatch(/is not a valid cron expression/);
    expect(byPath.get('schedules.invoices')).toBe('is not a known setting');
    expect(byPath.get('colour')).toBe('is not a known setting');
    // One message listing every problem as "path: reason".
    for (const problem of error.problems) expect(error.message).toContain(`  - ${problem.path}: ${problem.message}`);
    expect(error.message).toMatch(/^Invalid configuration \(\d+ problems\):\n/);
  });

  it('reports duplicate scopes, after the other problems are fixed', () => {
    expect(problemsOf(() => load({}, { scopes: [MANIFEST.scopes[0], MANIFEST.scopes[1], { ...MANIFEST.scopes[0] }] }))).toEqual([
      { path: 'scopes[2]', message: 'repeats scopes[0] (project 1, region 1); list each scope once' },
    ]);
  });

  it('wants both or neither of the API URL and key', () => {
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_API_URL: 'https://api.example.test' }))).toEqual([
      { path: 'CLOUDTALLY_API_KEY', message: expect.stringContaining('is required when CLOUDTALLY_API_URL is set') },
    ]);
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_API_KEY: API_KEY }))).toEqual([
      { path: 'CLOUDTALLY_API_URL', message: expect.stringContaining('is required when CLOUDTALLY_API_KEY is set') },
    ]);
  });

  it('rejects URLs of the wrong kind', () => {
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_API_URL: 'ftp://x', CLOUDTALLY_API_KEY: API_KEY, DATABASE_URL: 'mysql://x/y' }))).toEqual([
      { path: 'CLOUDTALLY_API_URL', message: 'must be an absolute http(s) URL' },
      { path: 'DATABASE_URL', message: 'must be a postgres:// or postgresql:// URL' },
    ]);
  });

  it('rejects alias chains and case collisions', () => {
    const problems = problemsOf(() => load({}, { tag_aliases: { 'owner-team': 'owner', owner: 'team', Team: 'team', TEAM: 'squad' } }));
    expect(problems).toEqual([
      { path: 'tag_aliases.TEAM', message: 'maps to "squad" but "Team" is the same key in lower case and maps to "team"' },
      { path: 'tag_aliases["owner-team"]', message: 'maps to "owner", which is itself an alias of "team"; map straight to the canonical key' },
    ]);
  });

  it('never puts a secret in an error message', () => {
    const error = errorOf(() =>
      load(
        {
          CLOUDTALLY_API_URL: `https://user:${API_KEY}@`,
          CLOUDTALLY_API_KEY: API_KEY,
          DATABASE_URL: `mysql://app:${DB_PASSWORD}@db/x`,
          SIM_API_KEY: 'sim-secret-key',
          PORT: API_KEY,
        },
        { scopes: [], colour: API_KEY },
      ),
    );
    for (const secret of [API_KEY, DB_PASSWORD, 'sim-secret-key']) {
      expect(error.message).not.toContain(secret);
      expect(JSON.stringify(error.problems)).not.toContain(secret);
    }
    expect(error.problems.map((p) => p.path)).toEqual(expect.arrayContaining(['CLOUDTALLY_API_URL', 'DATABASE_URL', 'PORT', 'colour']));
  });
});

describe('public URL, trusted proxies and sign-in throttling', () => {
  it('keeps the public URL as an origin and merges the trusted proxies with the sign-in proxy', () => {
    const config = load(
      { CLOUDTALLY_PUBLIC_URL: ' HTTPS://CloudTally.Example.com:443/ ', CLOUDTALLY_TRUSTED_PROXIES: '10.0.0.5, 192.168.0.0/16 fd00::/8' },
      { auth: { proxy: { header: 'x-user', trusted_addresses: ['10.0.0.5', '172.16.0.1'] } } },
    );
    expect(config.web).toEqual({ publicUrl: 'https://cloudtally.example.com', trustedProxies: ['10.0.0.5', '192.168.0.0/16', 'fd00::/8', '172.16.0.1'] });
    expect(loadConfig({ CLOUDTALLY_PUBLIC_URL: 'http://10.1.2.3:8080' }).web.publicUrl).toBe('http://10.1.2.3:8080');
  });

  it('refuses a public URL that is not a bare http(s) origin, and a proxy that is not an address, each named', () => {
    for (const [value, reason] of [
      ['cloudtally.example.com', /absolute http\(s\) address/],
      ['ftp://cloudtally.example.com', /absolute http\(s\) address/],
      ['https://cloudtally.example.com/tally', /must not have a path/],
      ['https://cloudtally.example.com/?x=1', /query/],
      ['https://cloudtally.example.com/#top', /fragment/],
      ['https://admin:pw@cloudtally.example.com', /user name or password/],
    ] as const) {
      const problems = problemsOf(() => loadConfig({ CLOUDTALLY_PUBLIC_URL: value }));
      expect(problems, value).toEqual([{ path: 'CLOUDTALLY_PUBLIC_URL', message: expect.stringMatching(reason) }]);
      expect(JSON.stringify(problems)).not.toContain('pw@');
    }
    expect(problemsOf(() => loadConfig({ CLOUDTALLY_TRUSTED_PROXIES: '10.0.0.1,proxy.internal,10.0.0.0/40' }))).toEqual([
      { path: 'CLOUDTALLY_TRUSTED_PROXIES', message: expect.stringContaining('"proxy.internal" must be an IP address or a CIDR block') },
      { path: 'CLOUDTALLY_TRUSTED_PROXIES', message: expect.stringContaining('"10.0.0.0/40" the prefix length must be 0 to 32') },
    ]);
  });

  it('reads the throttle from auth.login_throttle, checks it, and points the old login_rate_limit at it', () => {
    const config = load({}, { auth: { login_throttle: { free_failures_per_account: 3, max_delay_seconds: 60, forget_after_hours: 2 } } });
    expect(config.auth.loginThrottle).toEqual({ freeFailuresPerAccount: 3, freeFailuresPerAddress: 20, firstDelaySeconds: 1, maxDelaySeconds: 60, forgetAfterHours: 2 });
    expect(problemsOf(() => load({}, { auth: { login_throttle: { first_delay_seconds: 10, max_delay_seconds: 5, forget_after_hours: 0.001 } } }))).toEqual([
      { path: 'auth.login_throttle.max_delay_seconds', message: 'must be at least first_delay_seconds' },
      { path: 'auth.login_throttle.forget_after_hours', message: 'must be longer than max_delay_seconds' },
    ]);
    expect(problemsOf(() => load({}, { auth: { login_rate_limit: { max_failures_per_user: 5 } } }))).toEqual([
      { path: 'auth.login_rate_limit', message: expect.stringContaining('was replaced by auth.login_throttle') },
    ]);
  });
});

describe('describeConfig', () => {
  it('redacts the API key, the database password and the simulator key', () => {
    const config = load(
      { CLOUDTALLY_API_URL: 'https://api.example.test', CLOUDTALLY_API_KEY: API_KEY, DATABASE_URL: DB_URL, SIM_API_KEY: 'sim-secret-key' },
      MANIFEST,
    );
    const described = describeConfig(config);
    const text = JSON.stringify(described);
    for (const secret of [API_KEY, DB_PASSWORD, 'sim-secret-key']) expect(text).not.toContain(secret);
    expect(described.cloud).toEqual({ mode: 'remote', baseUrl: 'https://api.example.test', apiKey: '[redacted]' });
    expect(described.database).toEqual({ driver: 'pg', url: 'postgres://app:***@db.internal:5433/cloudtally' });
    expect(described.scopes).toEqual(config.scopes);
    // the original is untouched
    expect(config.cloud).toEqual({ mode: 'remote', baseUrl: 'https://api.example.test', apiKey: API_KEY });
  });
});

describe('normaliseTagKey', () => {
  it('lower-cases and applies aliases, leaving odd keys otherwise intact', () => {
    const config = load({}, { tag_aliases: { Team: 'team', 'owner-team': 'team' } });
    const keys = ['Team', 'TEAM', 'team', 'owner-team', 'Owner-Team', 'cost.center', 'team/sub', 'Ünïcode Key', 'env'];
    expect(keys.map((k) => normaliseTagKey(k, config))).toEqual([
      'team',
      'team',
      'team',
      'team',
      'team',
      'cost.center',
      'team/sub',
      'ünïcode key',
      'env',
    ]);
    // NFC: a decomposed "é" and a composed one are the same key
    expect(normaliseTagKey('cafe\u0301', config)).toBe(normaliseTagKey('café', config));
  });

  it('keeps case when asked to', () => {
    const config = load({}, { tag_key_case: 'preserve', tag_aliases: { Team: 'team' } });
    expect(['Team', 'TEAM', 'team'].map((k) => normaliseTagKey(k, config))).toEqual(['team', 'TEAM', 'team']);
  });

  it('is not fooled by keys that look like object internals', () => {
    const config = load({}, { tag_aliases: { constructor: 'y', 'Has Own Property': 'x' } });
    expect(normaliseTagKey('constructor', config)).toBe('y');
    expect(normaliseTagKey('has own property', config)).toBe('x');
    expect(normaliseTagKey('hasOwnProperty', config)).toBe('hasownproperty');
    expect(normaliseTagKey('__proto__', config)).toBe('__proto__');
    expect(normaliseTagKey('toString', config)).toBe('tostring');
  });
});

describe('tag value rules (tag_value_case, tag_value_aliases)', () => {
  it('keeps the case of values by default, trimmed and NFC-normalised', () => {
    const config = load({}, {});
    expect(['ML', ' ml ', 'cafe\u0301'].map((v) => normaliseTagValue('team', v, config))).toEqual(['ML', 'ml', 'café']);
  });

  it('lower-cases values when asked to, so ML, ml and " Ml " are one value', () => {
    const config = load({}, { tag_value_case: 'lower' });
    expect(config.tagValueCase).toBe('lower');
    expect(['ML', 'ml', ' Ml '].map((v) => normaliseTagValue('team', v, config))).toEqual(['ml', 'ml', 'ml']);
  });

  it('matches alias keys after key normalisation and alias values in the value case', () => {
    const config = load(
      {},
      { tag_aliases: { équipe: 'team' }, tag_value_aliases: { Team: { ML: 'ml', 'Data-Eng': 'data-eng' }, 'équipe': { 'Machine Learning': 'ml' } } },
    );
    expect(config.tagValueAliases).toEqual({ team: { ML: 'ml', 'Data-Eng': 'data-eng', 'Machine Learning': 'ml' } });
    expect(['ML', ' ML', 'ml', 'Ml', 'Data-Eng', 'Machine Learning'].map((v) => normaliseTagValue('team', v, config))).toEqual(['ml', 'ml', 'ml', 'Ml', 'data-eng', 'ml']);
    // Other keys keep their values.
    expect(normaliseTagValue('env', 'ML', config)).toBe('ML');
    const lower = load({}, { tag_value_case: 'lower', tag_value_aliases: { team: { 'Machine-Learning': 'ML' } } });
    expect(lower.tagValueAliases).toEqual({ team: { 'machine-learning': 'ml' } });
    expect(normaliseTagValue('team', 'MACHINE-LEARNING', lower)).toBe('ml');
  });

  it('lists every bad value rule with its path', () => {
    expect(
      problemsOf(() =>
        load({}, { tag_value_case: 'upper', tag_value_aliases: { team: { ML: 'ml', ml: 'machine-learning' }, env: { Prod: 'prod', ' Prod ': 'production' }, owner: 'x', cost: { a: '' } } }),
      ),
    ).toEqual([
      { path: 'tag_value_case', message: 'must be "lower" or "preserve"' },
      { path: 'tag_value_aliases.owner', message: expect.stringContaining('must map alias values to canonical values') },
      { path: 'tag_value_aliases.cost.a', message: 'must not be empty' },
    ]);
    expect(problemsOf(() => load({}, { tag_value_aliases: { team: { ML: 'ml', ml: 'machine-learning' } } }))).toEqual([
      { path: 'tag_value_aliases.team.ML', message: 'maps to "ml", which is itself an alias of "machine-learning"; map straight to the canonical value' },
    ]);
    // Under lower case, Prod and PROD are one alias: it cannot map to two values.
    expect(problemsOf(() => load({}, { tag_value_case: 'lower', tag_value_aliases: { Env: { Prod: 'prod' }, env: { PROD: 'production' } } }))).toEqual([
      { path: 'tag_value_aliases.env.PROD', message: 'maps to "production" but tag_value_aliases.Env.Prod is the same value of tag key "env" (after normalisation) and maps to "prod"' },
    ]);
  });

  it('is not fooled by keys that look like object internals', () => {
    const config = load({}, { tag_value_aliases: { constructor: { hasOwnProperty: 'x' } } });
    expect(normaliseTagValue('constructor', 'hasOwnProperty', config)).toBe('x');
    expect(normaliseTagValue('constructor', 'toString', config)).toBe('toString');
    expect(normaliseTagValue('team', 'constructor', config)).toBe('constructor');
    expect(normaliseTagValue('team', '__proto__', config)).toBe('__proto__');
  });
});

describe('anomaly settings', () => {
  it('normalises tag groupings like the collected tags, keeps decimals as text and checks the alert groupings', () => {
    const config = load({}, {
      tag_aliases: { 'Owner-Team': 'team' },
      channels: [{ name: 'finance-hook', type: 'webhook', url: 'https://hooks.example.com/x' }],
      anomalies: {
        groupings: ['tag:Owner-Team', 'project', 'tag:team'],
        baseline_days: 21,
        mad_multiplier: 2.5,
        min_change: '25',
        min_change_by_currency: { usd: 30 },
        min_change_percent: 10,
        alert_groupings: [{ by: 'tag:TEAM', notify: ['finance-hook', 'finance-hook'] }],
      },
    });
    expect(config.anomalies).toEqual({
      groupings: ['tag:team', 'project'],
      baselineDays: 21,
      minBaselineDays: 7,
      madMultiplier: '2.5',
      minChange: { default: '25', byCurrency: { USD: '30' } },
      minChangePercent: '10',
      alerts: [{ grouping: 'tag:team', notify: ['finance-hook'] }],
    });
  });

  it('names each bad field', () => {
    expect(
      problemsOf(() =>
        load({}, { anomalies: { groupings: ['colour'], min_change: '-1', min_baseline_days: 20, alert_groupings: [{ by: 'project', notify: [] }] } }),
      ),
    ).toEqual([
      { path: 'anomalies.groupings[0]', message: 'must be project, region, kind, flavor, state or tag:<key>' },
      { path: 'anomalies.min_change', message: 'must be a non-negative amount (a number or decimal text such as "10")' },
      { path: 'anomalies.alert_groupings[0].notify', message: 'must name at least one channel' },
    ]);
    expect(problemsOf(() => load({}, { anomalies: { min_baseline_days: 20, alert_groupings: [{ by: 'region', notify: ['x'] }] } }))).toEqual([
      { path: 'anomalies.min_baseline_days', message: 'must not exceed baseline_days (14)' },
      { path: 'anomalies.alert_groupings[0].by', message: 'must be one of the watched groupings (tag:team, project)' },
      { path: 'anomalies.alert_groupings[0].notify[0]', message: '"x" is not a channel in "channels" (no channels are configured)' },
    ]);
  });
});

describe('focus settings', () => {
  it('defaults every name, publisher and invoice issuer to the provider', () => {
    expect(load({}, { focus: { provider_name: 'Acme Cloud', billing_account_id: 'acc-42' } }).focus).toEqual({
      billingAccountId: 'acc-42',
      billingAccountName: 'acc-42',
      providerName: 'Acme Cloud',
      publisherName: 'Acme Cloud',
      invoiceIssuerName: 'Acme Cloud',
    });
    const all = { billing_account_id: 'a', billing_account_name: 'b', provider_name: 'c', publisher_name: 'd', invoice_issuer_name: 'e' };
    expect(load({}, { focus: all }).focus).toEqual({ billingAccountId: 'a', billingAccountName: 'b', providerName: 'c', publisherName: 'd', invoiceIssuerName: 'e' });
  });

  it('rejects unknown or empty names', () => {
    expect(problemsOf(() => load({}, { focus: { provider: 'x', billing_account_id: ' ' } }))).toEqual([
      { path: 'focus.billing_account_id', message: 'must not be empty' },
      { path: 'focus.provider', message: 'is not a known setting' },
    ]);
  });
});

describe('scopesFromManifest', () => {
  it('reads the scopes of a manifest, ignoring keys it does not know', () => {
    const result = scopesFromManifest({
      ...MANIFEST,
      scopes: MANIFEST.scopes.map((scope) => ({ ...scope, region_name: 'Luxembourg' })),
      company: 'demo',
    });
    expect(result.scopes).toEqual(load({}, MANIFEST).scopes);
    expect(result.imageIds).toEqual(MANIFEST.image_ids);
    expect(result.freeFeatureIds).toEqual([11, 12]);
  });

  it('names each broken field of a bad manifest', () => {
    const error = errorOf(() => scopesFromManifest({ scopes: [{ project_id: 'x', region_id: 1 }] }));
    expect(error.message).toMatch(/^Invalid simulator manifest/);
    expect(error.problems).toEqual([{ path: 'scopes[0].project_id', message: expect.any(String) }]);
  });
});

/**
 * Secrets never reach the logs. A whole service flow runs in-process with the real logger (with its
 * redaction) at level debug, writing into memory: configuration, database start-up (with a failed
 * first attempt), migrations, a collection from the simulator (with retries and a failing scope),
 * web requests carrying cookies, an Authorization header and a password, metrics, readiness and
 * shutdown. Then the captured logs are searched for every secret involved.
 */
import { randomBytes } from 'node:crypto';
import express from 'express';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudClient } from '../../src/cloud/index.js';
import { runCollection } from '../../src/collect/index.js';
import { describeConfig, loadConfig, type Config } from '../../src/config/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { describeDatabaseTarget } from '../../src/db/url.js';
import { REDACTED_PATHS } from '../../src/logger.js';
import { healthRouter } from '../../src/ops/health.js';
import { shutdownService } from '../../src/ops/lifecycle.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { metricsRouter } from '../../src/ops/metrics-route.js';
import { connectWithRetry, migrateOrFail } from '../../src/ops/startup.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { createWebApp } from '../../src/web/app.js';
import { hashPassword } from '../../src/auth/password.js';
import { startService } from '../../src/main.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { memoryLogger } from './helpers.js';

const API_KEY = `sim-key-${randomBytes(12).toString('hex')}`;
const DB_PASSWORD = `db-pw-${randomBytes(12).toString('hex')}`;
const SESSION_COOKIE = `sess-${randomBytes(16).toString('hex')}`;
const BEARER = `bearer-${randomBytes(16).toString('hex')}`;
const FORM_PASSWORD = `form-pw-${randomBytes(12).toString('hex')}`;
const METRICS_TOKEN = `metrics-${randomBytes(12).toString('hex')}`;

/** Every value the simulator holds under a secret field (user_data, password, private_key...). */
function simulatorSecrets(sim: Simulator): string[] {
  const found = new Set<string>();
  const seen = new Set<unknown>();
  const walk = (value: unknown) => {
    if (value === null || typeof value !== 'object' || seen.has(value)) return;
    seen.add(value);
    for (const [key, child] of Object.entries(value)) {
      if (/^(password|userData|user_data|privateKey|private_key|encrypted_password|encryptedPassword)$/.test(key) && typeof child === 'string' && child.length >= 8) {
        found.add(child);
      } else {
        walk(child);
      }
    }
  };
  for (const { project_id, region_id } of sim.manifest().scopes) walk(sim.state.findScope(project_id, region_id));
  return [...found];
}

/** The forms a secret could take in a JSON log line: as is, JSON-escaped, and each long line of it. */
function formsOf(secret: string): string[] {
  const forms = new Set([secret, JSON.stringify(secret).slice(1, -1)]);
  for (const line of secret.split('\n')) if (line.length >= 12) forms.add(line);
  return [...forms];
}

const postgresUrl = process.env.TEST_DATABASE_URL;

describe('log redaction over a full service flow', () => {
  let sim: Simulator;
  let dbName: string | null = null;
  let admin: pg.Client | null = null;

  beforeAll(async () => {
    sim = await startSimulator({ apiKey: API_KEY, seed: 11, size: 12, taskDelayMs: 10 });
    if (postgresUrl) {
      // Postgres on this machine trusts local connections, so the URL can carry a password that is
      // real for the service (it sends it) without the server needing to know it.
      const adminUrl = new URL(postgresUrl);
      adminUrl.pathname = '/postgres';
      admin = new pg.Client({ connectionString: adminUrl.toString() });
      await admin.connect();
      dbName = `ct_ops_redact_${Date.now()}_${randomBytes(3).toString('hex')}`;
      await admin.query(`CREATE DATABASE ${dbName}`);
    }
  });
  afterAll(async () => {
    await sim?.close();
    if (admin && dbName) await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin?.end();
  });

  it('never writes the API key, passwords, session cookies, tokens, user_data or private keys', async () => {
    const secrets = simulatorSecrets(sim);
    // The simulator's company must hold each kind of secret, or this test proves less than it says.
    expect(secrets.some((s) => s.includes('PRIVATE KEY'))).toBe(true);
    expect(secrets.some((s) => s.startsWith('Gpu-'))).toBe(true);
    expect(secrets.some((s) => Buffer.from(s, 'base64').toString('utf8').includes('passwd:'))).toBe(true);

    const { logger, text } = memoryLogger('debug');
    const manifest = sim.manifest();
    const databaseUrl = (() => {
      if (!postgresUrl || !dbName) return undefined;
      const url = new URL(postgresUrl);
      url.pathname = `/${dbName}`;
      url.username = url.username || 'postgres';
      url.password = DB_PASSWORD;
      return url.toString();
    })();
    const config: Config = loadConfig(
      {
        CLOUDTALLY_API_URL: sim.url,
        CLOUDTALLY_API_KEY: API_KEY,
        CLOUDTALLY_CONFIG: '/virtual/cloudtally.json',
        CLOUDTALLY_METRICS_TOKEN: METRICS_TOKEN,
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { CLOUDTALLY_DATA_DIR: 'memory://' }),
      },
      {
        readFile: () =>
          JSON.stringify({ scopes: manifest.scopes, image_ids: manifest.image_ids, free_feature_ids: manifest.free_feature_ids, collect_on_start: false }),
      },
    );
    logger.info({ config: describeConfig(config) }, 'configuration loaded');

    // Start-up: the first attempt goes to a port where nothing listens, with the password in the URL.
    const target = config.database.driver === 'pg' ? describeDatabaseTarget(config.database.url) : 'PGlite in memory';
    let attempts = 0;
    const database: Database = await connectWithRetry(
      () => {
        attempts++;
        if (attempts === 1) return openDatabase({ driver: 'pg', url: `postgres://cloudtally:${DB_PASSWORD}@127.0.0.1:1/cloudtally` });
        return openDatabase(config.database);
      },
      { logger, target, attempts: 3, sleep: async () => undefined },
    );
    await migrateOrFail(() => migrateDatabase(database), { logger, target });

    const metrics = createMetrics({ database, logger, defaultMetrics: false });
    const client = createCloudClient({
      baseUrl: config.cloud.mode === 'remote' ? config.cloud.baseUrl : '',
      apiKey: config.cloud.mode === 'remote' ? config.cloud.apiKey : '',
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      taskPoll: { intervalMs: 10, maxIntervalMs: 20, timeoutMs: 5_000 },
      logger: logger.child({ component: 'cloud' }),
      onRequest: metrics.cloudRequestHook(),
    });

    // A collection with retries (503 on clusters) and a failing scope (keypairs answer 500 for good).
    const [first, second] = manifest.scopes;
    sim.injectFaults(
      { kind: 'status', status: 503, match: { path: /\/clusters?\// }, count: 2 },
      { kind: 'status', status: 500, match: { path: new RegExp(`/keypairs/${second!.project_id}/${second!.region_id}`) }, count: 20 },
    );
    const summary = await runCollection(
      { db: database, client, config, scopes: config.scopes, logger },
      { trigger: 'manual', onProgress: metrics.collectionProgressHook() },
    );
    // The secrets went through the flow: the keypair with a private key and clusters with user_data were collected.
    const [collected] = await database.query<{ keys: string; clusters: string }>(
      `SELECT (SELECT count(*) FROM keypairs WHERE name = 'ci-deploy' AND project_id = $1) AS keys,
              (SELECT count(*) FROM gpu_clusters) AS clusters`,
      [first!.project_id],
    );
    expect(Number(collected!.keys)).toBeGreaterThan(0);
    expect(Number(collected!.clusters)).toBeGreaterThan(0);
    expect(summary.status).toBe('partial');

    // The web side: the web app mounted under the ops routes, as the start command does.
    const app = express();
    app.use(metrics.httpMiddleware());
    app.use(healthRouter({ database, lastGoodCollectionAt: async () => summary.finishedAt, startedAt: new Date(), collectionMaxAgeMs: 3_600_000 }));
    app.use(metricsRouter(metrics, config.metrics));
    app.use(createWebApp({ reports: [], context: () => ({ db: database, config, now: new Date() }), logger, demo: false }));
    const { server, url: base } = await listenOnFreePort(app);
    const headers = { cookie: `ct_session=${SESSION_COOKIE}; other=1`, authorization: `Bearer ${BEARER}` };
    await fetch(`${base}/`, { headers });
    await fetch(`${base}/no-such-page`, { headers });
    await fetch(`${base}/login`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: `username=ops&password=${FORM_PASSWORD}`,
    });
    expect((await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    expect((await fetch(`${base}/readyz`, { headers })).status).toBe(200);

    const report = await shutdownService({ server, client, database }, { logger, deadlineMs: 5_000 });
    expect(report.ok).toBe(true);

    const logs = text();
    // The flow really logged: requests, retries, the run, the failed first connection, the shutdown.
    expect(logs).toContain('"msg":"request"');
    expect(logs).toContain('cloud API request failed, retrying');
    expect(logs).toContain(`"runId":${summary.runId}`);
    expect(logs).toContain('database not reachable yet; retrying');
    expect(logs).toContain('shutdown: database done');

    const named: Array<[string, string]> = [
      ['API key', API_KEY],
      ['session cookie', SESSION_COOKIE],
      ['Authorization header', BEARER],
      ['form password', FORM_PASSWORD],
      ['metrics token', METRICS_TOKEN],
      ['database password', DB_PASSWORD],
      ...secrets.map((s, i): [string, string] => [`simulator secret #${i} (${s.slice(0, 6)}...)`, s]),
    ];
    const leaks = named.filter(([, secret]) => formsOf(secret).some((form) => logs.includes(form))).map(([name]) => name);
    expect(leaks).toEqual([]);
    // No raw API record with its secret fields (they are stripped before anything else sees them).
    expect(logs).not.toMatch(/"(user_data|private_key|password)":"(?!\[redacted\])/);
  });

  it('the started service (startService) logs none of them across sign-in, pages, a collection and stop', async () => {
    const { logger, text } = memoryLogger('debug');
    const manifest = sim.manifest();
    const passwordHash = await hashPassword(FORM_PASSWORD, { N: 2 ** 14 });
    const sessionSecret = `session-secret-${randomBytes(16).toString('hex')}`;
    const databaseUrl = (() => {
      if (!postgresUrl || !dbName) return undefined;
      const url = new URL(postgresUrl);
      url.pathname = `/${dbName}`;
      url.username = url.username || 'postgres';
      url.password = DB_PASSWORD;
      return url.toString();
    })();
    const config = loadConfig(
      {
        CLOUDTALLY_API_URL: sim.url,
        CLOUDTALLY_API_KEY: API_KEY,
        CLOUDTALLY_CONFIG: '/virtual/cloudtally.json',
        CLOUDTALLY_SESSION_SECRET: sessionSecret,
        CLOUDTALLY_METRICS_TOKEN: METRICS_TOKEN,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'debug',
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { CLOUDTALLY_DATA_DIR: 'memory://' }),
      },
      {
        readFile: () =>
          JSON.stringify({
            scopes: manifest.scopes,
            image_ids: manifest.image_ids,
            free_feature_ids: manifest.free_feature_ids,
            users: [{ name: 'ops', role: 'admin', password_hash: passwordHash }],
            collect_on_start: true,
          }),
      },
    );
    if (databaseUrl) {
      // The previous test migrated this database; start from an empty one again.
      await admin!.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin!.query(`CREATE DATABASE ${dbName}`);
    }
    logger.info({ config: describeConfig(config) }, 'configuration loaded');
    const service = await startService(config, logger, { demoHistoryDays: 0 });
    let sessionCookie = '';
    try {
      await service.ready;
      const jar = new Map<string, string>();
      const remember = (res: Response) => {
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(';');
          const eq = pair!.indexOf('=');
          jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
        }
      };
      const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const loginPage = await fetch(`${service.url}/login`);
      remember(loginPage);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await loginPage.text())?.[1];
      expect(csrf).toBeTruthy();
      const login = (password: string) =>
        fetch(`${service.url}/login`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: cookieHeader(), 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${BEARER}` },
          body: new URLSearchParams({ _csrf: csrf!, username: 'ops', password }).toString(),
        });
      expect((await login(`${FORM_PASSWORD}-wrong`)).status).toBe(401);
      const signedIn = await login(FORM_PASSWORD);
      expect(signedIn.status).toBe(303);
      remember(signedIn);
      sessionCookie = [...jar].find(([k]) => /session/i.test(k))?.[1] ?? '';
      expect(sessionCookie.length).toBeGreaterThan(16);
      const home = await fetch(`${service.url}/`, { headers: { cookie: cookieHeader(), authorization: `Bearer ${BEARER}` } });
      expect(home.status).toBe(200);
      expect((await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
      expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    } finally {
      await service.stop();
    }

    const logs = text();
    expect(logs).toContain('"msg":"login"');
    expect(logs).toContain('"msg":"login failed"');
    expect(logs).toContain('"msg":"collection finished"');
    expect(logs).toContain('shutdown: database done');
    const sessionToken = decodeURIComponent(sessionCookie).replace(/^s:/, '').split('.')[0]!;
    const named: Array<[string, string]> = [
      ['API key', API_KEY],
      ['password', FORM_PASSWORD],
      ['password hash', passwordHash],
      ['session secret', sessionSecret],
      ['session cookie', sessionCookie],
      ['session token', sessionToken],
      ['Authorization header', BEARER],
      ['metrics token', METRICS_TOKEN],
      ['database password', DB_PASSWORD],
      ...simulatorSecrets(sim).map((s, i): [string, string] => [`simulator secret #${i} (${s.slice(0, 6)}...)`, s]),
    ];
    const leaks = named.filter(([, secret]) => formsOf(secret).some((form) => logs.includes(form))).map(([name]) => name);
    expect(leaks).toEqual([]);
  });

  it('redaction paths cover the secret field names at the top level and one level down', () => {
    for (const field of ['apiKey', 'password', 'user_data', 'private_key', 'authorization', 'cookie']) {
      expect(REDACTED_PATHS).toContain(field);
      expect(REDACTED_PATHS).toContain(`*.${field}`);
    }
    const { logger, text } = memoryLogger('debug');
    logger.info({ password: 'p1-secret', cluster: { user_data: 'ud-secret', private_key: 'pk-secret' }, req: { headers: { cookie: 'c-secret' } } }, 'x');
    expect(text()).not.toMatch(/p1-secret|ud-secret|pk-secret|c-secret/);
  });
});

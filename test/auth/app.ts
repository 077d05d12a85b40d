import { request, type Dispatcher } from 'undici';
import { hashPassword } from '../../src/auth/password.js';
import type { Limiter } from '../../src/limiter.js';
import type { OidcClientOptions } from '../../src/auth/oidc-client.js';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import { auditReport } from '../../src/reports/audit.js';
import { scheduledStopsReport } from '../../src/reports/idle-scheduled.js';
import { idleReport } from '../../src/reports/idle.js';
import { inventoryReport } from '../../src/reports/inventory.js';
import { createWebApp } from '../../src/web/app.js';
import { createWebAuth } from '../../src/web/auth.js';
import { siteSettingsOf } from '../../src/web/site.js';
import { SIM_NOW, testConfig } from '../actions/helpers.js';
import { Jar } from '../helpers/cookies.js';
import { listenOnFreePort, type Listening } from '../helpers/listen.js';

export const SESSION_SECRET = 'test-session-secret-0123456789abcdef';
export const PASSWORDS = { alice: 'alice-viewer-pw', olivia: 'olivia-operator-pw', adam: 'adam-admin-pw' } as const;

let users: Promise<Array<{ name: string; role: string; password_hash: string }>> | null = null;
/** Three users, one per role, hashed once per test file (with the cheapest accepted cost, for speed). */
export function testUsers() {
  users ??= Promise.all([
    hashPassword(PASSWORDS.alice, { N: 16384 }).then((h) => ({ name: 'alice', role: 'viewer', password_hash: h })),
    hashPassword(PASSWORDS.olivia, { N: 16384 }).then((h) => ({ name: 'olivia', role: 'operator', password_hash: h })),
    hashPassword(PASSWORDS.adam, { N: 16384 }).then((h) => ({ name: 'adam', role: 'admin', password_hash: h })),
  ]);
  return users;
}

/** A configuration with the three users (and whatever else the file gives). */
export async function configWithUsers(file: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Config> {
  return testConfig({ users: await testUsers(), ...file }, { CLOUDTALLY_SESSION_SECRET: SESSION_SECRET, ...env });
}

export interface ActionsApp {
  url: string;
  collectCalls: number;
  close(): Promise<void>;
}

/** The web app as main.ts wires it: idle, inventory, audit and scheduled-stops reports, sign-in and the stop pages. */
export async function startActionsApp(options: {
  db: Database;
  config: Config;
  client: CloudClient;
  passwordChecks?: Limiter;
  now?: () => Date;
  /** A server already listening (its URL known in advance), to answer on instead of a new one. */
  listening?: Listening;
  /** The OpenID Connect client's timeouts and retry. */
  oidc?: OidcClientOptions;
  savedViews?: boolean;
}): Promise<ActionsApp> {
  const logger = createLogger({ level: 'silent' });
  const state: ActionsApp = { url: '', collectCalls: 0, close: async () => undefined };
  const { db, config, client } = options;
  const app = createWebApp({
    reports: [idleReport, inventoryReport, auditReport, scheduledStopsReport],
    context: () => ({ db, config, now: SIM_NOW }),
    logger,
    demo: true,
    secret: config.auth.sessionSecret ?? undefined,
    collectNow: async () => {
      state.collectCalls++;
      return { runId: 7, status: 'running' };
    },
    auth: createWebAuth({ config, db, logger, ...(options.passwordChecks ? { passwordChecks: options.passwordChecks } : {}), ...(options.now ? { now: options.now } : {}), ...(options.oidc ? { oidc: options.oidc } : {}) }),
    actions: { db, client, config, now: () => SIM_NOW, notify: { backoffMs: 5 } },
    ...(options.savedViews ? { savedViews: { db, now: () => SIM_NOW } } : {}),
    site: siteSettingsOf(config),
  });
  if (options.listening) options.listening.server.on('request', app);
  ({ url: state.url, close: state.close } = options.listening ?? (await listenOnFreePort(app)));
  return state;
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A browser-like client: keeps cookies, reads the CSRF token of the last page. */
export class Browser {
  readonly jar = new Jar();
  token = '';
  constructor(
    readonly base: string,
    readonly extraHeaders: Record<string, string> = {},
    readonly dispatcher?: Dispatcher,
  ) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const res = await request(`${this.base}${path}`, { headers: { ...this.extraHeaders, ...this.jar.header(), ...headers }, dispatcher: this.dispatcher });
    this.jar.take(res.headers['set-cookie']);
    const body = await res.body.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    if (token) this.token = token;
    return { status: res.statusCode, headers: res.headers, body };
  }

  /** A form POST; the page's CSRF token is added unless `_csrf` is given (null: none at all). */
  async post(path: string, fields: Record<string, string | string[]>, options: { csrf?: string | null; headers?: Record<string, string> } = {}): Promise<Answer> {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const value of Array.isArray(v) ? v : [v]) form.append(k, value);
    const csrf = options.csrf === undefined ? this.token : options.csrf;
    if (csrf !== null) form.append('_csrf', csrf);
    const res = await request(`${this.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.extraHeaders, ...this.jar.header(), ...(options.headers ?? {}) },
      body: form.toString(),
      dispatcher: this.dispatcher,
    });
    this.jar.take(res.headers['set-cookie']);
    const body = await res.body.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1];
    if (token) this.token = token;
    return { status: res.statusCode, headers: res.headers, body };
  }

  /** Signs in through the login form; returns the POST's answer. */
  async login(username: string, password: string, next = '/reports/idle'): Promise<Answer> {
    await this.get(`/login?next=${encodeURIComponent(next)}`);
    return this.post('/login', { username, password, next });
  }
}

import { createServer } from 'node:http';
import Provider from 'oidc-provider';
import { request } from 'undici';
import { Jar } from '../helpers/cookies.js';
import { SESSION_SECRET } from './app.js';
import { listenOnFreePort, type Listening } from '../helpers/listen.js';

/*
 * A real OpenID Connect provider (oidc-provider) on a loopback port for the sign-in tests: one
 * confidential client that must use PKCE, accounts with a `groups` claim, and the package's
 * development login and consent pages (any password is accepted for a known account).
 */

export const CLIENT_ID = 'cloudtally';
export const CLIENT_SECRET = 'test-oidc-client-secret';

export interface TestAccount {
  groups: string[];
  email?: string;
}

export interface TestProvider {
  issuer: string;
  close(): Promise<void>;
}

/** A server on a free port with no handler yet: its URL is known before what answers on it. */
export async function reservePort(): Promise<Listening> {
  return listenOnFreePort(createServer());
}

/** The provider, on `port` when given (a provider coming back), else on a free port. */
export async function startTestProvider(redirectUri: string, accounts: Record<string, TestAccount>, port?: number): Promise<TestProvider> {
  const listening = port === undefined ? await reservePort() : await listenOnFreePort(createServer(), { port });
  const provider = new Provider(listening.url, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'], email: ['email'], groups: ['groups'] },
    cookies: { keys: ['test-provider-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    async findAccount(_ctx, id) {
      const account = accounts[id];
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({ sub: id, preferred_username: id, name: id, ...(account.email ? { email: account.email } : {}), groups: account.groups }),
      };
    },
  });
  listening.server.on('request', provider.callback());
  return { issuer: listening.url, close: listening.close };
}

/** One answer, its cookies kept in `jar`. */
async function send(jar: Jar, url: string, form?: URLSearchParams) {
  const res = await request(url, {
    method: form ? 'POST' : 'GET',
    headers: { ...jar.header(), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    body: form?.toString(),
  });
  jar.take(res.headers['set-cookie']);
  const body = await res.body.text();
  const location = res.headers.location;
  return { status: res.statusCode, location: typeof location === 'string' ? new URL(location, url).href : null, body };
}

/**
 * Follows the provider's pages from `authorizationUrl` as a person would: signs in as `account`
 * (any password), consents, and returns the URL the provider sends the browser back to (the
 * callback with code, state and iss). `abort` cancels at the login page (access_denied).
 */
export async function passProvider(authorizationUrl: string, account: string, options: { abort?: boolean } = {}): Promise<string> {
  const jar = new Jar();
  const origin = new URL(authorizationUrl).origin;
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 12; step++) {
    const answer = await send(jar, url, form);
    form = undefined;
    if (answer.location) {
      if (!answer.location.startsWith(origin)) return answer.location;
      url = answer.location;
      continue;
    }
    if (answer.status !== 200) throw new Error(`provider answered ${answer.status} at ${url}: ${answer.body.slice(0, 300)}`);
    const abort = /href="([^"]*\/abort)"/.exec(answer.body)?.[1];
    if (options.abort && abort) {
      url = new URL(abort, url).href;
      continue;
    }
    const action = /<form[^>]*action="([^"]+)"/.exec(answer.body)?.[1];
    const prompt = /name="prompt" value="([^"]+)"/.exec(answer.body)?.[1];
    if (!action || !prompt) throw new Error(`no form on the provider's page at ${url}`);
    form = new URLSearchParams({ prompt });
    if (prompt === 'login') {
      form.set('login', account);
      form.set('password', 'any password');
    }
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
  }
  throw new Error('the provider never sent the browser back');
}

/** The `auth.oidc` of the tests: groups map to roles and team scopes. */
export function oidcFile(issuer: string, redirectUrl: string) {
  return {
    auth: {
      oidc: {
        issuer,
        client_id: CLIENT_ID,
        client_secret_env: 'TEST_OIDC_SECRET',
        redirect_url: redirectUrl,
        scopes: ['openid', 'profile', 'email', 'groups'],
        display_name: 'Example SSO',
        roles: { claim: 'groups', map: { finance: 'viewer', 'ml-leads': 'operator', admins: 'admin' }, default: null },
        team_scopes: {
          claim: 'groups',
          map: { finance: 'all', 'ml-leads': { by: 'tag:team', values: ['ml'] }, 'cost-x': { by: 'tag:cost_center', values: ['x'] } },
          unmatched: 'refuse',
        },
      },
    },
  };
}

/** The session secret and the client secret (in the variable auth.oidc.client_secret_env names). */
export const OIDC_ENV = { CLOUDTALLY_SESSION_SECRET: SESSION_SECRET, TEST_OIDC_SECRET: CLIENT_SECRET };


import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { clientOf, seedFromSimulator, startTestSimulator, testConfig } from '../actions/helpers.js';
import { setCookies } from '../helpers/cookies.js';
import { testDatabases } from '../helpers/databases.js';
import { loggableUrl } from '../../src/web/request-log.js';
import { Browser, startActionsApp, type ActionsApp } from './app.js';
import { OIDC_ENV, oidcFile, passProvider, reservePort, startTestProvider, type TestProvider } from './oidc-provider.js';

const ACCOUNTS = {
  finance: { groups: ['finance', 'staff'], email: 'finance@example.com' },
  lead: { groups: ['ml-leads', 'staff'] },
  stranger: { groups: ['staff'] },
  mixed: { groups: ['ml-leads', 'cost-x'] },
  unscoped: { groups: ['admins'] },
};

describe.each(testDatabases())('OpenID Connect sign-in on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;
  let provider: TestProvider;
  let otherProvider: TestProvider;
  /** Added to the app's clock (a flow that took too long). */
  let clockAheadMs = 0;

  beforeAll(async () => {
    const slot = await reservePort();
    const redirect = `${slot.url}/auth/oidc/callback`;
    [db, sim, provider, otherProvider] = await Promise.all([open(), startTestSimulator(), startTestProvider(redirect, ACCOUNTS), startTestProvider(redirect, ACCOUNTS)]);
    client = clientOf(sim);
    const config = testConfig(oidcFile(provider.issuer, redirect), OIDC_ENV);
    await seedFromSimulator(db, sim, config);
    app = await startActionsApp({ db, config, client, listening: slot, now: () => new Date(Date.now() + clockAheadMs) });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close(), provider?.close(), otherProvider?.close()]);
  });

  /** Starts a sign-in in `b`: the provider URL the app sends the browser to. */
  const start = async (b: Browser, returnPath = '/reports/idle') => {
    const answer = await b.get(`/auth/oidc/login?return=${encodeURIComponent(returnPath)}`);
    expect(answer.status).toBe(302);
    const flow = setCookies(answer.headers['set-cookie']).find((c) => c.name.includes('cloudtally.oidc'));
    expect(flow?.attributes).toMatchObject({ httponly: true, samesite: 'Lax', 'max-age': '600' });
    return new URL(String(answer.headers.location));
  };
  const callbackPath = (url: string) => {
    expect(url.startsWith(`${app.url}/auth/oidc/callback?`)).toBe(true);
    return url.slice(app.url.length);
  };
  const signedOut = async (b: Browser) => expect((await b.get('/api/reports/idle')).status).toBe(401);

  it('offers the provider on the login page, and sends pages without a session there', async () => {
    const b = new Browser(app.url);
    const page = await b.get('/reports/idle');
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/login?next=%2Freports%2Fidle');
    const login = await b.get('/login?next=%2Freports%2Fidle');
    expect(login.status).toBe(200);
    expect(login.body).toContain('href="/auth/oidc/login?return=%2Freports%2Fidle">Sign in with Example SSO</a>');
    // No users in the file: no password form.
    expect(login.body).not.toContain('action="/login"');
  });

  it('signs a finance user in through the provider: viewer, everything in sight, API works', async () => {
    const b = new Browser(app.url);
    const authorize = await start(b);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('scope')).toBe('openid profile email groups');
    const back = await b.get(callbackPath(await passProvider(authorize.href, 'finance')));
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe('/reports/idle');
    expect(b.jar.names().some((n) => n.includes('cloudtally.oidc'))).toBe(false);
    const page = await b.get('/reports/idle');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signed in as <strong>finance</strong> (viewer)');
    expect((await b.get('/api/reports/idle')).status).toBe(200);
    const stored = await db.query<{ method: string; role: string; scope: unknown }>("select method, role, scope from auth_sessions where user_name = 'finance'");
    expect(stored).toEqual([{ method: 'oidc', role: 'viewer', scope: null }]);
  });

  it('signs a team lead in with the team scope of their group, and logout ends the session', async () => {
    const b = new Browser(app.url);
    const back = await b.get(callbackPath(await passProvider((await start(b, '/')).href, 'lead')));
    expect(back.status).toBe(303);
    expect(back.headers.location).toBe('/');
    const page = await b.get('/reports/idle');
    expect(page.body).toMatch(/Signed in as <strong>lead<\/strong> \(operator, <span class="access-scope"[^>]*>sees team = ml<\/span>\)/);
    expect((await b.get('/api/reports/idle')).status).toBe(200);
    const out = await b.post('/logout', {});
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/login?logged_out=1');
    await signedOut(b);
  });

  it('refuses a callback whose state was tampered with', async () => {
    const b = new Browser(app.url);
    const callback = new URL(await passProvider((await start(b)).href, 'finance'));
    callback.searchParams.set('state', 'not-the-state-we-sent');
    const answer = await b.get(callbackPath(callback.href));
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('state mismatch');
    // Trying again leads back to the page asked for.
    expect(answer.body).toContain('href="/auth/oidc/login?return=%2Freports%2Fidle"');
    await signedOut(b);
  });

  it('refuses a replayed callback, with and without the flow cookie', async () => {
    const b = new Browser(app.url);
    const callback = callbackPath(await passProvider((await start(b)).href, 'finance'));
    const before = b.jar.copy();
    expect((await b.get(callback)).status).toBe(303);
    const attacker = new Browser(app.url);
    for (const [k, v] of before.cookies) attacker.jar.cookies.set(k, v);
    const replay = await attacker.get(callback);
    expect(replay.status).toBe(400);
    expect(replay.body).toContain('already used or has expired');
    await signedOut(attacker);
    const again = await b.get(callback);
    expect(again.status).toBe(400);
    expect(again.body).toContain('no matching start in this browser');
  });

  it('refuses an ID token carrying another nonce than the one sent', async () => {
    const b = new Browser(app.url);
    const authorize = await start(b);
    authorize.searchParams.set('nonce', 'a-nonce-of-another-flow');
    const answer = await b.get(callbackPath(await passProvider(authorize.href, 'finance')));
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('nonce mismatch');
    await signedOut(b);
  });

  it('refuses an answer from another provider (issuer mismatch)', async () => {
    const b = new Browser(app.url);
    const authorize = await start(b);
    const elsewhere = new URL(authorize.pathname + authorize.search, otherProvider.issuer);
    const callback = await passProvider(elsewhere.href, 'finance');
    expect(new URL(callback).searchParams.get('iss')).toBe(otherProvider.issuer);
    const answer = await b.get(callbackPath(callback));
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('issuer mismatch');
    await signedOut(b);
  });

  it('shows the provider refusing the sign-in (access_denied)', async () => {
    const b = new Browser(app.url);
    const callback = await passProvider((await start(b)).href, 'finance', { abort: true });
    expect(new URL(callback).searchParams.get('error')).toBe('access_denied');
    const answer = await b.get(callbackPath(callback));
    expect(answer.status).toBe(403);
    expect(answer.body).toContain('did not let you in (access denied)');
    await signedOut(b);
  });

  it('refuses a user whose groups map to no role, and one whose groups map to scopes by different tags', async () => {
    const stranger = new Browser(app.url);
    const refused = await stranger.get(callbackPath(await passProvider((await start(stranger)).href, 'stranger')));
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('stranger has no role in cloudtally');
    await signedOut(stranger);

    const mixed = new Browser(app.url);
    const ambiguous = await mixed.get(callbackPath(await passProvider((await start(mixed)).href, 'mixed')));
    expect(ambiguous.status).toBe(403);
    expect(ambiguous.body).toContain('Ambiguous team scope for mixed');
    await signedOut(mixed);

    const unscoped = new Browser(app.url);
    const noTeam = await unscoped.get(callbackPath(await passProvider((await start(unscoped)).href, 'unscoped')));
    expect(noTeam.status).toBe(403);
    expect(noTeam.body).toContain('unscoped has no team scope in cloudtally');
  });

  it('refuses a callback more than 10 minutes after the sign-in started', async () => {
    const b = new Browser(app.url);
    const callback = callbackPath(await passProvider((await start(b)).href, 'finance'));
    clockAheadMs = 10 * 60_000 + 1_000;
    try {
      const answer = await b.get(callback);
      expect(answer.status).toBe(400);
      expect(answer.body).toContain('took too long (over 10 minutes)');
      await signedOut(b);
    } finally {
      clockAheadMs = 0;
    }
  });

  it('refuses a callback without a started flow', async () => {
    const b = new Browser(app.url);
    const answer = await b.get('/auth/oidc/callback?code=abc&state=xyz');
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('no matching start in this browser');
  });
});

describe('OpenID Connect provider that cannot be reached', () => {
  it('keeps the app up: the login page offers the provider, sign-in says it cannot be reached now, and works once it is back', async () => {
    const [{ open }] = testDatabases();
    const db = await open!();
    const gone = await reservePort();
    await gone.close();
    const slot = await reservePort();
    const config = testConfig(oidcFile(gone.url, `${slot.url}/auth/oidc/callback`), OIDC_ENV);
    const sim = await startTestSimulator();
    const client = clientOf(sim);
    const app = await startActionsApp({ db, config, client, listening: slot, oidc: { retryAfterMs: 0 } });
    let back: TestProvider | null = null;
    try {
      const b = new Browser(app.url);
      const tried = await b.get('/auth/oidc/login?return=%2F');
      expect(tried.status).toBe(503);
      expect(tried.body).toContain('Example SSO cannot be reached now');
      const login = await b.get('/login');
      expect(login.status).toBe(200);
      expect(login.body).toContain('Sign in with Example SSO');
      expect(login.body).toContain('Example SSO cannot be reached now; signing in with it may fail');

      back = await startTestProvider(`${slot.url}/auth/oidc/callback`, ACCOUNTS, gone.port);
      const authorize = await b.get('/auth/oidc/login?return=%2F');
      expect(authorize.status).toBe(302);
      const signedIn = await b.get((await passProvider(String(authorize.headers.location), 'finance')).slice(app.url.length));
      expect(signedIn.status).toBe(303);
      expect((await b.get('/api/reports/idle')).status).toBe(200);
      const fresh = await new Browser(app.url).get('/login');
      expect(fresh.body).toContain('Sign in with Example SSO');
      expect(fresh.body).not.toContain('cannot be reached now');
    } finally {
      await back?.close();
      await app.close();
      await client.close();
      await Promise.all([db.close(), sim.close()]);
    }
  });
});

describe('request log', () => {
  it('never logs the callback code or state', () => {
    expect(loggableUrl('/auth/oidc/callback?code=SECRETCODE&state=SECRETSTATE&iss=http%3A%2F%2F127.0.0.1')).toBe('/auth/oidc/callback?code=[redacted]&state=[redacted]&iss=http%3A%2F%2F127.0.0.1');
    expect(loggableUrl('/reports/idle?rule=expired')).toBe('/reports/idle?rule=expired');
  });
});

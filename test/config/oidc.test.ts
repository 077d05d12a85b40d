import { describe, expect, it } from 'vitest';
import { problemsOf } from '../helpers/config-problems.js';
import { verdictOfClaims } from '../../src/auth/oidc-claims.js';
import { authModeOf, listenHostFor } from '../../src/auth/mode.js';
import { describeConfig, loadConfig } from '../../src/config/index.js';

const SESSION = 'a-session-secret-of-at-least-32-chars!';
const CLIENT_SECRET = 'the-client-secret-value';
const ENV = { CLOUDTALLY_SESSION_SECRET: SESSION, SSO_SECRET: CLIENT_SECRET };

const OIDC = {
  issuer: 'https://login.example.com/realms/main',
  client_id: 'cloudtally',
  client_secret_env: 'SSO_SECRET',
  roles: { map: { finance: 'viewer', 'ml-leads': 'operator', admins: 'admin' } },
};

function load(oidc: unknown, env: Record<string, string> = ENV, file: Record<string, unknown> = {}) {
  return loadConfig({ CLOUDTALLY_CONFIG: '/etc/cloudtally.json', CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com', ...env }, { readFile: () => JSON.stringify({ ...file, auth: { oidc } }) });
}

describe('auth.oidc configuration', () => {
  it('reads the provider with its defaults: redirect URL from CLOUDTALLY_PUBLIC_URL, standard scopes, secret from the named variable', () => {
    const config = load(OIDC);
    expect(config.auth.oidc).toEqual({
      issuer: 'https://login.example.com/realms/main',
      clientId: 'cloudtally',
      clientSecret: CLIENT_SECRET,
      redirectUrl: 'https://cloudtally.example.com/auth/oidc/callback',
      scopes: ['openid', 'profile', 'email'],
      displayName: 'single sign-on',
      nameClaim: 'preferred_username',
      roles: { claim: 'groups', map: { finance: 'viewer', 'ml-leads': 'operator', admins: 'admin' }, default: null },
      teamScopes: null,
    });
    // Configured sign-in: not local-only, so any listen address is allowed.
    expect(authModeOf(config)).toEqual({ localOnly: false, passwords: false, proxy: false, oidc: true });
    expect(listenHostFor({ ...config, server: { host: '0.0.0.0', port: 3000 } })).toBe('0.0.0.0');
    expect(JSON.stringify(describeConfig(config))).not.toContain(CLIENT_SECRET);
  });

  it('normalises team scopes like collected tags', () => {
    const config = load(
      { ...OIDC, team_scopes: { map: { 'ml-leads': { by: 'tag:Team', values: ['ML', 'ml', 'CV'] }, finance: 'all' } } },
      ENV,
      { tag_key_case: 'lower', tag_value_case: 'lower' },
    );
    expect(config.auth.oidc!.teamScopes).toEqual({
      claim: 'groups',
      map: { 'ml-leads': { by: 'tag:team', key: 'team', values: ['cv', 'ml'] }, finance: 'all' },
      unmatched: 'refuse',
    });
  });

  it('names the missing variables, never the secret', () => {
    const missingSecret = problemsOf(() => load(OIDC, { CLOUDTALLY_SESSION_SECRET: SESSION }));
    expect(missingSecret).toEqual([{ path: 'auth.oidc.client_secret_env', message: 'names the environment variable SSO_SECRET, which is not set' }]);
    const noSession = problemsOf(() => load(OIDC, { SSO_SECRET: CLIENT_SECRET }));
    expect(noSession.map((p) => p.path)).toEqual(['CLOUDTALLY_SESSION_SECRET']);
    expect(noSession[0]!.message).toMatch(/required when users or auth.oidc are configured/);
    const noUrl = problemsOf(() => loadConfig({ CLOUDTALLY_CONFIG: '/c.json', ...ENV }, { readFile: () => JSON.stringify({ auth: { oidc: OIDC } }) }));
    expect(noUrl).toEqual([{ path: 'auth.oidc.redirect_url', message: expect.stringMatching(/required when CLOUDTALLY_PUBLIC_URL is not set/) }]);
  });

  it.each([
    ['issuer', { issuer: 'http://login.example.com' }, /https URL \(http only for a loopback host/],
    ['issuer', { issuer: 'not a url' }, /absolute URL/],
    ['issuer', { issuer: 'https://user:pw@login.example.com' }, /credentials/],
    ['client_id', { client_id: '' }, /must not be empty/],
    ['client_secret_env', { client_secret_env: 'the secret' }, /environment variable name/],
    ['redirect_url', { redirect_url: 'https://cloudtally.example.com/elsewhere' }, /must end in \/auth\/oidc\/callback/],
    ['redirect_url', { redirect_url: 'ftp://cloudtally.example.com/auth/oidc/callback' }, /http\(s\) URL/],
    ['scopes', { scopes: ['profile', 'email'] }, /must include "openid"/],
    ['scopes[1]', { scopes: ['openid', 'two words'] }, /scope name/],
    ['display_name', { display_name: '' }, /must not be empty/],
    ['name_claim', { name_claim: 'a claim' }, /claim name/],
    ['roles', { roles: { map: {} } }, /at least one claim value to a role, or give a default/],
    ['roles.map.finance', { roles: { map: { finance: 'boss' } } }, /one of viewer, operator, admin/],
    ['roles.extra', { roles: { map: { a: 'viewer' }, extra: 1 } }, /./],
    ['team_scopes.map.ml', { team_scopes: { map: { ml: { by: 'team', values: ['ml'] } } } }, /./],
    ['team_scopes.map.ml', { team_scopes: { map: { ml: 'everything' } } }, /"all" or/],
    ['team_scopes.unmatched', { team_scopes: { map: { ml: 'all' }, unmatched: 'maybe' } }, /"refuse" or "all"/],
    ['unknown', { unknown: true }, /./],
  ])('refuses a bad %s', (path, change, message) => {
    const problems = problemsOf(() => load({ ...OIDC, ...change }));
    const problem = problems.find((p) => p.path.startsWith(`auth.oidc.${path}`) || (path === 'unknown' && p.path === 'auth.oidc'));
    expect(problem, JSON.stringify(problems)).toBeDefined();
    expect(problem!.message).toMatch(message);
  });

  it('allows an http issuer on a loopback host (local providers and tests)', () => {
    expect(load({ ...OIDC, issuer: 'http://127.0.0.1:8080' }).auth.oidc!.issuer).toBe('http://127.0.0.1:8080');
    expect(load({ ...OIDC, issuer: 'http://localhost:8080/realms/x' }).auth.oidc!.issuer).toBe('http://localhost:8080/realms/x');
  });
});

describe('claims to role and team scope', () => {
  const mapping = load({
    ...OIDC,
    roles: { claim: 'roles', map: { finance: 'viewer', 'ml-leads': 'operator', admins: 'admin' }, default: null },
    team_scopes: {
      claim: 'groups',
      map: { ml: { by: 'tag:team', values: ['ml'] }, cv: { by: 'tag:team', values: ['cv'] }, finance: 'all', cc: { by: 'tag:cost_center', values: ['x'] } },
    },
  }).auth.oidc!;

  it('takes the most trusted mapped role, the name claim then email then sub, and a string claim as one value', () => {
    expect(verdictOfClaims({ sub: 's1', preferred_username: 'ann', roles: ['finance', 'admins'], groups: 'finance' }, mapping)).toEqual({ kind: 'user', name: 'ann', role: 'admin', scope: null });
    expect(verdictOfClaims({ sub: 's1', email: 'bo@example.com', roles: 'ml-leads', groups: ['ml'] }, mapping)).toMatchObject({ name: 'bo@example.com', role: 'operator' });
    expect(verdictOfClaims({ sub: 's1', roles: 'ml-leads', groups: ['ml'] }, mapping)).toMatchObject({ name: 's1' });
  });

  it('merges the values of scopes by one tag, lets "all" win, and refuses different tags or no match', () => {
    expect(verdictOfClaims({ sub: 'x', roles: 'finance', groups: ['cv', 'ml'] }, mapping)).toMatchObject({ kind: 'user', scope: { by: 'tag:team', key: 'team', values: ['cv', 'ml'] } });
    expect(verdictOfClaims({ sub: 'x', roles: 'finance', groups: ['ml', 'finance'] }, mapping)).toMatchObject({ kind: 'user', scope: null });
    expect(verdictOfClaims({ sub: 'x', roles: 'finance', groups: ['ml', 'cc'] }, mapping)).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/Ambiguous team scope/) });
    expect(verdictOfClaims({ sub: 'x', roles: 'finance', groups: ['other'] }, mapping)).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/no team scope/) });
    expect(verdictOfClaims({ sub: 'x', roles: 'finance', groups: ['other'] }, { ...mapping, teamScopes: { ...mapping.teamScopes!, unmatched: 'all' } })).toMatchObject({ kind: 'user', scope: null });
  });

  it('refuses without a mapped role unless there is a default', () => {
    expect(verdictOfClaims({ sub: 'x', roles: ['nobody'], groups: 'finance' }, mapping)).toMatchObject({ kind: 'refused', reason: expect.stringMatching(/has no role/) });
    expect(verdictOfClaims({ sub: 'x', roles: [42, 'nobody'], groups: 'finance' }, { ...mapping, roles: { ...mapping.roles, default: 'viewer' } })).toMatchObject({ kind: 'user', role: 'viewer' });
  });
});

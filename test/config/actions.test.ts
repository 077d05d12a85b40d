import { describe, expect, it } from 'vitest';
import { problemsOf } from '../helpers/config-problems.js';
import { hashPassword } from '../../src/auth/password.js';
import { describeConfig, loadConfig } from '../../src/config/index.js';

const SECRET = 'a-session-secret-of-at-least-32-chars!';

function load(file: unknown, env: Record<string, string> = {}) {
  return loadConfig({ CLOUDTALLY_CONFIG: '/etc/cloudtally.json', ...env }, { readFile: () => JSON.stringify(file) });
}

const hash = await hashPassword('pw', { N: 16384 });

describe('users, sign-in and actions settings', () => {
  it('has sensible defaults: no users (local-only), idle rules on, no webhook, 24 h grace, owner tag "owner"', () => {
    const config = loadConfig({});
    expect(config.users).toEqual([]);
    expect(config.auth).toEqual({ sessionSecret: null, sessionTtlHours: 12, loginThrottle: { freeFailuresPerAccount: 5, freeFailuresPerAddress: 20, firstDelaySeconds: 1, maxDelaySeconds: 900, forgetAfterHours: 24 }, proxy: null, oidc: null });
    expect(config.idleRules).toEqual({
      noOwner: { enabled: true, minRunningDays: 30 },
      expired: { enabled: true, tagKey: 'expires' },
      offHours: { enabled: true, tagKey: 'env', values: ['dev', 'test', 'sandbox'], timezone: 'UTC', workingHours: { start: '08:00', end: '20:00' }, workingDays: [1, 2, 3, 4, 5] },
      quarantine: { enabled: true, securityGroups: [] },
      clusterCleanUp: { enabled: true, taskStatuses: ['CLUSTER_CLEAN_UP'] },
    });
    expect(config.notifications).toBeNull();
    expect(config.stopGraceHours).toBe(24);
    expect(config.ownerTagKey).toBe('owner');
  });

  it('reads users, sessions, a trusted proxy, rules and the webhook from the file', () => {
    const config = load(
      {
        users: [
          { name: 'alice', role: 'viewer', password_hash: hash },
          { name: 'olivia', role: 'operator', password_hash: hash, scope: { by: 'tag:Team', values: [' ML ', 'cv', 'ml'] } },
        ],
        auth: {
          session_ttl_hours: 8,
          login_throttle: { free_failures_per_account: 3 },
          proxy: { header: 'X-Auth-Request-User', groups_header: 'X-Auth-Request-Groups', trusted_addresses: ['10.0.0.0/8', '::1'], role_map: { ops: 'operator' }, default_role: 'viewer' },
        },
        tag_aliases: { 'owner-email': 'owner', expiry: 'expires-at' },
        owner_tag_key: 'Owner-Email',
        idle_rules: {
          no_owner: { min_running_days: 7 },
          expired: { tag_key: 'Expiry' },
          off_hours: { values: ['Dev', 'QA'], timezone: 'Europe/Berlin', working_hours: { start: '07:30', end: '19:00' }, working_days: [5, 1, 2] },
          quarantine: { security_groups: ['sg-quarantine'] },
        },
        notifications: { webhook_url: 'https://hooks.slack.com/services/T/B/secret', timeout_ms: 2000, retries: 1, app_url: 'https://tally.example.com/' },
        stop_grace_hours: 48,
      },
      { CLOUDTALLY_SESSION_SECRET: SECRET },
    );
    expect(config.users).toEqual([
      { name: 'alice', role: 'viewer', passwordHash: hash, scope: null },
      // The scope's key and values are normalised like collected tags (keys lower case, values trimmed), sorted, once each.
      { name: 'olivia', role: 'operator', passwordHash: hash, scope: { by: 'tag:team', key: 'team', values: ['ML', 'cv', 'ml'] } },
    ]);
    expect(config.auth).toEqual({
      sessionSecret: SECRET,
      sessionTtlHours: 8,
      loginThrottle: { freeFailuresPerAccount: 3, freeFailuresPerAddress: 20, firstDelaySeconds: 1, maxDelaySeconds: 900, forgetAfterHours: 24 },
      proxy: { header: 'x-auth-request-user', groupsHeader: 'x-auth-request-groups', trustedAddresses: ['10.0.0.0/8', '::1'], roleMap: { ops: 'operator' }, defaultRole: 'viewer', teamScopes: null },
      oidc: null,
    });
    // Tag keys go through the same case and aliases as the collected tags.
    expect(config.ownerTagKey).toBe('owner');
    expect(config.idleRules.expired.tagKey).toBe('expires-at');
    expect(config.idleRules.noOwner.minRunningDays).toBe(7);
    expect(config.idleRules.offHours).toMatchObject({ values: ['dev', 'qa'], timezone: 'Europe/Berlin', workingHours: { start: '07:30', end: '19:00' }, workingDays: [1, 2, 5] });
    expect(config.notifications).toEqual({ webhookUrl: 'https://hooks.slack.com/services/T/B/secret', timeoutMs: 2000, retries: 1, appUrl: 'https://tally.example.com', allowPrivateNetwork: false });
    expect(config.stopGraceHours).toBe(48);
  });

  it('takes the webhook URL from CLOUDTALLY_WEBHOOK_URL, with defaults for the rest', () => {
    const config = load({}, { CLOUDTALLY_WEBHOOK_URL: 'https://hooks.example.com/x' });
    expect(config.notifications).toEqual({ webhookUrl: 'https://hooks.example.com/x', timeoutMs: 5000, retries: 2, appUrl: null, allowPrivateNetwork: false });
  });

  it('refuses a stop-notice webhook at a literal non-public address unless "notifications" allows private networks', () => {
    const message = (kind: string) =>
      `its host is a non-public address (${kind}): notifications go only to public addresses unless "notifications" says "allow_private_network": true (docs/notifications.md)`;
    expect(problemsOf(() => load({ notifications: { webhook_url: 'http://169.254.169.254/latest/meta-data/?token=t0ken' } }))).toEqual([
      { path: 'notifications.webhook_url', message: message('link-local (169.254.0.0/16)') },
    ]);
    expect(problemsOf(() => load({}, { CLOUDTALLY_WEBHOOK_URL: 'http://[::ffff:127.0.0.1]:5432/' }))).toEqual([
      { path: 'CLOUDTALLY_WEBHOOK_URL', message: message('IPv4-mapped loopback (127.0.0.0/8)') },
    ]);
    expect(load({ notifications: { allow_private_network: true } }, { CLOUDTALLY_WEBHOOK_URL: 'http://10.0.0.9/hook' }).notifications).toMatchObject({
      webhookUrl: 'http://10.0.0.9/hook',
      allowPrivateNetwork: true,
    });
  });

  it('lists every problem at once, never echoing a password hash', () => {
    const badHash = 'scrypt$999$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==';
    const problems = problemsOf(() =>
      load({
        users: [
          { name: 'alice', role: 'superuser', password_hash: hash },
          { name: 'Alice', role: 'viewer', password_hash: badHash },
          { name: 'bob smith', role: 'viewer', password_hash: hash },
        ],
        auth: { proxy: { header: 'x user', trusted_addresses: ['10.0.0.0/33', 'proxy.internal'], role_map: { ops: 'god' } } },
        idle_rules: { off_hours: { timezone: 'Mars/Olympus', working_hours: { start: '20:00', end: '08:00' }, working_days: [0] }, no_owner: { min_running_days: -1 } },
        notifications: { timeout_ms: 10 },
        stop_grace_hours: -2,
      }),
    );
    const paths = problems.map((p) => p.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'users[0].role',
        'users[1].password_hash',
        'users[2].name',
        'auth.proxy.header',
        'auth.proxy.trusted_addresses[0]',
        'auth.proxy.trusted_addresses[1]',
        'auth.proxy.role_map.ops',
        'idle_rules.off_hours.timezone',
        'idle_rules.off_hours.working_hours',
        'idle_rules.off_hours.working_days[0]',
        'idle_rules.no_owner.min_running_days',
        'notifications.timeout_ms',
        'stop_grace_hours',
      ]),
    );
    expect(problems.find((p) => p.path === 'users[1].password_hash')!.message).toMatch(/power of two/);
    expect(JSON.stringify(problems)).not.toContain('aGFzaGhhc2hoYXNoaGFzaA');
    expect(JSON.stringify(problems)).not.toContain(hash.split('$')[5]!);
  });

  it('needs a session secret (32+ characters) once users are configured, and rejects repeated names', () => {
    const users = [
      { name: 'alice', role: 'viewer', password_hash: hash },
      { name: 'ALICE', role: 'admin', password_hash: hash },
    ];
    expect(problemsOf(() => load({ users }))).toEqual([
      { path: 'users[1].name', message: 'repeats users[0] (names are compared case-insensitively)' },
      { path: 'CLOUDTALLY_SESSION_SECRET', message: expect.stringContaining('is required when users or auth.oidc are configured') },
    ]);
    expect(problemsOf(() => load({ users: users.slice(0, 1) }, { CLOUDTALLY_SESSION_SECRET: 'short' }))).toEqual([
      { path: 'CLOUDTALLY_SESSION_SECRET', message: 'must be at least 32 characters (e.g. openssl rand -hex 32)' },
    ]);
    expect(problemsOf(() => load({ notifications: { retries: 1 } }))).toEqual([{ path: 'notifications.webhook_url', message: expect.stringContaining('is required') }]);
  });

  it('keeps hashes, the session secret and the webhook URL out of the loggable copy', () => {
    const config = load({ users: [{ name: 'alice', role: 'viewer', password_hash: hash }], notifications: { webhook_url: 'https://hooks.example.com/T/secret' } }, { CLOUDTALLY_SESSION_SECRET: SECRET });
    const safe = JSON.stringify(describeConfig(config));
    expect(safe).not.toContain(hash);
    expect(safe).not.toContain(SECRET);
    expect(safe).not.toContain('hooks.example.com/T/secret');
    expect(config.users[0]!.passwordHash).toBe(hash); // the real config is untouched
  });
});

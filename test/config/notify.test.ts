/**
 * Channels, SMTP, the outbox's retries and scheduled deliveries in the configuration: defaults,
 * every validation error naming its path, and secrets (webhook URLs, signing secrets, the SMTP
 * URL) kept out of errors and the loggable copy.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/index.js';
import { allReports } from '../../src/reports/index.js';
import type { ReportDefinition } from '../../src/reports/report.js';

const reports = allReports() as ReportDefinition<unknown, unknown, unknown>[];
const HOOK = 'https://hooks.example.com/services/T0/B0/xoxb-hook-token';
const SMTP = 'smtps://alerts:smtp-pa55word@mail.example.com:465';

function load(file: unknown, env: Record<string, string> = {}) {
  return loadConfig({ CLOUDTALLY_CONFIG: '/etc/cloudtally.json', ...env }, { readFile: () => JSON.stringify(file), reports, hostname: 'tally-1' });
}

function problemsOf(fn: () => unknown): Array<{ path: string; message: string }> {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    for (const secret of ['xoxb-hook-token', 'smtp-pa55word', 'signing-secret']) expect((err as Error).message).not.toContain(secret);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

const channels = [
  { name: 'finance-hook', type: 'webhook', url: HOOK, secret_env: 'FINANCE_HOOK_SECRET' },
  { name: 'finance-mail', type: 'email', to: ['finance@example.com'] },
];

describe('notification channels and scheduled deliveries', () => {
  it('has none by default, and default retries', () => {
    const config = loadConfig({});
    expect(config.channels).toEqual([]);
    expect(config.smtp).toBeNull();
    expect(config.deliveries).toEqual([]);
    expect(config.outbox).toEqual({ maxAttempts: 8, firstRetrySeconds: 30, maxRetrySeconds: 3600, timeoutMs: 10_000, intervalSeconds: 15, overdueAfterMinutes: 30, maxSmtpAnswerBytes: 65_536 });
  });

  it('reads the issue\'s example: channels, SMTP, sender and a monthly delivery', () => {
    const config = load(
      {
        channels,
        deliveries: [{ report: 'monthly', params: { by: 'tag:cost-center' }, schedule: '0 7 1 * *', notify: ['finance-mail'] }],
        outbox: { max_attempts: 5, first_retry_seconds: 60 },
      },
      { CLOUDTALLY_SMTP_URL: SMTP, FINANCE_HOOK_SECRET: 'signing-secret' },
    );
    expect(config.channels).toEqual([
      { name: 'finance-hook', type: 'webhook', url: HOOK, secretEnv: 'FINANCE_HOOK_SECRET', secret: 'signing-secret', allowPrivateNetwork: false },
      { name: 'finance-mail', type: 'email', to: ['finance@example.com'], allowPrivateNetwork: false },
    ]);
    expect(config.smtp).toEqual({ url: SMTP, host: 'mail.example.com:465', from: 'cloudtally@tally-1' });
    expect(config.deliveries).toEqual([{ id: '0', name: null, report: 'monthly', params: { by: 'tag:cost-center' }, schedule: '0 7 1 * *', notify: ['finance-mail'], format: 'csv', scope: null }]);
    expect(config.outbox).toMatchObject({ maxAttempts: 5, firstRetrySeconds: 60 });

    const safe = JSON.stringify(describeConfig(config));
    for (const secret of ['xoxb-hook-token', 'smtp-pa55word', 'signing-secret']) expect(safe).not.toContain(secret);
    expect(safe).toContain('mail.example.com:465');
  });

  it('takes the sender from CLOUDTALLY_MAIL_FROM, with or without a display name', () => {
    expect(load({}, { CLOUDTALLY_SMTP_URL: SMTP, CLOUDTALLY_MAIL_FROM: 'Cloudtally <tally@example.com>' }).smtp?.from).toBe('Cloudtally <tally@example.com>');
    expect(problemsOf(() => load({}, { CLOUDTALLY_SMTP_URL: SMTP, CLOUDTALLY_MAIL_FROM: 'not an address' }))).toEqual([
      { path: 'CLOUDTALLY_MAIL_FROM', message: 'must be a mail address, e.g. cloudtally@example.com or "Cloudtally <cloudtally@example.com>"' },
    ]);
    expect(problemsOf(() => load({}, { CLOUDTALLY_MAIL_FROM: 'tally@example.com' }))).toEqual([
      { path: 'CLOUDTALLY_MAIL_FROM', message: 'is set but CLOUDTALLY_SMTP_URL is not: mail cannot be sent without an SMTP server' },
    ]);
  });

  it('refuses a bad SMTP URL without echoing it', () => {
    expect(problemsOf(() => load({}, { CLOUDTALLY_SMTP_URL: 'https://alerts:smtp-pa55word@mail.example.com' }))).toEqual([
      { path: 'CLOUDTALLY_SMTP_URL', message: 'must be an smtp:// or smtps:// URL (e.g. smtps://user:password@mail.example.com:465)' },
    ]);
  });

  it('names each problem of the channels by its path', () => {
    const problems = problemsOf(() =>
      load({
        channels: [
          { name: 'finance-hook', type: 'webhook', url: HOOK, secret_env: 'FINANCE_HOOK_SECRET' },
          { name: 'finance-hook', type: 'webhook', url: 'ftp://x' },
          { name: 'finance-mail', type: 'email', to: [] },
          { name: 'ops mail', type: 'email', to: ['ops@example.com', 'nope'] },
          { name: 'pager', type: 'sms' },
        ],
      }),
    );
    expect(problems).toEqual([
      { path: 'channels[1].url', message: 'must be an absolute http(s) URL' },
      { path: 'channels[2].to', message: 'must list at least one address' },
      { path: 'channels[3].name', message: 'must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit' },
      { path: 'channels[3].to[1]', message: 'must be a mail address' },
      { path: 'channels[4].type', message: 'must have "type": "webhook" or "email"' },
    ]);
  });

  it('needs unique names, the signing secret\'s variable, and CLOUDTALLY_SMTP_URL for email', () => {
    const problems = problemsOf(() => load({ channels: [...channels, { name: 'finance-hook', type: 'webhook', url: HOOK }] }));
    expect(problems).toEqual([
      { path: 'channels[0].secret_env', message: 'names FINANCE_HOOK_SECRET, which is not set (or empty)' },
      { path: 'channels[1]', message: 'is an email channel, which needs CLOUDTALLY_SMTP_URL (smtp:// or smtps://)' },
      { path: 'channels[2].name', message: 'repeats channels[0] ("finance-hook"); channel names must be unique' },
    ]);
  });

  it('refuses a webhook or SMTP server at a literal non-public address unless the channel allows private networks', () => {
    const hook = (url: string, extra: Record<string, unknown> = {}) => ({ name: 'internal', type: 'webhook', url, ...extra });
    const refusal = (kind: string, what = 'the host') =>
      `${what} is a non-public address (${kind}): notifications go only to public addresses unless the channel says "allow_private_network": true (docs/notifications.md)`;
    const cases: Array<[string, string]> = [
      ['http://169.254.169.254/latest/meta-data/', 'link-local (169.254.0.0/16)'],
      ['http://[::ffff:127.0.0.1]:5432/', 'IPv4-mapped loopback (127.0.0.0/8)'],
      ['http://2130706433/hook', 'loopback (127.0.0.0/8)'],
      ['http://0x7f.1/hook', 'loopback (127.0.0.0/8)'],
      ['http://localhost:8080/hook', 'loopback (localhost)'],
      ['https://10.1.2.3/hook?token=xoxb-hook-token', 'private (10.0.0.0/8)'],
      ['http://[fe80::1]/', 'link-local (fe80::/10)'],
      ['http://[fd00::5]/', 'unique-local (fc00::/7)'],
      ['http://100.64.0.7/', 'carrier-grade NAT (100.64.0.0/10)'],
      ['http://0.0.0.0:9000/', '"this network" (0.0.0.0/8)'],
    ];
    for (const [url, kind] of cases) {
      expect(problemsOf(() => load({ channels: [hook(url)] })), url).toEqual([{ path: 'channels[0].url', message: refusal(kind) }]);
      // Allowed, the channel loads (and says so).
      expect(load({ channels: [hook(url, { allow_private_network: true })] }).channels[0]).toMatchObject({ url, allowPrivateNetwork: true });
    }
    // A name is checked when it is resolved, at each delivery (it may change): not here.
    expect(load({ channels: [hook('https://hooks.internal.example.com/x')] }).channels[0]).toMatchObject({ allowPrivateNetwork: false });
    expect(() => load({ channels: [hook(HOOK, { allow_private_network: 'yes' })] })).toThrow('channels[0].allow_private_network');

    // Email: the SMTP server is the destination; each email channel that would use a private one must allow it.
    const mail = (extra: Record<string, unknown> = {}) => ({ name: 'ops-mail', type: 'email', to: ['ops@example.com'], ...extra });
    const privateSmtp = { CLOUDTALLY_SMTP_URL: 'smtp://alerts:smtp-pa55word@192.168.1.20:25' };
    expect(problemsOf(() => load({ channels: [mail()] }, privateSmtp))).toEqual([
      { path: 'channels[0]', message: refusal('private (192.168.0.0/16)', 'sends mail through CLOUDTALLY_SMTP_URL, whose host') },
    ]);
    expect(load({ channels: [mail({ allow_private_network: true })] }, privateSmtp).channels[0]).toMatchObject({ allowPrivateNetwork: true });
    expect(load({ channels: [mail()] }, { CLOUDTALLY_SMTP_URL: SMTP }).channels[0]).toMatchObject({ allowPrivateNetwork: false });
  });

  it('checks deliveries: known channels, a known report, its parameters through the report\'s own schema, a valid cron', () => {
    const env = { CLOUDTALLY_SMTP_URL: SMTP, FINANCE_HOOK_SECRET: 'signing-secret' };
    const problems = problemsOf(() =>
      load(
        {
          channels,
          deliveries: [
            { report: 'monthly', params: { by: 'tag:team', period: '2025-13' }, schedule: '0 7 1 * *', notify: ['finance-mail', 'finance-chat'] },
            { report: 'no-such-report', schedule: '0 7 * * 1', notify: ['finance-mail'] },
            { report: 'cost', params: { colour: 'red' }, schedule: 'every monday', notify: [] },
            { name: 'weekly', report: 'cost', schedule: '0 7 * * 1', notify: ['finance-hook'], format: 'xlsx' },
          ],
        },
        env,
      ),
    );
    expect(problems.map((p) => p.path)).toEqual([
      'deliveries[2].schedule',
      'deliveries[2].notify',
      'deliveries[3].format',
    ]);
    // Shape problems first; once the shape is right the references are checked.
    const second = problemsOf(() =>
      load(
        {
          channels,
          deliveries: [
            { report: 'monthly', params: { by: 'tag:team', period: '2025-13' }, schedule: '0 7 1 * *', notify: ['finance-mail', 'finance-chat'] },
            { report: 'no-such-report', schedule: '0 7 * * 1', notify: ['finance-mail'] },
            { report: 'cost', params: { colour: 'red' }, schedule: '0 7 * * 1', notify: ['finance-hook'] },
            { name: 'twice', report: 'cost', schedule: '0 7 * * 1', notify: ['finance-hook'] },
            { name: 'twice', report: 'cost', schedule: '0 8 * * 1', notify: ['finance-hook'] },
          ],
        },
        env,
      ),
    );
    expect(second[0]).toEqual({ path: 'deliveries[0].notify[1]', message: '"finance-chat" is not a channel in "channels" (configured: finance-hook, finance-mail)' });
    expect(second[1]!.path).toBe('deliveries[0].params.period');
    expect(second[2]!.path).toBe('deliveries[1].report');
    expect(second[2]!.message).toMatch(/^is not a report; one of .*\bmonthly\b/);
    expect(second.slice(3)).toEqual([
      { path: 'deliveries[2].params.colour', message: 'is not a parameter of this report' },
      { path: 'deliveries[4].name', message: 'repeats deliveries[3] ("twice"); delivery names must be unique' },
    ]);
  });

  it('accepts numbers, booleans and lists as parameter values (as a query string would carry them)', () => {
    const config = load(
      { channels, deliveries: [{ report: 'collection-health', params: { days: 30, view: 'runs' }, schedule: '0 6 * * *', notify: ['finance-hook'] }] },
      { CLOUDTALLY_SMTP_URL: SMTP, FINANCE_HOOK_SECRET: 'signing-secret' },
    );
    expect(config.deliveries[0]!.params).toEqual({ days: '30', view: 'runs' });
  });
});

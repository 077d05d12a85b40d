/**
 * Notifications never reach a non-public address unless the channel allows it: every address a
 * name resolves to is checked, the connection goes to a checked address (no second resolution,
 * so no DNS rebinding), literal addresses in any form are refused, and what a destination answers
 * is kept only as its status and length. Webhooks (undici) and SMTP (nodemailer), against real
 * receivers on 127.0.0.1 reached through names that only the test's resolver knows.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { literalPrivateHost, privateAddressKind } from '../../src/config/destinations.js';
import { sendWebhook } from '../../src/actions/notify.js';
import { checkedAddresses, type ResolvedAddress, type Resolver } from '../../src/notify/destination.js';
import { createMailer } from '../../src/notify/email.js';
import { postJson } from '../../src/notify/http.js';
import type { StoredMessage } from '../../src/notify/outbox.js';

describe('which addresses are not public', () => {
  it('names the range of private, loopback, link-local, unique-local, CGNAT, "this network" and IPv4-mapped addresses', () => {
    const cases: Array<[string, string | null]> = [
      ['127.0.0.1', 'loopback (127.0.0.0/8)'],
      ['127.255.255.254', 'loopback (127.0.0.0/8)'],
      ['10.20.30.40', 'private (10.0.0.0/8)'],
      ['172.16.0.1', 'private (172.16.0.0/12)'],
      ['172.31.255.255', 'private (172.16.0.0/12)'],
      ['172.32.0.1', null],
      ['192.168.1.1', 'private (192.168.0.0/16)'],
      ['169.254.169.254', 'link-local (169.254.0.0/16)'],
      ['100.64.0.1', 'carrier-grade NAT (100.64.0.0/10)'],
      ['100.127.255.255', 'carrier-grade NAT (100.64.0.0/10)'],
      ['100.128.0.1', null],
      ['0.0.0.0', '"this network" (0.0.0.0/8)'],
      ['0.1.2.3', '"this network" (0.0.0.0/8)'],
      ['224.0.0.1', 'multicast (224.0.0.0/4)'],
      ['255.255.255.255', 'reserved (240.0.0.0/4)'],
      ['8.8.8.8', null],
      ['93.184.216.34', null],
      ['::1', 'loopback (::1)'],
      ['::', 'unspecified (::)'],
      ['fe80::1', 'link-local (fe80::/10)'],
      ['fe80::1%eth0', 'link-local (fe80::/10)'],
      ['febf:ffff::1', 'link-local (fe80::/10)'],
      ['fc00::1', 'unique-local (fc00::/7)'],
      ['fd12:3456:789a::1', 'unique-local (fc00::/7)'],
      ['::ffff:127.0.0.1', 'IPv4-mapped loopback (127.0.0.0/8)'],
      ['::ffff:7f00:1', 'IPv4-mapped loopback (127.0.0.0/8)'],
      ['[::ffff:a9fe:a9fe]', 'IPv4-mapped link-local (169.254.0.0/16)'],
      ['::ffff:10.0.0.1', 'IPv4-mapped private (10.0.0.0/8)'],
      ['::ffff:8.8.8.8', null],
      ['64:ff9b::a9fe:a9fe', 'NAT64 link-local (169.254.0.0/16)'],
      ['2002:7f00:1::', '6to4 loopback (127.0.0.0/8)'],
      ['2001:4860:4860::8888', null],
      ['not an address', null],
    ];
    for (const [address, kind] of cases) expect(privateAddressKind(address), address).toBe(kind);
  });

  it('reads the host of a URL in every form the URL parser accepts', () => {
    expect(literalPrivateHost('http://169.254.169.254/latest/meta-data/')).toBe('link-local (169.254.0.0/16)');
    expect(literalPrivateHost('http://[::ffff:127.0.0.1]:5432/')).toBe('IPv4-mapped loopback (127.0.0.0/8)');
    expect(literalPrivateHost('http://2130706433/')).toBe('loopback (127.0.0.0/8)');
    expect(literalPrivateHost('http://0177.0.0.1/')).toBe('loopback (127.0.0.0/8)');
    expect(literalPrivateHost('http://LOCALHOST./x')).toBe('loopback (localhost)');
    expect(literalPrivateHost('http://admin.localhost/x')).toBe('loopback (localhost)');
    expect(literalPrivateHost('smtp://u:p@10.0.0.5:25')).toBe('private (10.0.0.0/8)');
    expect(literalPrivateHost('https://hooks.example.com/x')).toBeNull();
    expect(literalPrivateHost('https://8.8.8.8/x')).toBeNull();
  });
});

/** A resolver that knows the test's names, counting how often each is asked. */
function resolverOf(answers: Record<string, string[] | (() => string[])>) {
  const asked: string[] = [];
  const resolve: Resolver = async (hostname) => {
    asked.push(hostname);
    const answer = answers[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return (typeof answer === 'function' ? answer() : answer).map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}

describe('checking every resolved address', () => {
  it('refuses a name when any of its addresses is not public, and returns them all when every one is', async () => {
    const { resolve } = resolverOf({ 'mixed.test': ['93.184.216.34', '10.0.0.8'], 'public.test': ['93.184.216.34', '2606:2800:220:1::1'] });
    await expect(checkedAddresses('mixed.test', { allowPrivateNetwork: false, resolve })).rejects.toMatchObject({
      code: 'EPRIVATEDESTINATION',
      message: 'mixed.test resolves to 10.0.0.8, a non-public address (private (10.0.0.0/8)); the channel does not allow private networks ("allow_private_network": true)',
    });
    expect((await checkedAddresses('public.test', { allowPrivateNetwork: false, resolve })).map((a) => a.address)).toEqual(['93.184.216.34', '2606:2800:220:1::1']);
    expect((await checkedAddresses('mixed.test', { allowPrivateNetwork: true, resolve })).map((a) => a.address)).toEqual(['93.184.216.34', '10.0.0.8']);
    await expect(checkedAddresses('[::ffff:169.254.169.254]', { allowPrivateNetwork: false, resolve })).rejects.toMatchObject({ code: 'EPRIVATEDESTINATION' });
  });
});

describe('webhooks', () => {
  let server: Server;
  let port = 0;
  const received: Array<{ host: string | undefined; body: string }> = [];
  let answer: { status: number; body: string } = { status: 200, body: 'ok' };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ host: req.headers.host, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(answer.status, { 'content-type': 'text/html' }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  afterEach(() => {
    received.length = 0;
    answer = { status: 200, body: 'ok' };
  });

  const post = (url: string, allowPrivateNetwork: boolean, resolve?: Resolver, timeoutMs = 2_000) => postJson(url, '{"text":"hi"}', { timeoutMs, allowPrivateNetwork, resolve });

  it('refuses a literal non-public address before connecting, and for good', async () => {
    for (const host of [`127.0.0.1:${port}`, `[::ffff:127.0.0.1]:${port}`, `2130706433:${port}`]) {
      const result = await post(`http://${host}/hook?token=s3cr3t`, false);
      expect(result, host).toMatchObject({ ok: false, status: null, retryable: false });
      expect(result.error, host).toMatch(/^webhook at \S+ refused: \S+ is \S+, a non-public address \((IPv4-mapped )?loopback \(127\.0\.0\.0\/8\)\)/);
      expect(result.error).not.toContain('s3cr3t');
    }
    expect(received).toEqual([]);
    // Allowed: delivered.
    expect(await post(`http://127.0.0.1:${port}/hook`, true)).toEqual({ ok: true, status: 200, retryable: false, error: null });
    expect(received).toHaveLength(1);
  });

  it('checks the addresses a name resolves to, and connects to the address it checked (the name is resolved once)', async () => {
    const { resolve, asked } = resolverOf({ 'hooks.test': ['127.0.0.1'] });
    const refused = await post(`http://hooks.test:${port}/hook`, false, resolve);
    expect(refused).toMatchObject({ ok: false, retryable: false, error: `webhook at hooks.test:${port} refused: hooks.test resolves to 127.0.0.1, a non-public address (loopback (127.0.0.0/8)); the channel does not allow private networks ("allow_private_network": true)` });
    expect(received).toEqual([]);

    // Allowed: `hooks.test` exists only in the test's resolver, so the request can only have
    // reached the receiver through the address that resolver gave.
    asked.length = 0;
    expect(await post(`http://hooks.test:${port}/hook`, true, resolve)).toMatchObject({ ok: true, status: 200 });
    expect(received).toEqual([{ host: `hooks.test:${port}`, body: '{"text":"hi"}' }]);
    expect(asked).toEqual(['hooks.test']);
  });

  it('is not fooled by a name that answers a public address first and the internal one later (DNS rebinding)', async () => {
    // The first answer is checked and used; the second, internal one is never asked for. The
    // public address here (TEST-NET-1) answers nothing: the attempt times out or finds no route.
    let calls = 0;
    const { resolve, asked } = resolverOf({ 'rebind.test': () => (calls++ === 0 ? ['192.0.2.10'] : ['127.0.0.1']) });
    const result = await post(`http://rebind.test:${port}/hook`, false, resolve, 300);
    expect(result).toMatchObject({ ok: false, status: null, retryable: true });
    expect(result.error).toMatch(new RegExp(`^webhook at rebind\\.test:${port} (did not answer within 300 ms|failed: \\w+ \\(connect \\w+ 192\\.0\\.2\\.10:${port}\\))$`));
    expect(asked).toEqual(['rebind.test']);
    expect(received).toEqual([]);
  });

  it('keeps only the status and the length of an answer, never its body', async () => {
    answer = { status: 500, body: '<h1>Internal admin</h1><p>db password: hunter2</p>' };
    const result = await post(`http://127.0.0.1:${port}/hook`, true);
    expect(result).toEqual({ ok: false, status: 500, retryable: true, error: `webhook at 127.0.0.1:${port} answered 500, body of 50 bytes not kept` });
    answer = { status: 404, body: 'x'.repeat(1_000_000) };
    expect((await post(`http://127.0.0.1:${port}/hook`, true)).error).toBe(`webhook at 127.0.0.1:${port} answered 404, body of more than 4096 bytes not kept`);
    answer = { status: 403, body: '' };
    expect((await post(`http://127.0.0.1:${port}/hook`, true)).error).toBe(`webhook at 127.0.0.1:${port} answered 403, no body`);
  });

  it('applies the same rule to the stop notices\' webhook ("notifications")', async () => {
    const settings = { webhookUrl: `http://127.0.0.1:${port}/notice`, timeoutMs: 1_000, retries: 2, appUrl: null, allowPrivateNetwork: false };
    const refused = await sendWebhook(settings, 'stopping i-1', { backoffMs: 1 });
    expect(refused).toMatchObject({ status: 'failed', attempts: 1 });
    expect(refused.error).toContain('a non-public address (loopback (127.0.0.0/8))');
    expect(received).toEqual([]);
    expect(await sendWebhook({ ...settings, allowPrivateNetwork: true }, 'stopping i-1', { backoffMs: 1 })).toEqual({ status: 'sent', attempts: 1, error: null });
  });
});

describe('mail', () => {
  let smtp: SMTPServer;
  let port = 0;
  const mails: string[][] = [];
  const message: StoredMessage = { subject: 'Budget alert', text: 'ML team reached 80 %', data: {} };
  const channel = (allowPrivateNetwork: boolean) => ({ name: 'ops-mail', type: 'email' as const, to: ['ops@example.com'], allowPrivateNetwork });

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      disableReverseLookup: true,
      logger: false,
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith('refused')) return callback(Object.assign(new Error('5.1.1 <refused@example.com>: internal relay db01.corp says no'), { responseCode: 550 }));
        callback();
      },
      onData(stream, session, callback) {
        stream.resume();
        stream.on('end', () => {
          mails.push(session.envelope.rcptTo.map((r) => r.address));
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    port = (smtp.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('resolves the SMTP server, refuses a non-public address, and sends through the address it checked', async () => {
    const { resolve, asked } = resolverOf({ 'mail.test': ['127.0.0.1'] });
    const mailer = createMailer({ url: `smtp://mail.test:${port}`, host: `mail.test:${port}`, from: 'cloudtally@example.com' }, { timeoutMs: 2_000, maxAnswerBytes: 65_536, resolve });
    try {
      const refused = await mailer.send(channel(false), 'k1', message);
      expect(refused).toEqual({
        ok: false,
        status: null,
        retryable: false,
        error: `mail through mail.test:${port} refused: mail.test resolves to 127.0.0.1, a non-public address (loopback (127.0.0.0/8)); the channel does not allow private networks ("allow_private_network": true)`,
      });
      expect(mails).toEqual([]);
      // Allowed: `mail.test` exists only in the test's resolver, so the mail went to the address it gave.
      asked.length = 0;
      expect(await mailer.send(channel(true), 'k2', message)).toEqual({ ok: true, status: null, retryable: false, error: null });
      expect(mails).toEqual([['ops@example.com']]);
      expect(asked).toEqual(['mail.test']);
    } finally {
      mailer.close();
    }
  });

  it('keeps only the code, command, status and length of what the server answered', async () => {
    const mailer = createMailer({ url: `smtp://127.0.0.1:${port}`, host: `127.0.0.1:${port}`, from: 'cloudtally@example.com' }, { timeoutMs: 2_000, maxAnswerBytes: 65_536 });
    try {
      const result = await mailer.send({ ...channel(true), to: ['refused@example.com'] }, 'k3', message);
      expect(result).toMatchObject({ ok: false, status: 550, retryable: false });
      expect(result.error).toMatch(new RegExp(`^mail through 127\\.0\\.0\\.1:${port} failed: EENVELOPE at RCPT TO: answered 550, answer of \\d+ bytes not kept$`));
      expect(result.error).not.toContain('db01');
    } finally {
      mailer.close();
    }
  });
});

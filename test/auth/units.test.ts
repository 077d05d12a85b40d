import { describe, expect, it } from 'vitest';
import {
  addressMatcher,
  BackoffCounter,
  LoginThrottle,
  createProxyIdentifier,
  hashPassword,
  isLoopbackHost,
  listenHostFor,
  ListenHostError,
  parsePasswordHash,
  verifyPassword,
} from '../../src/auth/index.js';
import { testConfig } from '../actions/helpers.js';
import { configWithUsers } from './app.js';

describe('password hashes', () => {
  it('hashes with scrypt in the documented format and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse', { N: 16384 });
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    expect(await verifyPassword('correct horse', hash)).toBe(true);
    expect(await verifyPassword('correct horse ', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
    // A random salt each time.
    expect(await hashPassword('correct horse', { N: 16384 })).not.toBe(hash);
    // The default cost is the documented one.
    expect(await hashPassword('x')).toMatch(/^scrypt\$65536\$8\$1\$/);
  });

  it('names what is wrong with a stored hash, and never matches a broken one', async () => {
    expect(parsePasswordHash('bcrypt$2b$...')).toEqual({ problem: expect.stringContaining('scrypt$N$r$p$salt$hash') });
    expect(parsePasswordHash('scrypt$1000$8$1$c2FsdHNhbHQ=$aGFzaGhhc2hoYXNoaGFzaA==')).toEqual({ problem: expect.stringContaining('power of two') });
    expect(parsePasswordHash('scrypt$16384$8$1$c2E=$aGFzaGhhc2hoYXNoaGFzaA==')).toEqual({ problem: 'the salt must be at least 8 bytes' });
    expect(await verifyPassword('x', 'plaintext-password')).toBe(false);
  });
});

describe('login throttle (growing delays per account and address)', () => {
  const settings = { freeFailuresPerAccount: 3, freeFailuresPerAddress: 10, firstDelaySeconds: 1, maxDelaySeconds: 8, forgetAfterHours: 1 };

  it('lets N failures through, then doubles the wait after each failure up to the cap', () => {
    const counter = new BackoffCounter({ freeFailures: 3, firstDelayMs: 1000, maxDelayMs: 8000, forgetAfterMs: 3_600_000 });
    expect([0, 1, 2, 3, 4, 5, 6, 7, 100].map((n) => counter.delayAfter(n))).toEqual([0, 0, 0, 1000, 2000, 4000, 8000, 8000, 8000]);
    let t = 1_000_000;
    for (let i = 0; i < 3; i++) counter.record('k', t);
    expect(counter.retryAfterMs('k', t)).toBe(1000);
    expect(counter.retryAfterMs('k', t + 400)).toBe(600);
    t += 1000;
    expect(counter.retryAfterMs('k', t)).toBe(0);
    counter.record('k', t);
    expect(counter.retryAfterMs('k', t)).toBe(2000);
    // Forgotten after an hour without a failure.
    expect(counter.retryAfterMs('k', t + 3_600_000)).toBe(0);
    counter.record('k', t + 3_600_000);
    expect(counter.retryAfterMs('k', t + 3_600_000)).toBe(0);
  });

  it('counts an account per address: failures elsewhere never slow a new address down', () => {
    const throttle = new LoginThrottle(settings);
    const t = 5_000_000;
    for (let i = 0; i < 6; i++) throttle.failed('adam', '203.0.113.9', t);
    expect(throttle.retryAfterMs('adam', '203.0.113.9', t)).toBe(8000);
    expect(throttle.retryAfterMs('adam', '198.51.100.7', t)).toBe(0);
    expect(throttle.retryAfterMs('alice', '203.0.113.9', t)).toBe(0); // per address: 6 of 10 free
    throttle.succeeded('adam', '198.51.100.7');
    expect(throttle.retryAfterMs('adam', '203.0.113.9', t)).toBe(8000);
  });

  it('slows one address guessing across many accounts, and a success there does not reset that', () => {
    const throttle = new LoginThrottle(settings);
    const t = 5_000_000;
    for (let i = 0; i < 10; i++) throttle.failed(`user-${i}`, '203.0.113.9', t);
    expect(throttle.retryAfterMs('someone-new', '203.0.113.9', t)).toBe(1000);
    throttle.succeeded('someone-new', '203.0.113.9');
    expect(throttle.retryAfterMs('someone-new', '203.0.113.9', t)).toBe(1000);
    expect(throttle.retryAfterMs('someone-new', '198.51.100.7', t)).toBe(0);
  });

  it('keeps memory bounded', () => {
    const counter = new BackoffCounter({ freeFailures: 1, firstDelayMs: 60_000, maxDelayMs: 60_000, forgetAfterMs: 3_600_000 }, 100);
    for (let i = 0; i < 1000; i++) counter.record(`ip-${i}`, 1);
    expect(counter.retryAfterMs('ip-999', 2)).toBeGreaterThan(0);
    expect(counter.retryAfterMs('ip-0', 2)).toBe(0); // dropped, least recently failed first
  });
});

describe('addresses', () => {
  it('matches addresses and CIDR blocks, IPv4 clients on dual-stack sockets included', () => {
    const trusted = addressMatcher(['10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
    expect(trusted('10.20.30.40')).toBe(true);
    expect(trusted('::ffff:10.1.2.3')).toBe(true);
    expect(trusted('192.168.1.7')).toBe(true);
    expect(trusted('192.168.1.8')).toBe(false);
    expect(trusted('fd12::1')).toBe(true);
    expect(trusted('11.0.0.1')).toBe(false);
    expect(trusted(undefined)).toBe(false);
    expect(trusted('not-an-ip')).toBe(false);
  });

  it('knows loopback hosts', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'example.com', '']) expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('listen host', () => {
  it('refuses a non-loopback HOST in local-only mode (no users, no proxy), with a clear error', () => {
    const local = testConfig({}, { HOST: '0.0.0.0' });
    expect(() => listenHostFor(local)).toThrow(ListenHostError);
    expect(() => listenHostFor(local)).toThrow(/HOST=0\.0\.0\.0 refused: .*local-only mode.*hash-password/);
    expect(listenHostFor(testConfig())).toBe('127.0.0.1');
    expect(listenHostFor(testConfig({}, { HOST: 'localhost' }))).toBe('localhost');
  });

  it('allows any address once users or a trusted proxy are configured', async () => {
    const withUsers = await configWithUsers();
    expect(listenHostFor({ ...withUsers, server: { host: '0.0.0.0', port: 3000 } })).toBe('0.0.0.0');
    const proxied = testConfig({ auth: { proxy: { header: 'x-user', trusted_addresses: ['10.0.0.1'] } } }, { HOST: '::' });
    expect(listenHostFor(proxied)).toBe('::');
  });
});

describe('proxy identity', () => {
  const proxy = createProxyIdentifier({
    header: 'x-forwarded-user',
    groupsHeader: 'x-forwarded-groups',
    trustedAddresses: ['10.0.0.1'],
    roleMap: { ops: 'operator', root: 'admin', alice: 'viewer' },
    defaultRole: null,
    teamScopes: null,
  });
  const headers = (h: Record<string, string>) => (name: string) => h[name];

  it('believes the header only from a trusted address, taking the most trusted mapped role', () => {
    expect(proxy.identify('10.0.0.2', headers({ 'x-forwarded-user': 'alice' }))).toEqual({ kind: 'none' });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'alice' }))).toEqual({ kind: 'user', identity: { name: 'alice', role: 'viewer', via: 'proxy', sessionId: null, scope: null } });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'alice', 'x-forwarded-groups': 'ops, root' }))).toMatchObject({ identity: { role: 'admin' } });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'bob' }))).toEqual({ kind: 'refused', name: 'bob' });
    expect(proxy.identify('10.0.0.1', headers({}))).toEqual({ kind: 'none' });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'a\u0000b' }))).toEqual({ kind: 'none' });
  });
});

import { describe, expect, it } from 'vitest';
import {
  addressMatcher,
  createProxyIdentifier,
  hashPassword,
  isLoopbackHost,
  listenHostFor,
  ListenHostError,
  parsePasswordHash,
  SlidingWindowLimiter,
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

describe('login rate limiter (sliding window)', () => {
  it('allows N events per window per key, then says how long to wait', () => {
    const limiter = new SlidingWindowLimiter(3, 60_000);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(limiter.retryAfterMs('alice', t0 + i * 1000)).toBe(0);
      limiter.record('alice', t0 + i * 1000);
    }
    expect(limiter.retryAfterMs('alice', t0 + 5_000)).toBe(55_000);
    expect(limiter.retryAfterMs('bob', t0 + 5_000)).toBe(0);
    // The oldest failure leaves the window: one more try.
    expect(limiter.retryAfterMs('alice', t0 + 60_001)).toBe(0);
    limiter.reset('alice');
    expect(limiter.retryAfterMs('alice', t0 + 5_000)).toBe(0);
  });

  it('keeps memory bounded', () => {
    const limiter = new SlidingWindowLimiter(1, 60_000, 100);
    for (let i = 0; i < 1000; i++) limiter.record(`ip-${i}`, 1);
    expect(limiter.retryAfterMs('ip-999', 2)).toBeGreaterThan(0);
    expect(limiter.retryAfterMs('ip-0', 2)).toBe(0); // dropped, oldest first
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
  });
  const headers = (h: Record<string, string>) => (name: string) => h[name];

  it('believes the header only from a trusted address, taking the most trusted mapped role', () => {
    expect(proxy.identify('10.0.0.2', headers({ 'x-forwarded-user': 'alice' }))).toEqual({ kind: 'none' });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'alice' }))).toEqual({ kind: 'user', identity: { name: 'alice', role: 'viewer', via: 'proxy', sessionId: null } });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'alice', 'x-forwarded-groups': 'ops, root' }))).toMatchObject({ identity: { role: 'admin' } });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'bob' }))).toEqual({ kind: 'refused', name: 'bob' });
    expect(proxy.identify('10.0.0.1', headers({}))).toEqual({ kind: 'none' });
    expect(proxy.identify('10.0.0.1', headers({ 'x-forwarded-user': 'a\u0000b' }))).toEqual({ kind: 'none' });
  });
});

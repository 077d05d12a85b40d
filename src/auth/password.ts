import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Limiter } from '../limiter.js';

/*
 * Password hashes in configuration, one self-describing string per user:
 *
 *   scrypt$<N>$<r>$<p>$<salt, base64>$<derived key, base64>
 *
 * e.g. scrypt$65536$8$1$Xq3...$9fQ... (N = CPU/memory cost, a power of two; r = block size;
 * p = parallelism). The key length is the decoded key's length (32 bytes when made here).
 * `hashPassword` (npm run cli -- hash-password) makes them; nothing else ever sees a password.
 */

export const SCRYPT_DEFAULTS = { N: 65536, r: 8, p: 1, saltBytes: 16, keyBytes: 32 } as const;
/** Accepted cost range: below 2^14 is too cheap to guess against; above 2^20 takes seconds and 1 GiB. */
const MIN_N = 2 ** 14;
const MAX_N = 2 ** 20;

export interface ScryptHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  key: Buffer;
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Parses a stored hash; the error says what is wrong without echoing the hash. */
export function parsePasswordHash(text: string): ScryptHash | { problem: string } {
  const parts = text.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    return { problem: 'must have the form scrypt$N$r$p$salt$hash (make one with: npm run cli -- hash-password)' };
  }
  const [, nText, rText, pText, saltText, keyText] = parts as [string, string, string, string, string, string];
  const N = /^\d{1,8}$/.test(nText) ? Number(nText) : NaN;
  const r = /^\d{1,3}$/.test(rText) ? Number(rText) : NaN;
  const p = /^\d{1,3}$/.test(pText) ? Number(pText) : NaN;
  if (!Number.isInteger(N) || N < MIN_N || N > MAX_N || (N & (N - 1)) !== 0) {
    return { problem: `N must be a power of two from ${MIN_N} to ${MAX_N}` };
  }
  if (!Number.isInteger(r) || r < 1 || r > 32) return { problem: 'r must be a whole number from 1 to 32' };
  if (!Number.isInteger(p) || p < 1 || p > 16) return { problem: 'p must be a whole number from 1 to 16' };
  if (!BASE64.test(saltText) || !BASE64.test(keyText)) return { problem: 'salt and hash must be base64' };
  const salt = Buffer.from(saltText, 'base64');
  const key = Buffer.from(keyText, 'base64');
  if (salt.length < 8) return { problem: 'the salt must be at least 8 bytes' };
  if (key.length < 16 || key.length > 128) return { problem: 'the hash must be 16 to 128 bytes' };
  return { N, r, p, salt, key };
}

function scrypt(password: string, salt: Buffer, keyBytes: number, options: ScryptOptions & { N: number; r: number; p: number }): Promise<Buffer> {
  // Node refuses parameters needing more than maxmem (32 MiB by default): allow what they need.
  const maxmem = 128 * options.N * options.r * options.p + 8 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    scryptCallback(password.normalize('NFC'), salt, keyBytes, { ...options, maxmem }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** A new hash of `plain` in the format above (random salt). */
export async function hashPassword(plain: string, options: { N?: number; r?: number; p?: number } = {}): Promise<string> {
  if (typeof plain !== 'string' || plain.length === 0) throw new Error('the password must not be empty');
  const N = options.N ?? SCRYPT_DEFAULTS.N;
  const r = options.r ?? SCRYPT_DEFAULTS.r;
  const p = options.p ?? SCRYPT_DEFAULTS.p;
  const salt = randomBytes(SCRYPT_DEFAULTS.saltBytes);
  const key = await scrypt(plain, salt, SCRYPT_DEFAULTS.keyBytes, { N, r, p });
  const text = `scrypt$${N}$${r}$${p}$${salt.toString('base64')}$${key.toString('base64')}`;
  const check = parsePasswordHash(text);
  if ('problem' in check) throw new Error(`cannot make a password hash with these parameters: ${check.problem}`);
  return text;
}

/**
 * Whether `plain` matches the stored hash, compared in constant time. A hash that does not parse
 * never matches (configuration validation rejects those at start).
 */
export async function verifyPassword(plain: string, stored: string): Promise<boolean> {
  const hash = parsePasswordHash(stored);
  if ('problem' in hash) return false;
  const key = await scrypt(plain, hash.salt, hash.key.length, { N: hash.N, r: hash.r, p: hash.p });
  return timingSafeEqual(key, hash.key);
}

/**
 * Spends the same time as a real check, for a user name that does not exist, so the answer time
 * does not tell which names are users. The hash is made once per parameter set.
 */
const dummyHashes = new Map<string, Promise<string>>();
export async function burnPasswordCheck(plain: string, like?: string): Promise<void> {
  const parsed = like ? parsePasswordHash(like) : null;
  const params = parsed && !('problem' in parsed) ? { N: parsed.N, r: parsed.r, p: parsed.p } : {};
  const id = JSON.stringify(params);
  let dummy = dummyHashes.get(id);
  if (!dummy) {
    dummy = hashPassword(randomBytes(16).toString('hex'), params);
    dummyHashes.set(id, dummy);
  }
  await verifyPassword(plain, await dummy);
}


/**
 * The password checks in flight: each scrypt check holds 128 x N x r bytes (64 MiB at the
 * defaults) and one of libuv's four threads for the time of a scrypt, so a burst of sign-ins (many addresses
 * at once get past the per-address rate limit) queues rather than taking every thread and
 * hundreds of MB; beyond 32 waiting, the sign-in is refused at once (LimiterFullError).
 */
export function passwordCheckLimiter(concurrent = 2, maxWaiting = 32): Limiter {
  return new Limiter(concurrent, maxWaiting);
}

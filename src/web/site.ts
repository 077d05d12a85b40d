import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { addressMatcher, isLoopbackAddress } from '../auth/addresses.js';
import { authModeOf } from '../auth/mode.js';
import type { Config } from '../config/index.js';
import { ClientError } from './errors.js';

/**
 * How the app is reached, and the checks that follow from it:
 * - `publicUrl` https: cookies are `Secure` with the `__Host-` prefix, and HSTS is sent;
 * - `trustedProxies`: the only peers whose X-Forwarded-For / -Proto / -Host Express believes;
 * - `localOnly`: only Host names of the loopback are answered (against DNS rebinding);
 * - always: a browser's state-changing request must come from this site (Origin, Sec-Fetch-Site).
 */
export interface SiteSettings {
  /** CLOUDTALLY_PUBLIC_URL as an origin, or null. */
  publicUrl: string | null;
  trustedProxies: readonly string[];
  localOnly: boolean;
}

export const PLAIN_SITE: SiteSettings = Object.freeze({ publicUrl: null, trustedProxies: [], localOnly: false });

export function siteSettingsOf(config: Pick<Config, 'users' | 'auth' | 'web'>): SiteSettings {
  return { publicUrl: config.web.publicUrl, trustedProxies: config.web.trustedProxies, localOnly: authModeOf(config).localOnly };
}

/** Cookies are Secure (and `__Host-` prefixed) exactly when the public URL is https. */
export function securedByHttps(publicUrl: string | null): boolean {
  return publicUrl !== null && publicUrl.startsWith('https:');
}

/** The cookie name for `secure` cookies: `__Host-` makes browsers insist on Secure, Path=/ and no Domain. */
export function cookieName(name: string, secure: boolean): string {
  return secure ? `__Host-${name}` : name;
}

/** Express's `trust proxy` setting: exactly the configured proxies (never `true`); none: no X-Forwarded-* at all. */
export function trustProxy(trustedProxies: readonly string[]): (address: string) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const trusted = addressMatcher(trustedProxies);
  return (address) => trusted(address);
}

/**
 * Whether a Host header names this machine's loopback: `localhost`, an address in 127.0.0.0/8,
 * or `[::1]`, each with or without a port. A DNS-rebinding page can point its own name at
 * 127.0.0.1 but cannot make the browser send one of these names.
 */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  if (!host) return false;
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/i.exec(host.trim());
  if (!match) return false;
  const name = match[1]!.toLowerCase();
  if (name === 'localhost') return true;
  if (name.startsWith('[')) return isLoopbackAddress(name.slice(1, -1));
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(name) && isLoopbackAddress(name);
}

/**
 * Local-only mode answers only requests whose Host names the loopback: 421 Misdirected Request
 * otherwise (the request is well-formed, but this server does not serve that name). Plain text,
 * before anything else, health endpoints included.
 */
export function loopbackHostOnly(): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (isLoopbackHostHeader(req.headers.host)) return next();
    res
      .status(421)
      .type('text')
      .send(
        'cloudtally runs in local-only mode (no users configured, everyone on this machine is admin), so it answers only ' +
          'http://localhost, http://127.0.0.1 or http://[::1] with its port. This request named another host, which is how a ' +
          'web page could reach it through DNS rebinding. Open it by one of those names, or configure users to share it.\n',
      );
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function originOf(text: string): string | null {
  try {
    const origin = new URL(text).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * Browsers' state-changing requests must come from this site, on top of the CSRF token: refused
 * (403) when `Sec-Fetch-Site` is `cross-site`, or when `Origin` is neither the public URL's origin
 * nor the request's own (scheme and Host as Express sees them, so through a trusted proxy its
 * X-Forwarded-Proto / -Host). A request with neither header (curl, API clients) passes on to the
 * CSRF check.
 */
export function sameOriginWrites(publicUrl: string | null): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const expected = [publicUrl, req.host ? originOf(`${req.protocol}://${req.host}`) : null].filter((o): o is string => o !== null);
    const refuse = (why: string) =>
      next(
        new ClientError(
          403,
          'cross_site_request',
          `Refused: this ${req.method} was sent by another site (${why}); cloudtally accepts changes only from ${expected.join(' or ')}. ` +
            'Behind a reverse proxy, set CLOUDTALLY_PUBLIC_URL to the address people open.',
        ),
      );
    if (req.get('sec-fetch-site')?.trim().toLowerCase() === 'cross-site') return refuse('Sec-Fetch-Site: cross-site');
    const origin = req.get('origin');
    if (origin === undefined) return next();
    const given = originOf(origin.trim());
    if (given !== null && expected.includes(given)) return next();
    refuse('its Origin is another site');
  };
}

import { randomBytes } from 'node:crypto';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { Eta } from 'eta';
import { describeAccessScope } from '../auth/access-scope.js';
import { isLoopbackAddress, normaliseAddress } from '../auth/addresses.js';
import { accountKey, type Identity } from '../auth/identity.js';
import type { AccessScope } from '../auth/access-scope.js';
import { authModeOf, LOCAL_ONLY_BANNER } from '../auth/mode.js';
import { burnPasswordCheck, passwordCheckLimiter, verifyPassword } from '../auth/password.js';
import { LimiterFullError, type Limiter } from '../limiter.js';
import { createProxyIdentifier } from '../auth/proxy.js';
import { LoginThrottle } from '../auth/rate-limit.js';
import { permissionsOf, roleAtLeast, type Role } from '../auth/roles.js';
import { OidcClient, type OidcClientOptions } from '../auth/oidc-client.js';
import { SessionStore, type SignInGrant } from '../auth/sessions.js';
import { OIDC_CALLBACK_PATH, OIDC_LOGIN_PATH } from '../config/oidc.js';
import type { Config } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { ClientError } from './errors.js';
import { readForm } from './form.js';
import { oidcRoutes } from './oidc-routes.js';
import { viewsDir } from './paths.js';
import type { AuthLayoutView, WebAuth, WebAuthKit } from './types.js';
import { safeReturnPath } from './return-path.js';
import { cookieName, securedByHttps } from './site.js';

declare module 'express-serve-static-core' {
  interface Locals {
    /** Who makes the request (set by auth.identify), absent when nobody is signed in. */
    identity?: Identity;
  }
}

export interface WebAuthDeps {
  /** `web.publicUrl` decides the cookies: https gives Secure `__Host-` ones (as the app's). */
  config: Pick<Config, 'users' | 'auth' | 'web'>;
  /** Where sessions live (table auth_sessions). */
  db: Queryable;
  logger: Logger;
  /** Paths served without sign-in besides /login (e.g. '/healthz', '/metrics'). Exact match or prefix ending in '/'. */
  publicPaths?: readonly string[];
  now?: () => Date;
  /** Bounds concurrent password checks (default: passwordCheckLimiter(), 2 at once, 32 waiting). */
  passwordChecks?: Limiter;
  /** Timeouts and retry of the OpenID Connect provider's requests (auth.oidc). */
  oidc?: OidcClientOptions;
}

/** Per request: who it is, and why nobody (for the right refusal). */
interface RequestAuth {
  identity: Identity | null;
  /** Set when the request must be refused even though it may not log in (403). */
  refusal: string | null;
  /** Anonymous per-browser id, for CSRF tokens before login. */
  browserId: string | null;
}

const state = new WeakMap<Request, RequestAuth>();

/**
 * Sign-in for the web app: users with passwords (login form, sessions in the database), an
 * OpenID Connect provider (src/web/oidc-routes.ts, same sessions), a trusted reverse proxy's
 * header, or local-only mode (no users, no proxy: everyone on this machine is
 * admin, nobody else gets in). See WebAuth in types.ts for how the app mounts it.
 */
export function createWebAuth(deps: WebAuthDeps): WebAuth {
  const { config, logger } = deps;
  const mode = authModeOf(config);
  const now = deps.now ?? (() => new Date());
  const secure = securedByHttps(config.web.publicUrl);
  const sessionCookie = cookieName('cloudtally.session', secure);
  const browserCookie = cookieName('cloudtally.anon', secure);
  const oidcFlowCookie = cookieName('cloudtally.oidc', secure);
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, secure, path: '/' };
  const ttlMs = config.auth.sessionTtlHours * 3_600_000;
  const sessions = new SessionStore(deps.db);
  const proxy = config.auth.proxy ? createProxyIdentifier(config.auth.proxy) : null;
  const throttle = new LoginThrottle(config.auth.loginThrottle);
  const usersByName = new Map(config.users.map((u) => [accountKey(u.name), u]));
  const oidc = config.auth.oidc ? new OidcClient(config.auth.oidc, logger, { now: () => now().getTime(), ...deps.oidc }) : null;
  const publicPaths = ['/login', ...(oidc ? [OIDC_LOGIN_PATH, OIDC_CALLBACK_PATH] : []), ...(deps.publicPaths ?? [])];
  const passwordChecks = deps.passwordChecks ?? passwordCheckLimiter();
  const eta = new Eta({ views: viewsDir, cache: true, autoEscape: true });

  const userNamed = (name: string) => usersByName.get(accountKey(name)) ?? null;

  const isPublic = (path: string) => publicPaths.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p));

  function ensureBrowserId(req: Request, res: Response): string {
    const cookies = (req.cookies ?? {}) as Record<string, string>;
    const existing = cookies[browserCookie];
    if (existing && /^[A-Za-z0-9_-]{16,64}$/.test(existing)) return existing;
    const id = randomBytes(18).toString('base64url');
    res.cookie(browserCookie, id, cookieOptions);
    cookies[browserCookie] = id;
    req.cookies = cookies;
    return id;
  }

  async function resolve(req: Request): Promise<Omit<RequestAuth, 'browserId'>> {
    const peer = req.socket.remoteAddress;
    if (mode.localOnly) {
      if (isLoopbackAddress(peer)) return { identity: { name: 'local', role: 'admin', via: 'local', sessionId: null, scope: null }, refusal: null };
      return { identity: null, refusal: 'cloudtally runs in local-only mode (no users configured) and answers this machine only.' };
    }
    if (proxy) {
      const verdict = proxy.identify(peer, (name) => req.get(name));
      if (verdict.kind === 'user') return { identity: verdict.identity, refusal: null };
      if (verdict.kind === 'refused') {
        return { identity: null, refusal: verdict.reason ?? `The sign-in proxy names user "${verdict.name}", who has no role in cloudtally (auth.proxy.role_map).` };
      }
    }
    if (mode.passwords || mode.oidc) {
      const token = (req.signedCookies as Record<string, unknown> | undefined)?.[sessionCookie];
      if (typeof token === 'string') {
        const session = await sessions.find(token, now());
        // An OpenID Connect user is in no file: the session keeps what the provider's claims gave.
        if (session?.grant && mode.oidc) {
          const { role, scope } = session.grant;
          return { identity: { name: session.userName, role, via: 'session', sessionId: session.id, scope }, refusal: null };
        }
        const user = session && !session.grant ? userNamed(session.userName) : null;
        // The role is the configured one now, not the one at login; a removed user is signed out.
        if (session && user) return { identity: { name: user.name, role: user.role, via: 'session', sessionId: session.id, scope: user.scope }, refusal: null };
      }
    }
    return { identity: null, refusal: null };
  }

  const identify = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const found = await resolve(req);
    const entry: RequestAuth = { ...found, browserId: null };
    if (!found.identity?.sessionId) entry.browserId = ensureBrowserId(req, res);
    state.set(req, entry);
    if (found.identity) res.locals.identity = found.identity;
    next();
  };

  const wantsJson = (req: Request) => req.path.startsWith('/api/') || req.accepts(['html', 'json']) === 'json';

  const requireLogin = (req: Request, res: Response, next: NextFunction): void => {
    const entry = state.get(req);
    if (entry?.identity || isPublic(req.path)) return next();
    if (entry?.refusal) return next(new ClientError(403, 'forbidden', entry.refusal));
    if (wantsJson(req)) {
      res.status(401).json({ code: 'unauthenticated', message: 'Sign in first: this needs a login session.', request_id: res.locals.requestId });
      return;
    }
    const nextPath = req.method === 'GET' ? req.originalUrl : '/';
    res.redirect(303, `/login?next=${encodeURIComponent(nextPath)}`);
  };

  const requireRole = (role: Role) => (req: Request, res: Response, next: NextFunction) => {
    const identity = res.locals.identity;
    if (!identity) return requireLogin(req, res, next);
    if (!roleAtLeast(identity.role, role)) {
      return next(new ClientError(403, 'forbidden', `This needs the ${role} role; ${identity.name} is ${identity.role}.`));
    }
    next();
  };

  const layout = (req: Request): AuthLayoutView => {
    const identity = state.get(req)?.identity ?? null;
    const perms = identity ? permissionsOf(identity.role) : null;
    return {
      user: identity && perms ? { name: identity.name, role: identity.role, via: identity.via, canAct: perms.act, canAdmin: perms.admin, canLogout: identity.via === 'session', scope: identity.scope ? describeAccessScope(identity.scope) : null } : null,
      banner: mode.localOnly ? LOCAL_ONLY_BANNER : null,
    };
  };

  /** A new login session for `name` (ending the browser's previous one), its cookie set. */
  async function startSession(req: Request, res: Response, name: string, grant: SignInGrant | null): Promise<void> {
    const previous = state.get(req)?.identity?.sessionId;
    if (previous) await sessions.delete(previous);
    const { token } = await sessions.create(name, ttlMs, now(), grant);
    res.cookie(sessionCookie, token, { ...cookieOptions, signed: true, maxAge: ttlMs });
  }

  const csrfSessionIdentifier = (req: Request): string => {
    const entry = state.get(req);
    if (entry?.identity?.sessionId) return `session:${entry.identity.sessionId}`;
    const who = entry?.identity ? `${entry.identity.via}:${entry.identity.name}:` : 'anon:';
    return who + (entry?.browserId ?? '');
  };

  function routes(kit: WebAuthKit): Router {
    const router = Router();

    const loginPage = async (req: Request, res: Response, status: number, view: { error?: string; info?: string; username?: string; next?: string }) => {
      const nextPath = view.next || '/';
      const html = await eta.renderAsync('auth/login', {
        pageTitle: 'Sign in',
        passwords: mode.passwords,
        proxy: mode.proxy,
        oidc: oidc
          ? { displayName: oidc.displayName, href: `${OIDC_LOGIN_PATH}?return=${encodeURIComponent(nextPath)}`, unreachable: oidc.status() === 'unreachable' }
          : null,
        error: view.error ?? null,
        info: view.info ?? null,
        username: view.username ?? '',
        next: view.next ?? '',
        csrf: { field: kit.csrfField, token: kit.csrfToken(req, res) },
        requestId: res.locals.requestId,
      });
      res.status(status).setHeader('Cache-Control', 'no-store');
      res.type('html').send(html);
    };

    router.get('/login', async (req, res) => {
      const nextPath = safeReturnPath(req.query.next) ?? '/';
      if (res.locals.identity) return res.redirect(303, nextPath);
      // Learn early whether the provider answers, so that the page can say so (not waited for).
      if (oidc) void oidc.discover();
      await loginPage(req, res, 200, { next: nextPath, info: req.query.logged_out === '1' ? 'You are signed out.' : undefined });
    });

    router.post('/login', async (req, res) => {
      const form = readForm(req.body, { single: ['username', 'password', 'next'] });
      const username = form.username.trim().slice(0, 100);
      const password = form.password.slice(0, 1024);
      const nextPath = safeReturnPath(form.next) ?? '/';
      if (!mode.passwords) return loginPage(req, res, 400, { error: 'Password sign-in is not enabled here.', next: nextPath });
      if (!username || !password) return loginPage(req, res, 400, { error: 'Enter your user name and password.', username, next: nextPath });

      // The client: the TCP peer, or X-Forwarded-For's nearest untrusted hop when the peer is a
      // configured proxy (the app's `trust proxy`). Failures count per (account, this address).
      const ip = normaliseAddress(req.ip) ?? 'unknown';
      const account = accountKey(username);
      const at = now().getTime();
      const waitMs = throttle.retryAfterMs(account, ip, at);
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        res.setHeader('Retry-After', String(seconds));
        res.locals.log.warn({ user: username, ip, retryAfterS: seconds }, 'login refused: too many failed attempts, backing off');
        return loginPage(req, res, 429, { error: `Too many failed sign-ins from your address. Try again in ${waitText(seconds)}.`, username, next: nextPath });
      }

      const user = userNamed(username);
      let ok = false;
      try {
        ok = await passwordChecks.run(async () => {
          if (user) return verifyPassword(password, user.passwordHash);
          await burnPasswordCheck(password, config.users[0]?.passwordHash); // same time as a real check
          return false;
        });
      } catch (err) {
        if (!(err instanceof LimiterFullError)) throw err;
        // Not a failed attempt: nothing was checked.
        res.setHeader('Retry-After', '5');
        res.locals.log.warn({ user: username, ip }, 'login refused: too many sign-ins at once');
        return loginPage(req, res, 503, { error: 'Too many sign-ins at once. Try again in a few seconds.', username, next: nextPath });
      }
      if (!user || !ok) {
        throttle.failed(account, ip, at);
        res.locals.log.warn({ user: username, ip }, 'login failed');
        return loginPage(req, res, 401, { error: 'Wrong user name or password.', username, next: nextPath });
      }
      throttle.succeeded(account, ip);
      await startSession(req, res, user.name, null);
      res.locals.log.info({ user: user.name, role: user.role, ip }, 'login');
      res.redirect(303, nextPath);
    });

    if (oidc && config.auth.oidc) {
      router.use(
        oidcRoutes({
          client: oidc,
          settings: config.auth.oidc,
          flowCookie: oidcFlowCookie,
          cookieOptions,
          now,
          startSession,
          refuse: (req, res, status, message, returnPath) => loginPage(req, res, status, { error: message, next: returnPath }),
        }),
      );
    }

    router.post('/logout', async (_req, res) => {
      const identity = res.locals.identity;
      if (identity?.sessionId) {
        await sessions.delete(identity.sessionId);
        res.locals.log.info({ user: identity.name }, 'logout');
      }
      res.clearCookie(sessionCookie, cookieOptions);
      res.redirect(303, mode.passwords || mode.oidc ? '/login?logged_out=1' : '/');
    });

    return router;
  }

  logger.debug({ mode }, 'web sign-in configured');
  return { identify, csrfSessionIdentifier, routes, requireLogin, requireRole, layout };
}

/** `45 seconds`, `1 minute`, `15 minutes`: how long a throttled sign-in waits, for people. */
function waitText(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

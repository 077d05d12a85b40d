import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { describeAccessScope } from '../auth/access-scope.js';
import { normaliseAddress } from '../auth/addresses.js';
import { OidcSignInError, type OidcClient, type OidcFlow } from '../auth/oidc-client.js';
import { verdictOfClaims } from '../auth/oidc-claims.js';
import type { SignInGrant } from '../auth/sessions.js';
import { OIDC_CALLBACK_PATH, OIDC_LOGIN_PATH } from '../config/oidc.js';
import type { DeepReadonly, OidcSettings } from '../config/index.js';
import { safeReturnPath } from './return-path.js';

/**
 * GET /auth/oidc/login sends the browser to the provider; GET /auth/oidc/callback checks the
 * answer and signs the user in. The flow's state, nonce and PKCE verifier wait in a signed,
 * httpOnly, SameSite=Lax cookie for at most FLOW_TTL_MS, and serve one callback only.
 */

export const FLOW_TTL_MS = 10 * 60_000;

const FlowSchema = z.strictObject({
  state: z.string().min(1).max(200),
  nonce: z.string().min(1).max(200),
  verifier: z.string().min(43).max(128),
  returnPath: z.string().max(2000),
  startedAt: z.number().int(),
});

export interface OidcRouteDeps {
  client: OidcClient;
  settings: DeepReadonly<Pick<OidcSettings, 'redirectUrl' | 'nameClaim' | 'roles' | 'teamScopes'>>;
  flowCookie: string;
  cookieOptions: { httpOnly: boolean; sameSite: 'lax'; secure: boolean; path: string };
  now: () => Date;
  /** Starts the session (as password sign-in does) for a user the claims admit. */
  startSession: (req: Request, res: Response, name: string, grant: SignInGrant) => Promise<void>;
  /** The sign-in page with an error, for refusals; its buttons lead back to `returnPath`. */
  refuse: (req: Request, res: Response, status: number, message: string, returnPath: string) => Promise<void>;
}

export function oidcRoutes(deps: OidcRouteDeps): Router {
  const { client, settings, flowCookie, cookieOptions } = deps;
  const router = Router();

  const readFlow = (req: Request): OidcFlow | null => {
    const raw = (req.signedCookies as Record<string, unknown> | undefined)?.[flowCookie];
    if (typeof raw !== 'string') return null;
    try {
      const parsed = FlowSchema.safeParse(JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  };

  router.get(OIDC_LOGIN_PATH, async (req, res) => {
    const returnPath = safeReturnPath(req.query.return) ?? '/';
    if (res.locals.identity) return res.redirect(303, returnPath);
    const begun = await client.begin(returnPath);
    if (!begun) return deps.refuse(req, res, 503, `${client.displayName} cannot be reached now. Try again in a minute.`, returnPath);
    const value = Buffer.from(JSON.stringify(begun.flow)).toString('base64url');
    res.cookie(flowCookie, value, { ...cookieOptions, signed: true, maxAge: FLOW_TTL_MS });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, begun.url.href);
  });

  router.get(OIDC_CALLBACK_PATH, async (req, res) => {
    const log = res.locals.log;
    const ip = normaliseAddress(req.ip) ?? 'unknown';
    const flow = readFlow(req);
    // One callback per flow, whatever its outcome.
    res.clearCookie(flowCookie, cookieOptions);
    const refuse = async (status: number, message: string, reason: string) => {
      log.warn({ ip, reason, method: 'oidc' }, 'login refused');
      await deps.refuse(req, res, status, message, safeReturnPath(flow?.returnPath) ?? '/');
    };
    if (!flow) return refuse(400, 'This sign-in has no matching start in this browser (or it was already used). Sign in again.', 'no flow cookie');
    if (deps.now().getTime() - flow.startedAt > FLOW_TTL_MS) return refuse(400, 'This sign-in took too long (over 10 minutes). Sign in again.', 'flow expired');

    const callbackUrl = new URL(settings.redirectUrl);
    callbackUrl.search = new URL(req.originalUrl, 'http://callback.invalid').search;
    let claims: Record<string, unknown>;
    try {
      claims = await client.finish(callbackUrl, flow);
    } catch (err) {
      if (err instanceof OidcSignInError) return refuse(err.status, err.userMessage, err.reason);
      throw err;
    }
    const verdict = verdictOfClaims(claims, settings);
    if (verdict.kind === 'refused') return refuse(403, verdict.reason, `claims: ${verdict.reason}`);
    await deps.startSession(req, res, verdict.name, { method: 'oidc', role: verdict.role, scope: verdict.scope });
    log.info({ user: verdict.name, role: verdict.role, scope: verdict.scope ? describeAccessScope(verdict.scope) : null, ip, method: 'oidc' }, 'login');
    res.redirect(303, safeReturnPath(flow.returnPath) ?? '/');
  });

  return router;
}

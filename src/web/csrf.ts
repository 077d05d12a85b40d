import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { doubleCsrf } from 'csrf-csrf';

export interface CsrfOptions {
  secret: string;
  /** Secure cookies with the __Host- prefix (HTTPS only). */
  secure: boolean;
  /** What a token is bound to; defaults to the anonymous browser id cookie set here. */
  sessionIdentifier?: (req: Request) => string;
}

export interface CsrfProtection {
  /**
   * Refuses (403, EBADCSRFTOKEN) any POST/PUT/PATCH/DELETE whose token (form field `_csrf` or
   * header `x-csrf-token`) does not match the signed cookie. Mount it before every
   * state-changing route; it needs cookie-parser and a body parser before it.
   */
  protect: RequestHandler;
  /** A token for a form in the page being rendered (sets the cookies it is checked against). */
  tokenFor(req: Request, res: Response): string;
}

export const CSRF_FIELD = '_csrf';

/**
 * Double-submit cookie CSRF protection (csrf-csrf v4): the token is an HMAC of a random value and
 * the user's session identifier; it is sent in a cookie and again in the form, and the server
 * checks that both match and that the HMAC verifies with our secret.
 */
export function createCsrfProtection(options: CsrfOptions): CsrfProtection {
  const prefix = options.secure ? '__Host-' : '';
  const browserIdCookie = `${prefix}cloudtally.bid`;
  const cookieOptions = { sameSite: 'lax' as const, path: '/', secure: options.secure, httpOnly: true };

  const sessionIdentifier =
    options.sessionIdentifier ?? ((req: Request): string => (req.cookies?.[browserIdCookie] as string | undefined) ?? '');

  const { doubleCsrfProtection, generateCsrfToken } = doubleCsrf({
    getSecret: () => options.secret,
    getSessionIdentifier: sessionIdentifier,
    cookieName: `${prefix}cloudtally.csrf`,
    cookieOptions,
    getCsrfTokenFromRequest: (req) => {
      const fromBody = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
      if (typeof fromBody === 'string') return fromBody;
      return req.get('x-csrf-token');
    },
  });

  const ensureBrowserId = (req: Request, res: Response): void => {
    if (options.sessionIdentifier) return;
    const cookies = (req.cookies ?? {}) as Record<string, string>;
    if (cookies[browserIdCookie]) return;
    const id = randomBytes(18).toString('base64url');
    res.cookie(browserIdCookie, id, cookieOptions);
    // The token made in this same request must be bound to the id the browser will send back.
    cookies[browserIdCookie] = id;
    req.cookies = cookies;
  };

  return {
    protect: (req: Request, res: Response, next: NextFunction) => doubleCsrfProtection(req, res, next),
    tokenFor(req, res) {
      ensureBrowserId(req, res);
      return generateCsrfToken(req, res);
    },
  };
}

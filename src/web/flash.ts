import type { Request, Response } from 'express';

/** A one-time message shown on the next page (after a POST-redirect-GET). */
export interface Flash {
  kind: 'info' | 'error';
  text: string;
}

const FLASH_COOKIE = 'cloudtally.flash';
/** Set over HTTPS (see site.ts cookieName); the reader looks for both. */
const SECURE_FLASH_COOKIE = `__Host-${FLASH_COOKIE}`;

export function setFlash(res: Response, flash: Flash, secure: boolean): void {
  // Signed so that nothing but this app can make a page show a message.
  res.cookie(secure ? SECURE_FLASH_COOKIE : FLASH_COOKIE, JSON.stringify(flash), { signed: true, httpOnly: true, sameSite: 'lax', secure, path: '/', maxAge: 60_000 });
}

/** Reads and clears the flash message, if there is a valid one. */
export function takeFlash(req: Request, res: Response): Flash | null {
  const signed = req.signedCookies as Record<string, unknown> | undefined;
  const plain = req.cookies as Record<string, unknown> | undefined;
  const name = [SECURE_FLASH_COOKIE, FLASH_COOKIE].find((n) => signed?.[n] !== undefined || plain?.[n] !== undefined);
  if (!name) return null;
  const raw = signed?.[name];
  // A __Host- cookie is only replaced (here: expired) by one that is Secure too.
  res.clearCookie(name, { path: '/', secure: name === SECURE_FLASH_COOKIE });
  if (typeof raw !== 'string') return null;
  try {
    const value = JSON.parse(raw) as Partial<Flash>;
    if ((value.kind === 'info' || value.kind === 'error') && typeof value.text === 'string') return { kind: value.kind, text: value.text };
  } catch {
    // A tampered or malformed cookie is dropped; it was cleared above.
  }
  return null;
}

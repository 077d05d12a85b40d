/**
 * The page a request came from on this same site (its Referer, which the app's same-origin
 * referrer policy sends only within the site), as a safe return path; null otherwise.
 */
export function sameSitePreviousPage(req: { get(name: string): string | undefined }): string | null {
  const referer = req.get('referer');
  if (!referer) return null;
  try {
    const url = new URL(referer);
    return url.host === req.get('host') ? safeReturnPath(url.pathname + url.search) : null;
  } catch {
    return null;
  }
}

/**
 * Where to go back to after a form POST: only a path of this app (so the form field cannot be
 * used to redirect elsewhere).
 */
export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return null;
  if (value.length > 2000 || /[\u0000-\u001f]/.test(value)) return null;
  return value;
}

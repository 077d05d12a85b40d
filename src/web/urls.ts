import type { RawQuery } from './query.js';

/** path?query, keeping the order of the parameters and repeated values; empty values dropped. */
export function urlWith(path: string, query: RawQuery): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== '') search.append(key, v);
  }
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

export function reportUrls(name: string) {
  const slug = encodeURIComponent(name);
  return {
    html: `/reports/${slug}`,
    json: `/api/reports/${slug}`,
    csv: `/api/reports/${slug}.csv`,
  };
}

/**
 * Where to go back to after a form POST: only a path of this app (so the form field cannot be
 * used to redirect elsewhere).
 */
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

export function safeReturnPath(value: unknown): string | null {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return null;
  if (value.length > 2000 || /[\u0000-\u001f]/.test(value)) return null;
  return value;
}

/** How the app is reached: its public URL and the reverse proxies in front of it. */
import { parseAddressRule } from '../auth/addresses.js';
import type { Env } from './env.js';
import type { ConfigProblem } from './problems.js';
import type { WebSettings } from './types.js';

/**
 * CLOUDTALLY_PUBLIC_URL (an origin: http(s), no path, query, fragment or credentials) and the
 * trusted reverse proxies (CLOUDTALLY_TRUSTED_PROXIES, comma- or space-separated, plus the
 * sign-in proxy's addresses, which are proxies too).
 */
export function webSettings(vars: Env, proxyAddresses: readonly string[], problems: ConfigProblem[]): WebSettings {
  let publicUrl: string | null = null;
  const text = vars.CLOUDTALLY_PUBLIC_URL;
  if (text !== undefined) {
    const problem = publicUrlProblem(text);
    if (problem) problems.push({ path: 'CLOUDTALLY_PUBLIC_URL', message: problem });
    else publicUrl = new URL(text).origin;
  }
  const listed = (vars.CLOUDTALLY_TRUSTED_PROXIES ?? '').split(/[\s,]+/).filter((t) => t !== '');
  for (const entry of listed) {
    const rule = parseAddressRule(entry);
    if ('problem' in rule) problems.push({ path: 'CLOUDTALLY_TRUSTED_PROXIES', message: `${JSON.stringify(entry)} ${rule.problem}` });
  }
  return { publicUrl, trustedProxies: [...new Set([...listed, ...proxyAddresses.map((a) => a.trim())])] };
}

function publicUrlProblem(text: string): string | null {
  const shape = 'must be the absolute http(s) address people open, without a path (e.g. https://cloudtally.example.com)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return shape;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return shape;
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.search || url.hash || text.includes('?') || text.includes('#')) return 'must not have a query (?) or fragment (#)';
  if (url.pathname !== '/') return 'must not have a path: cloudtally is served at the root of its host (its cookies use the __Host- prefix, which needs Path=/)';
  return null;
}

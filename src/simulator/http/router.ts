import type { Reply, RouteContext } from './types.js';

/**
 * A small path router: patterns like `/cloud/v1/keypairs/:project_id/:region_id`, matched segment
 * by segment. Knows which methods a path has, so a wrong method answers 405 and not 404.
 */

export type Handler = (ctx: RouteContext) => Reply | Promise<Reply>;

interface Route {
  method: string;
  segments: string[];
  handler: Handler;
  /** The route's own auth rule: the simulator's /_sim/ routes need none. */
  public: boolean;
}

export type RouteMatch =
  | { kind: 'found'; handler: Handler; params: Record<string, string>; public: boolean }
  | { kind: 'wrong_method'; allowed: string[] }
  | { kind: 'none' };

function splitPath(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler, options: { public?: boolean } = {}): this {
    this.routes.push({ method: method.toUpperCase(), segments: splitPath(pattern), handler, public: options.public ?? false });
    return this;
  }

  /** Path without query; a trailing slash is ignored. Throws URIError on a malformed escape. */
  match(method: string, path: string): RouteMatch {
    const parts = splitPath(path);
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = matchSegments(route.segments, parts);
      if (!params) continue;
      if (route.method === method.toUpperCase()) return { kind: 'found', handler: route.handler, params, public: route.public };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { kind: 'wrong_method', allowed: [...new Set(allowed)] } : { kind: 'none' };
  }
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | null {
  if (pattern.length !== parts.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i] as string;
    const actual = parts[i] as string;
    if (expected.startsWith(':')) params[expected.slice(1)] = decodeURIComponent(actual);
    else if (expected !== actual) return null;
  }
  return params;
}

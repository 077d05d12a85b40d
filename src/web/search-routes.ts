/** Global search: `GET /api/search?q=&limit=` (JSON) and `GET /search?q=` (the page the header box submits to). */
import { Router } from 'express';
import type { ReportContext } from '../reports/report.js';
import { removedAgo, search, searchParams, type SearchResult } from '../reports/search.js';
import type { ReportCtx } from '../reports/shared/types.js';
import { invalidParameters } from './errors.js';
import { toJson } from './json.js';
import { toRawQuery, zodFieldErrors } from './query.js';
import type { RenderPage } from './render.js';
import { scopeOfRequest } from './request-scope.js';

export interface SearchRoutesDeps {
  context: () => ReportContext;
  render: RenderPage;
}

function parse(query: unknown) {
  const raw = toRawQuery(query);
  const parsed = searchParams.safeParse(raw);
  if (!parsed.success) throw invalidParameters(zodFieldErrors(parsed.error.issues, raw));
  return parsed.data;
}

/** What a result shows where a status goes: its status, or when it was removed. */
function stateOf(result: SearchResult, now: Date): string {
  return result.removedAt ? removedAgo(result.removedAt, now) : (result.status ?? 'current');
}

export function searchRoutes(deps: SearchRoutesDeps): Router {
  const router = Router();

  router.get('/api/search', async (req, res) => {
    const params = parse(req.query);
    const ctx = { ...deps.context(), scope: scopeOfRequest(res) } as ReportCtx;
    const results = await search(ctx, params);
    res.setHeader('Cache-Control', 'no-store');
    res.type('json').send(
      toJson({
        q: params.q,
        limit: params.limit,
        results: results.map((r) => ({
          kind: r.kind,
          id: r.id,
          name: r.name,
          scope: { project_id: r.projectId, region_id: r.regionId, region_name: r.regionName },
          status: stateOf(r, ctx.now),
          current: r.removedAt === null,
          removed_at: r.removedAt,
          matched: r.matched,
          href: r.href,
        })),
      }),
    );
  });

  router.get('/search', async (req, res) => {
    const raw = toRawQuery(req.query);
    if (raw['q'] === undefined || String(raw['q']).trim() === '') {
      return deps.render(req, res, 'pages/search', { pageTitle: 'Search', q: '', results: null });
    }
    const params = parse(req.query);
    const ctx = { ...deps.context(), scope: scopeOfRequest(res) } as ReportCtx;
    const results = await search(ctx, params);
    return deps.render(req, res, 'pages/search', {
      pageTitle: `Search: ${params.q}`,
      q: params.q,
      results: results.map((r) => ({ ...r, state: stateOf(r, ctx.now) })),
    });
  });

  return router;
}

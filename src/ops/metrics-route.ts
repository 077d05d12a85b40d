/**
 * GET /metrics, with the access the configuration chose:
 *   open   anyone who can reach the port may scrape (no secrets; the cost gauges show spend per group)
 *   token  `Authorization: Bearer <token>` required (Prometheus: `authorization: { credentials: ... }`)
 *   off    no /metrics route at all (the request falls through to the app's 404)
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type Request } from 'express';
import { METRICS_TOKEN_MIN_LENGTH, type MetricsAccessMode } from '../config/index.js';
import type { Metrics } from './metrics.js';

/** The shape of config.metrics. */
export interface MetricsAccess {
  access: MetricsAccessMode;
  /** Required (at least 16 characters) when access is 'token'. */
  token?: string | null;
}

export function metricsRouter(metrics: Pick<Metrics, 'text' | 'contentType'>, settings: MetricsAccess): Router {
  const router = Router();
  if (settings.access === 'off') return router;
  let allowed: (req: Request) => boolean = () => true;
  if (settings.access === 'token') {
    const token = settings.token ?? '';
    if (token.length < METRICS_TOKEN_MIN_LENGTH) {
      throw new TypeError(`metrics access 'token' needs a token of at least ${METRICS_TOKEN_MIN_LENGTH} characters`);
    }
    const expected = digest(token);
    allowed = (req) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get('authorization') ?? '');
      // Compared as fixed-length digests, so neither the length nor the content leaks through timing.
      return match !== null && timingSafeEqual(digest(match[1]!), expected);
    };
  }
  router.get('/metrics', async (req, res, next) => {
    res.setHeader('cache-control', 'no-store');
    if (!allowed(req)) {
      res.setHeader('www-authenticate', 'Bearer realm="cloudtally metrics"');
      res.status(401).type('text/plain').send('metrics require a bearer token\n');
      return;
    }
    try {
      const body = await metrics.text();
      res.status(200).setHeader('content-type', metrics.contentType);
      res.send(body);
    } catch (err) {
      next(err);
    }
  });
  return router;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

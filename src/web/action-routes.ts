import { Router } from 'express';
import { isDatabaseUnavailable } from './errors.js';
import { setFlash } from './flash.js';
import type { CollectResult } from './types.js';
import { safeReturnPath } from './return-path.js';

export interface ActionRoutesDeps {
  collectNow?: () => Promise<CollectResult>;
  secureCookies: boolean;
}

/**
 * State-changing routes. CSRF protection is mounted before them by the app (every POST needs a
 * token), so a route here only does its job.
 */
export function actionRoutes(deps: ActionRoutesDeps): Router {
  const router = Router();

  if (deps.collectNow) {
    const collectNow = deps.collectNow;
    router.post('/actions/collect', async (req, res) => {
      const back = safeReturnPath((req.body as Record<string, unknown> | undefined)?.return_to) ?? '/';
      const wantsJson = req.accepts(['html', 'json']) === 'json';
      let result: CollectResult;
      try {
        result = await collectNow();
      } catch (err) {
        // The error handler logs it and answers 500 with the request id (503 while the database is unavailable).
        if (wantsJson || isDatabaseUnavailable(err)) throw err;
        res.locals.log.error({ err }, 'collect now failed');
        const text = `The collection could not be started: ${err instanceof Error ? err.message : String(err)} (request id ${res.locals.requestId}).`;
        setFlash(res, { kind: 'error', text }, deps.secureCookies);
        return res.redirect(303, back);
      }
      res.locals.log.info({ runId: result.runId, status: result.status }, 'collect now requested');
      if (wantsJson) return res.status(202).json({ run_id: result.runId, status: result.status });
      const text = result.alreadyRunning
        ? `A collection was already running (run ${result.runId}); its figures show when it finishes.`
        : `Collection started: run ${result.runId} (${result.status}).`;
      setFlash(res, { kind: 'info', text }, deps.secureCookies);
      return res.redirect(303, back);
    });
  }

  return router;
}

import { Router } from 'express';
import { isDatabaseUnavailable } from './errors.js';
import { setFlash } from './flash.js';
import type { CollectResult } from './types.js';
import { safeReturnPath } from './return-path.js';

/** "Collect now" answers within this long, whatever the database does (docs/production.md, "Reliability bounds"). */
export const COLLECT_NOW_ANSWER_MS = 1_500;

export interface ActionRoutesDeps {
  collectNow?: () => Promise<CollectResult>;
  secureCookies: boolean;
  /** How long "collect now" waits for the run to be started before it answers 503 (default COLLECT_NOW_ANSWER_MS). */
  collectNowAnswerMs?: number;
}

/**
 * State-changing routes. CSRF protection is mounted before them by the app (every POST needs a
 * token), so a route here only does its job.
 *
 * POST /actions/collect: JSON clients (`Accept: application/json`) get 202 `{run_id, status,
 * started_at}` when a run was started, 409 `{error, run_id, status, started_at}` naming the run
 * already under way, 503 with Retry-After when the start did not finish in time (it may still
 * start). Browsers are sent back where they came from with a message saying the same.
 */
export function actionRoutes(deps: ActionRoutesDeps): Router {
  const router = Router();
  const answerMs = deps.collectNowAnswerMs ?? COLLECT_NOW_ANSWER_MS;

  if (deps.collectNow) {
    const collectNow = deps.collectNow;
    router.post('/actions/collect', async (req, res) => {
      const back = safeReturnPath((req.body as Record<string, unknown> | undefined)?.return_to) ?? '/';
      const wantsJson = req.accepts(['html', 'json']) === 'json';
      const log = res.locals.log;
      const asked = collectNow();
      let result: CollectResult | 'late';
      try {
        result = await answerWithin(asked, answerMs);
      } catch (err) {
        // The error handler logs it and answers 500 with the request id (503 while the database is unavailable).
        if (wantsJson || isDatabaseUnavailable(err)) throw err;
        log.error({ err }, 'collect now failed');
        const text = `The collection could not be started: ${err instanceof Error ? err.message : String(err)} (request id ${res.locals.requestId}).`;
        setFlash(res, { kind: 'error', text }, deps.secureCookies);
        return res.redirect(303, back);
      }
      if (result === 'late') {
        // The start goes on (a dead run being ended, a slow database); the request does not wait for it.
        asked.then(
          (late) => log.info({ runId: late.runId, alreadyRunning: late.alreadyRunning === true }, 'collect now: answered before the start finished'),
          (err: unknown) => log.error({ err }, 'collect now failed after the answer'),
        );
        const text = `The collection did not start within ${answerMs / 1000} s (the database is slow to answer); it may still start: look again in a moment.`;
        res.setHeader('retry-after', '5');
        if (wantsJson) return res.status(503).json({ error: text });
        setFlash(res, { kind: 'error', text }, deps.secureCookies);
        return res.redirect(303, back);
      }
      log.info({ runId: result.runId, status: result.status, alreadyRunning: result.alreadyRunning === true }, 'collect now requested');
      const startedAt = result.startedAt === undefined ? {} : { started_at: new Date(result.startedAt).toISOString() };
      if (wantsJson) {
        if (result.alreadyRunning) {
          const since = 'started_at' in startedAt ? `, started ${startedAt.started_at}` : '';
          return res.status(409).json({ error: `a collection is already running (run ${result.runId}${since})`, run_id: result.runId, status: result.status, ...startedAt });
        }
        return res.status(202).json({ run_id: result.runId, status: result.status, ...startedAt });
      }
      const text = result.alreadyRunning
        ? `A collection was already running (run ${result.runId}); its figures show when it finishes.`
        : `Collection started: run ${result.runId} (${result.status}).`;
      setFlash(res, { kind: 'info', text }, deps.secureCookies);
      return res.redirect(303, back);
    });
  }

  return router;
}

/** The value, or 'late' when the promise has not settled within ms (it goes on). */
function answerWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

import { createHmac, randomBytes } from 'node:crypto';
import express from 'express';
import cookieParser from 'cookie-parser';
import helmet from 'helmet';
import { actionPages } from './action-pages.js';
import { actionRoutes } from './action-routes.js';
import { budgetPages } from './budget-pages.js';
import { CSRF_FIELD, createCsrfProtection } from './csrf.js';
import { ClientError } from './errors.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { chartJsDistDir, chartJsFile, publicDir } from './paths.js';
import { createRenderer } from './render.js';
import { reportRoutes } from './report-routes.js';
import { navViews, savedViewPages } from './saved-view-pages.js';
import { searchRoutes } from './search-routes.js';
import { requestLogging } from './request-log.js';
import type { WebDeps } from './types.js';
import type { Database } from '../db/connection.js';
import { refuseNulCharacters } from './text-input.js';
import { loopbackHostOnly, PLAIN_SITE, sameOriginWrites, securedByHttps, trustProxy } from './site.js';

export type { AuthLayoutView, DataStatus, CollectResult, WebAuth, WebDeps } from './types.js';
export type { SiteSettings } from './site.js';

/** The Content Security Policy: nothing inline, nothing from elsewhere. Chart.js works under it. */
export const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  frameAncestors: ["'none'"],
  formAction: ["'self'"],
};

/** The navigation's saved views for whoever makes the request (none before sign-in). */
function savedViewsOfRequest(db: Database) {
  return async (_req: express.Request, res: express.Response) => (res.locals.identity ? navViews(db, res.locals.identity.name) : null);
}

/**
 * The web app: report pages, JSON and CSV for any list of report definitions, static assets,
 * the collect-now action. Everything it needs comes in `deps`; it opens no database and reads no
 * environment.
 */
export function createWebApp(deps: WebDeps): express.Express {
  const secret = deps.secret ?? randomBytes(32).toString('hex');
  // One key per use, derived from the one secret, so a token of one kind is never valid as another.
  const keyFor = (purpose: string) => createHmac('sha256', secret).update(purpose).digest('hex');
  const site = deps.site ?? PLAIN_SITE;
  const secureCookies = securedByHttps(site.publicUrl);
  const auth = deps.auth;
  if (deps.actions && !auth) throw new Error('createWebApp: the action pages (deps.actions) need sign-in (deps.auth)');
  if (deps.savedViews && !auth) throw new Error('createWebApp: saved views (deps.savedViews) need sign-in (deps.auth)');
  if (deps.budgets && !auth) throw new Error('createWebApp: the budget editor (deps.budgets) needs sign-in (deps.auth)');
  const csrf = createCsrfProtection({
    secret: keyFor('csrf'),
    secure: secureCookies,
    sessionIdentifier: deps.csrfSessionIdentifier ?? auth?.csrfSessionIdentifier,
  });
  const renderer = createRenderer({
    reports: deps.reports,
    demo: deps.demo,
    status: deps.status,
    collectEnabled: deps.collectNow !== undefined,
    csrfToken: csrf.tokenFor,
    csrfField: CSRF_FIELD,
    auth: auth?.layout,
    ...(deps.savedViews && auth ? { savedViews: savedViewsOfRequest(deps.savedViews.db) } : {}),
  });
  const render = renderer.page;

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // No ETag on what res.send answers: the pages and the API are no-store, so no client ever
  // revalidates them, and hashing a 100 KB report page cost each view a SHA-1 of its body.
  // Static files keep theirs (serve-static's own).
  app.set('etag', false);
  // X-Forwarded-For / -Proto / -Host count only from the configured proxies (req.ip, req.protocol, req.host).
  app.set('trust proxy', trustProxy(site.trustedProxies));

  app.use(requestLogging(deps.logger));
  if (site.localOnly) app.use(loopbackHostOnly());
  app.use(
    helmet({
      // Exactly these directives: helmet's defaults add upgrade-insecure-requests, which breaks
      // a plain-HTTP deployment on a LAN address.
      contentSecurityPolicy: { useDefaults: false, directives: CSP_DIRECTIVES },
      // HSTS only when the public URL is https (browsers ignore it over plain HTTP anyway).
      strictTransportSecurity: secureCookies,
      // Within the site only (helmet's default sends none): the stop confirmation returns to the
      // report a "Stop…" link was followed from. Other sites never see a URL.
      referrerPolicy: { policy: 'same-origin' },
    }),
  );

  // sendFile calls back after a successful send too: only an error may go on to next(), or the
  // finished response would fall through to the 404 handler (which then closes the connection).
  const chartJs = (file: string): express.RequestHandler => (_req, res, next) => res.sendFile(file, { root: chartJsDistDir, maxAge: '1d' }, (err) => err && next(err));
  app.get(`/static/${chartJsFile}`, chartJs(chartJsFile));
  app.get(`/static/${chartJsFile}.map`, chartJs(`${chartJsFile}.map`));
  app.use('/static', express.static(publicDir, { index: false, fallthrough: true }));
  // Browsers ask for /favicon.ico on pages without an icon link (a JSON answer opened in a tab).
  app.get('/favicon.ico', (_req, res) => res.redirect(301, '/static/favicon.svg'));

  // Browsers' writes from other sites are refused before anything reads their body or cookies.
  app.use(sameOriginWrites(site.publicUrl));
  app.use(cookieParser(keyFor('cookies')));
  app.use(express.urlencoded({ extended: false, limit: '32kb' }));
  app.use(refuseNulCharacters);
  // Who is asking, before CSRF: tokens are bound to the login session.
  if (auth) app.use(auth.identify);
  // Every state-changing request below needs a CSRF token (GET/HEAD/OPTIONS pass through).
  // Reports are read-only: another method is a 405 naming the allowed ones (before CSRF, which
  // would otherwise answer "invalid CSRF token" to a method that can never work).
  app.use(['/reports', '/api/reports', '/search', '/api/search'], (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    res.setHeader('Allow', 'GET, HEAD');
    next(new ClientError(405, 'method_not_allowed', `${req.method} is not allowed here: reports are read with GET.`));
  });
  app.use(csrf.protect);
  if (auth) {
    app.use(auth.routes({ csrfToken: csrf.tokenFor, csrfField: CSRF_FIELD }));
    // Everything below needs a signed-in user (pages redirect to /login, /api answers 401).
    app.use(auth.requireLogin);
    app.use('/actions/collect', auth.requireRole('admin'));
  }

  app.use(reportRoutes({ reports: deps.reports, context: deps.context, render, renderKept: renderer.keptPage }));
  app.use(searchRoutes({ context: deps.context, render }));
  if (deps.actions && auth) app.use(actionPages({ ...deps.actions, auth, render, secureCookies }));
  if (deps.budgets && auth) app.use(budgetPages({ ...deps.budgets, auth, render, secureCookies }));
  if (deps.savedViews && auth) app.use(savedViewPages({ ...deps.savedViews, reports: deps.reports, auth, render, secureCookies }));
  app.use(actionRoutes({ collectNow: deps.collectNow, secureCookies }));

  app.use(notFoundHandler);
  app.use(errorHandler(render));
  return app;
}

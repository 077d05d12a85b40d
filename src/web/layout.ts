import type { Request, Response } from 'express';
import type { Logger } from '../logger.js';
import { formatTimestamp } from '../present/format.js';
import { reportUrls } from '../present/urls.js';
import type { ReportDefinition } from '../reports/report.js';
import { isDatabaseUnavailable } from './errors.js';
import { takeFlash, type Flash } from './flash.js';
import { scopeOfRequest, visibleReports } from './request-scope.js';
import type { AuthLayoutView, DataStatus } from './types.js';

export type BannerKind = 'demo' | 'stale' | 'info' | 'error' | 'local';

/** A banner in a word or two: the one line a view folds the notices into (ReportDefinition.foldsNotices). */
const BANNER_SHORT: Readonly<Record<BannerKind, string>> = {
  local: 'Local mode',
  demo: 'Demo data',
  stale: 'Stale data',
  info: 'Collection in progress',
  error: 'Error',
};

/** What every page's layout shows: navigation, banners, flash, the collect button. */
export interface LayoutView {
  nav: Array<{ section: string; label: string; reports: Array<{ name: string; title: string; href: string; current: boolean }> }>;
  /** `short`: the banner in a word or two, for a view that folds the notices into one line. */
  banners: Array<{ kind: BannerKind; text: string; short: string }>;
  flash: Flash | null;
  /** For every form that POSTs: `<%~ include('/partials/csrf', it) %>` writes the hidden field. */
  csrf: { field: string; token: string };
  /** Present when the collect-now button is shown. */
  collect: { action: string; returnTo: string; running: boolean } | null;
  dataAsOf: string | null;
  /**
   * What the data is, for empty tables and charts to say why: `none` before the first good
   * collection (`collecting` while it runs), `preparing` while the demo history is built,
   * `ready` otherwise; `unknown` without a status (web-layer tests) or when it cannot be read.
   */
  dataState: 'none' | 'collecting' | 'preparing' | 'ready' | 'unknown';
  requestId: string;
  /** Who is signed in (null without sign-in, e.g. web-layer tests): the top bar, and whether pages show actions. */
  user: AuthLayoutView['user'];
  /** The signed-in user's saved views and the shared ones (a short list), when the app has saved views. */
  savedViews: SavedViewsNav | null;
  /** On a report page: the "Save view" form posting the page's URL. */
  saveView: { action: string; path: string } | null;
}

export interface SavedViewsNav {
  items: Array<{ name: string; href: string; shared: boolean; mine: boolean }>;
  /** More views than listed: the link to all of them says so. */
  more: boolean;
}

export const SECTIONS: ReadonlyArray<{ section: ReportDefinition['section']; label: string }> = [
  { section: 'cost', label: 'Cost' },
  { section: 'inventory', label: 'Inventory' },
  { section: 'operations', label: 'Operations' },
  { section: 'health', label: 'Health' },
];

export function navigation(reports: ReadonlyArray<ReportDefinition<unknown, unknown, unknown>>, current: string | null): LayoutView['nav'] {
  return SECTIONS.map(({ section, label }) => ({
    section,
    label,
    reports: reports
      .filter((r) => r.section === section)
      .map((r) => ({ name: r.name, title: r.title, href: reportUrls(r.name).html, current: r.name === current })),
  })).filter((group) => group.reports.length > 0);
}

export interface LayoutDeps {
  reports: ReadonlyArray<ReportDefinition<unknown, unknown, unknown>>;
  demo: boolean;
  status?: () => Promise<DataStatus>;
  collectEnabled: boolean;
  csrfToken: (req: Request, res: Response) => string;
  csrfField: string;
  /** Sign-in state of the request, when the app has sign-in. */
  auth?: (req: Request) => AuthLayoutView;
  /** The saved views the request's user sees (null: none to show, e.g. nobody signed in). */
  savedViews?: (req: Request, res: Response) => Promise<SavedViewsNav | null>;
}

/** The navigation's saved views; a failure to read them never breaks the page (the error page included). */
async function readSavedViews(deps: LayoutDeps, req: Request, res: Response): Promise<SavedViewsNav | null> {
  if (!deps.savedViews) return null;
  try {
    return await deps.savedViews(req, res);
  } catch (err) {
    res.locals.log.warn({ err: { message: (err as Error).message } }, 'saved views unavailable for the navigation');
    return null;
  }
}

async function readStatus(deps: LayoutDeps, log: Logger): Promise<DataStatus | 'unavailable' | null> {
  if (!deps.status) return null;
  try {
    return await deps.status();
  } catch (err) {
    // The page still renders (the reports themselves may be fine); the banner says why it cannot tell.
    if (isDatabaseUnavailable(err)) log.warn({ err: { message: (err as Error).message } }, 'data status unavailable: the database is unavailable');
    else log.error({ err }, 'data status unavailable');
    return 'unavailable';
  }
}

function listed(items: readonly string[], max = 10): string {
  return items.slice(0, max).join(', ') + (items.length > max ? ` and ${items.length - max} more` : '');
}

/** "Collection failing for p1-r2, global: API key not accepted (401). ..." */
function failingText(failure: NonNullable<DataStatus['failing']>[number], hasData: boolean): string {
  const runs = failure.runIds.map((id) => `#${id}`).join(', ');
  const what = failure.scopes.includes('*') ? 'Collection run failed' : `Collection failing for ${listed(failure.scopes)}`;
  const collectors = failure.collectors.filter((c) => c !== '*');
  const detail = [collectors.length > 0 ? listed(collectors, 5) : null, `last run ${runs}`].filter(Boolean).join('; ');
  const data = hasData ? 'Reports show the last good data.' : 'No data could be collected.';
  return `${what}: ${failure.reason} (${detail}). ${data} See Collection health.`;
}

export async function layoutView(deps: LayoutDeps, req: Request, res: Response, currentReport: string | null): Promise<LayoutView> {
  const banners: Array<{ kind: BannerKind; text: string }> = [];
  const auth = deps.auth ? deps.auth(req) : null;
  if (auth?.banner) banners.push({ kind: 'local', text: auth.banner });
  if (deps.demo) banners.push({ kind: 'demo', text: 'Demo data from the built-in simulator: these are not your cloud’s resources or costs.' });
  // Both reads at once: every page waits for them.
  const [status, savedViews] = await Promise.all([readStatus(deps, res.locals.log), readSavedViews(deps, req, res)]);
  let dataAsOf: string | null = null;
  let running = false;
  let dataState: LayoutView['dataState'] = 'unknown';
  if (status === 'unavailable') {
    banners.push({ kind: 'error', text: 'The age of the data could not be read; see the logs.' });
  } else if (status) {
    running = status.running;
    dataAsOf = status.lastGoodAt ? formatTimestamp(status.lastGoodAt) : null;
    dataState = status.preparingDemo ? 'preparing' : status.lastGoodAt ? 'ready' : status.running ? 'collecting' : 'none';
    if (status.preparingDemo) {
      banners.push({ kind: 'info', text: preparingDemoText(status.demoHistory) });
    } else if (!status.lastGoodAt) {
      banners.push({ kind: 'stale', text: status.running ? 'No data yet: the first collection is running.' : 'No data collected yet.' });
    } else if (status.staleScopes.length > 0) {
      const scopes = status.staleScopes.slice(0, 10).join(', ') + (status.staleScopes.length > 10 ? ` and ${status.staleScopes.length - 10} more` : '');
      banners.push({ kind: 'stale', text: `Stale data: the latest good snapshot of ${scopes} is older than twice its schedule. Latest good collection: ${dataAsOf}.` });
    }
    for (const failure of status.failing ?? []) banners.push({ kind: 'error', text: failingText(failure, status.lastGoodAt !== null) });
    if (status.running && status.lastGoodAt && !status.preparingDemo) banners.push({ kind: 'info', text: 'A collection is running; figures update when it finishes.' });
  }
  const onReportPage = currentReport !== null && req.method === 'GET' && req.path.startsWith('/reports/');
  return {
    nav: navigation(visibleReports(deps.reports, scopeOfRequest(res)), currentReport),
    banners: banners.map((b) => ({ ...b, short: BANNER_SHORT[b.kind] })),
    flash: takeFlash(req, res),
    csrf: { field: deps.csrfField, token: deps.csrfToken(req, res) },
    // Collect-now is an admin action: hidden from everyone else (the route refuses them too).
    collect: deps.collectEnabled && (!auth || auth.user?.canAdmin) ? { action: '/actions/collect', returnTo: req.originalUrl, running } : null,
    dataAsOf,
    dataState,
    requestId: res.locals.requestId,
    user: auth?.user ?? null,
    savedViews,
    saveView: savedViews !== null && onReportPage ? { action: '/views', path: req.originalUrl } : null,
  };
}

function preparingDemoText(progress: DataStatus['demoHistory']): string {
  const what = progress ? `Building demo history: ${progress.done} of ${progress.total} collections` : 'Preparing the demo';
  return `${what}. The simulator’s recent history is being collected; figures grow until it ends and are incomplete until then.`;
}

import type { Request, RequestHandler, Response, Router } from 'express';
import type { Role } from '../auth/roles.js';
import type { ActionPagesDeps } from './action-pages.js';
import type { BudgetPagesDeps } from './budget-pages.js';
import type { SiteSettings } from './site.js';
import type { Logger } from '../logger.js';
import type { ReportContext, ReportDefinition } from '../reports/report.js';

/** How fresh the collected data is, shown as a banner on every page. */
export interface DataStatus {
  /** End of the latest successful collection of any scope; null before the first one. */
  lastGoodAt: Date | null;
  /** Scopes whose latest good snapshot is older than twice their schedule (or missing). */
  staleScopes: string[];
  /** Whether a collection is running now. */
  running: boolean;
  /**
   * The demo history is being collected at start-up: its backdated snapshots look stale until it
   * ends, so the banner says what is happening instead.
   */
  preparingDemo?: boolean;
  /** How far the demo history is while it is being built: collections done of the total. */
  demoHistory?: { done: number; total: number };
  /**
   * Collections whose latest run failed, one entry per reason ("API key not accepted (401)")
   * with the scopes and collectors affected: a banner on every page until a later run succeeds.
   */
  failing?: Array<{ reason: string; scopes: string[]; collectors: string[]; runIds: number[] }>;
}

export interface CollectResult {
  runId: string | number;
  status: string;
  /** The request joined a run already under way instead of starting one. */
  alreadyRunning?: boolean;
  /** When that run started. */
  startedAt?: Date | string;
}

export interface WebDeps {
  // Reports are generic over their params, database and config types; the web layer only
  // passes through what `context()` returns, so it accepts any of them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  reports: ReportDefinition<any, any, any>[];
  /** A fresh context per request (its `now` is the report's "now"). */
  context: () => ReportContext;
  logger: Logger;
  /** True when the data comes from the built-in simulator: every page says so. */
  demo: boolean;
  status?: () => Promise<DataStatus>;
  /** Starts a collection; the "Collect now" button exists only when this is given. */
  collectNow?: () => Promise<CollectResult>;
  /**
   * Secret for signing cookies and CSRF tokens. Without it a random one is made per process
   * (tokens then stop working across restarts and between replicas: give one in production).
   */
  secret?: string;
  /**
   * How the app is reached (src/web/site.ts): public URL (https: Secure `__Host-` cookies and
   * HSTS), trusted proxies (Express's `trust proxy`), local-only mode (loopback Host only).
   * Default: no public URL, no proxy, not local-only.
   */
  site?: SiteSettings;
  /**
   * What binds a CSRF token to its user. Defaults to an anonymous per-browser cookie id; the
   * login sessions should pass their session id here.
   */
  csrfSessionIdentifier?: (req: Request) => string;
  /**
   * Sign-in and roles (src/web/auth.ts `createWebAuth`). Without it every page is open (tests of
   * the web layer only); main.ts always passes it (local-only mode included).
   */
  auth?: WebAuth;
  /** The stop / schedule / cancel pages (src/web/action-pages.ts); needs `auth`. */
  actions?: ActionPagesDeps;
  /** The budget editor for admins (src/web/budget-pages.ts); needs `auth`. */
  budgets?: BudgetPagesDeps;
}

/** What the app gives the auth routes: CSRF tokens for their forms. */
export interface WebAuthKit {
  csrfToken: (req: Request, res: Response) => string;
  csrfField: string;
}

/** Who is signed in, for the layout (name, role, what they may do) and the local-only banner. */
export interface AuthLayoutView {
  user: { name: string; role: Role; via: 'session' | 'proxy' | 'local'; canAct: boolean; canAdmin: boolean; canLogout: boolean; /** "Team: ml": what a scoped user sees; null: everything. */ scope: string | null } | null;
  banner: string | null;
}

/**
 * The sign-in layer, mounted by createWebApp in this order: `identify` (before CSRF, so tokens
 * bind to the session), CSRF protection, `routes` (/login, /logout), `requireLogin`, then the
 * pages; `requireRole` guards what needs more than reading.
 */
export interface WebAuth {
  identify: RequestHandler;
  /** What binds a CSRF token: the login session, else a per-browser id for anonymous visitors. */
  csrfSessionIdentifier: (req: Request) => string;
  routes: (kit: WebAuthKit) => Router;
  requireLogin: RequestHandler;
  requireRole: (role: Role) => RequestHandler;
  layout: (req: Request) => AuthLayoutView;
}

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import { Eta } from 'eta';
import { layoutView, type LayoutDeps, type LayoutView } from './layout.js';
import { PageBodies, type PageBody } from './page-bodies.js';
import { viewsDir } from './paths.js';

export interface PageOptions {
  /** The report the page belongs to (highlighted in the navigation). */
  currentReport?: string | null;
  status?: number;
}

export type RenderPage = (req: Request, res: Response, template: string, data: Record<string, unknown>, options?: PageOptions) => Promise<void>;

/**
 * A report page whose body may be reused (see page-bodies.ts): `owners` are the cached objects it
 * is made from, `key` what else it depends on in the request (its query); `data` builds the
 * page's data when the body has to be rendered.
 */
export interface KeptPage {
  template: string;
  owners: readonly [object, ...Array<object | null>];
  key: string;
  data: () => Record<string, unknown>;
}

export type RenderKeptPage = (req: Request, res: Response, page: KeptPage, options?: PageOptions) => Promise<void>;

export interface Renderer {
  page: RenderPage;
  /** Renders like `page`, reusing the body when the template has a body of its own (BODY_TEMPLATES). */
  keptPage: RenderKeptPage;
}

/**
 * Page templates whose body (all but `layout('/layout')`) is a template of its own, which may be
 * kept: the generic report page, and the overview (the first screen, the page most users open).
 * A body that draws a form carries its user's CSRF token and must not be kept: the custom views
 * of idle candidates, the inventory and scheduled stops stay whole.
 */
const BODY_TEMPLATES: ReadonlyMap<string, string> = new Map([
  ['pages/report', 'pages/report-body'],
  ['reports/overview', 'reports/overview-body'],
]);

/** The body template of a page template whose body is kept (BODY_TEMPLATES), or undefined. */
export function keptBodyTemplate(template: string): string | undefined {
  return BODY_TEMPLATES.get(template);
}

const CUSTOM_VIEW_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Fails at start-up, not on the first request, when a report names a template that is not there. */
export function customViewTemplate(view: string): string {
  if (!CUSTOM_VIEW_NAME.test(view)) throw new Error(`report view "${view}" must be a plain name (letters, digits, - and _)`);
  const template = `reports/${view}`;
  if (!existsSync(join(viewsDir, `${template}.eta`))) throw new Error(`report view "${view}" not found: expected ${join(viewsDir, template)}.eta`);
  return template;
}

/**
 * eta with its compiled templates cached and each template's path resolved once: eta resolves
 * (and checks) the path of every include on every call, a cell partial once per table cell.
 */
export function createEta(): Eta {
  const eta = new Eta({ views: viewsDir, cache: true, autoEscape: true });
  const resolve = eta.resolvePath!.bind(eta);
  const resolved = new Map<string, string>();
  eta.resolvePath = (template, options) => {
    const key = `${options?.filepath ?? ''}\n${template}`;
    let path = resolved.get(key);
    if (path === undefined) resolved.set(key, (path = resolve(template, options)));
    return path;
  };
  return eta;
}

/** What the layout shows of the request alone, for a kept body's key (the body's empty state reads it). */
function requestViewKey(layout: LayoutView): string {
  const user = layout.user;
  // The banners too: a body that folds the notices into one line (ReportDefinition.foldsNotices) shows them.
  return JSON.stringify([layout.dataState, layout.collect !== null, user ? [user.role, user.canAct, user.canAdmin] : null, layout.banners.map((b) => b.text)]);
}

/** Where the layout places a kept body (layout.eta writes `it.body` raw): text no page contains. */
const BODY_MARK = '\u0000cloudtally:kept-body\u0000';

/**
 * Server-side HTML with eta: each page template sets `layout('/layout')`; the data of a page is
 * the layout's (navigation, banners, flash, collect button) plus the page's own.
 */
export function createRenderer(deps: LayoutDeps): Renderer {
  const eta = createEta();
  const bodies = new PageBodies();
  const send = (res: Response, html: string | Buffer, options: PageOptions) => {
    res.status(options.status ?? 200);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(html);
  };
  const page: RenderPage = async (req, res, template, data, options = {}) => {
    const layout = await layoutView(deps, req, res, options.currentReport ?? null);
    send(res, await eta.renderAsync(template, { ...layout, ...data }), options);
  };
  const keptPage: RenderKeptPage = async (req, res, kept, options = {}) => {
    const bodyTemplate = BODY_TEMPLATES.get(kept.template);
    if (!bodyTemplate) return page(req, res, kept.template, kept.data(), options);
    const layout = await layoutView(deps, req, res, options.currentReport ?? null);
    const body = await bodies.get(kept.owners, `${kept.template}|${requestViewKey(layout)}|${kept.key}`, async (): Promise<PageBody> => {
      const data = kept.data();
      // The body sees what the layout passes it (`{...it, body}`), so the layout's data too.
      const html = await eta.renderAsync(bodyTemplate, { ...layout, ...data });
      return { html: Buffer.from(html), layoutData: { pageTitle: data.pageTitle, charts: data.charts, foldsNotices: data.foldsNotices } };
    });
    // What the page template's layout('/layout') does: the layout with the page's data and body;
    // the layout is rendered around a mark, and only its own text is encoded per request.
    const around = await eta.renderAsync('/layout', { ...layout, ...body.layoutData, body: BODY_MARK });
    const at = around.indexOf(BODY_MARK);
    if (at < 0) throw new Error('the layout did not place the page body');
    send(res, Buffer.concat([Buffer.from(around.slice(0, at)), body.html, Buffer.from(around.slice(at + BODY_MARK.length))]), options);
  };
  return { page, keptPage };
}

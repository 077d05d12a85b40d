import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import { Eta } from 'eta';
import { layoutView, type LayoutDeps } from './layout.js';
import { viewsDir } from './paths.js';

export interface PageOptions {
  /** The report the page belongs to (highlighted in the navigation). */
  currentReport?: string | null;
  status?: number;
}

export type RenderPage = (req: Request, res: Response, template: string, data: Record<string, unknown>, options?: PageOptions) => Promise<void>;

const CUSTOM_VIEW_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** Fails at start-up, not on the first request, when a report names a template that is not there. */
export function customViewTemplate(view: string): string {
  if (!CUSTOM_VIEW_NAME.test(view)) throw new Error(`report view "${view}" must be a plain name (letters, digits, - and _)`);
  const template = `reports/${view}`;
  if (!existsSync(join(viewsDir, `${template}.eta`))) throw new Error(`report view "${view}" not found: expected ${join(viewsDir, template)}.eta`);
  return template;
}

/**
 * Server-side HTML with eta: each page template sets `layout('/layout')`; the data of a page is
 * the layout's (navigation, banners, flash, collect button) plus the page's own.
 */
export function createRenderer(deps: LayoutDeps): RenderPage {
  const eta = new Eta({ views: viewsDir, cache: true, autoEscape: true });
  return async (req, res, template, data, options = {}) => {
    const layout = await layoutView(deps, req, res, options.currentReport ?? null);
    const html = await eta.renderAsync(template, { ...layout, ...data });
    res.status(options.status ?? 200);
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(html);
  };
}

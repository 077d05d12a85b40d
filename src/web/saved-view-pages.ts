import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { changeView, createView, deleteView, mayChange, maySee, ViewForbiddenError, ViewNameTakenError, type ViewActor } from '../actions/saved-views.js';
import { accountKey } from '../auth/identity.js';
import type { Database } from '../db/connection.js';
import { formatTimestamp } from '../present/format.js';
import { savedView, visibleViews, type SavedView } from '../read-models/saved-views.js';
import type { ReportDefinition } from '../reports/report.js';
import { ClientError, notFound, type FieldError } from './errors.js';
import { setFlash } from './flash.js';
import { readForm } from './form.js';
import type { RenderPage } from './render.js';
import { checkViewPath, MAX_VIEW_PATH } from './saved-view-path.js';
import type { WebAuth } from './types.js';

/*
 * Saved views: any signed-in user saves a report URL under a name, for themselves or shared with
 * everyone. `GET /views/:id` is the share link (a redirect to the report, which then applies the
 * viewer's own scope). POSTs carry a CSRF token (mounted before these routes by the app).
 */

export interface SavedViewPagesDeps {
  db: Database;
  now?: () => Date;
}

interface MountDeps extends SavedViewPagesDeps {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  reports: ReadonlyArray<ReportDefinition<any, any, any>>;
  auth: WebAuth;
  render: RenderPage;
  secureCookies: boolean;
}

export const MAX_VIEW_NAME = 100;

const NameSchema = z
  .string()
  .trim()
  .min(1, 'is required')
  .max(MAX_VIEW_NAME, `may be at most ${MAX_VIEW_NAME} characters`);

/** Checkbox values: ticked (on, 1, true) or not (0, false, off, or absent). */
const SHARED_VALUES: Record<string, boolean> = { on: true, '1': true, true: true, yes: true, '0': false, false: false, off: false, no: false, '': false };

function sharedOf(value: string): boolean {
  const shared = SHARED_VALUES[value.trim().toLowerCase()];
  if (shared === undefined) throw invalidView([{ field: 'body.shared', message: 'must be on or off (a checkbox: 1/0, true/false, on/off)' }]);
  return shared;
}

function nameOf(value: string): string {
  const parsed = NameSchema.safeParse(value);
  if (!parsed.success) throw invalidView([{ field: 'body.name', message: parsed.error.issues[0]!.message }]);
  return parsed.data;
}

function invalidView(errors: FieldError[], status = 400, code = 'invalid_view'): ClientError {
  return new ClientError(status, code, `Invalid view: ${errors.map((e) => `${e.field.replace(/^body\./, '')}: ${e.message}`).join('; ')}`, errors);
}

function idOf(req: Request): number {
  const raw = String(req.params.id);
  if (!/^\d{1,15}$/.test(raw)) throw notFound(`No saved view ${raw.slice(0, 40)}.`);
  return Number(raw);
}

const viewUrl = (id: number) => `/views/${id}`;

function wantsJson(req: Request): boolean {
  return req.accepts(['html', 'json']) === 'json';
}

function actorOf(res: Response): ViewActor {
  const identity = res.locals.identity;
  if (!identity) throw new ClientError(401, 'unauthenticated', 'Sign in first.');
  return { name: identity.name, key: accountKey(identity.name), role: identity.role };
}

/** A view as JSON and as the list page shows it. */
function entryOf(view: SavedView, actor: ViewActor) {
  return {
    id: view.id,
    name: view.name,
    path: view.path,
    url: viewUrl(view.id),
    shared: view.shared,
    owner: view.owner,
    mine: view.owner === actor.key,
    created_at: view.createdAt.toISOString(),
    updated_at: view.updatedAt.toISOString(),
  };
}

/** What the navigation lists of a user's views (a short list; /views has all). */
export async function navViews(db: Database, identityName: string, max = 10): Promise<{ items: Array<{ name: string; href: string; shared: boolean; mine: boolean }>; more: boolean }> {
  const key = accountKey(identityName);
  const views = await visibleViews(db, key, max + 1);
  return { items: views.slice(0, max).map((v) => ({ name: v.name, href: viewUrl(v.id), shared: v.shared, mine: v.owner === key })), more: views.length > max };
}

export function savedViewPages(deps: MountDeps): Router {
  const router = Router();
  const now = deps.now ?? (() => new Date());
  const reports = new Map(deps.reports.map((r) => [r.name, r]));

  const listPage = async (req: Request, res: Response, form: { name: string; path: string; shared: boolean }, error: ClientError | null) => {
    const actor = actorOf(res);
    const views = (await visibleViews(deps.db, actor.key)).map((v) => ({ ...entryOf(v, actor), canChange: mayChange(v, actor), updated: formatTimestamp(v.updatedAt) }));
    await deps.render(
      req,
      res,
      'saved-views/list',
      { pageTitle: 'Saved views', views, form, error: error ? error.message : null, maxName: MAX_VIEW_NAME, maxPath: MAX_VIEW_PATH },
      { status: error?.status ?? 200 },
    );
  };

  /** A refusal: the list page with the form as posted and the message (HTML), or the error (JSON). */
  const refuse = async (req: Request, res: Response, err: unknown, form: { name: string; path: string; shared: boolean }) => {
    if (!(err instanceof ClientError) || wantsJson(req)) throw err;
    await listPage(req, res, form, err);
  };

  const done = (req: Request, res: Response, body: Record<string, unknown>, message: string) => {
    if (wantsJson(req)) return res.status(200).json({ ...body, message });
    setFlash(res, { kind: 'info', text: message }, deps.secureCookies);
    return res.redirect(303, '/views');
  };

  const forbidden = (err: ViewForbiddenError) => new ClientError(403, 'forbidden', err.message);
  const missing = (id: number) => notFound(`No saved view #${id} (it does not exist, or it is another user's and not shared).`);

  router.get('/views', (req, res) => listPage(req, res, { name: '', path: '', shared: false }, null));

  router.get('/api/views', async (_req, res) => {
    const actor = actorOf(res);
    res.setHeader('Cache-Control', 'no-store');
    res.json({ views: (await visibleViews(deps.db, actor.key)).map((v) => entryOf(v, actor)) });
  });

  router.post('/views', async (req, res) => {
    const raw = readForm(req.body, { single: ['name', 'path', 'shared'] });
    const form = { name: raw.name, path: raw.path, shared: raw.shared !== '' };
    try {
      const view = { name: nameOf(raw.name), path: await checkViewPath(raw.path, reports), shared: sharedOf(raw.shared) };
      const id = await createView({ db: deps.db, now: now() }, actorOf(res), view);
      res.locals.log.info({ view: id, name: view.name, shared: view.shared }, 'saved view created');
      if (wantsJson(req)) return res.status(201).location(viewUrl(id)).json({ id, url: viewUrl(id), path: view.path, message: `View "${view.name}" saved.` });
      setFlash(res, { kind: 'info', text: `View "${view.name}" saved${view.shared ? ' and shared' : ''}. Its link: ${viewUrl(id)}` }, deps.secureCookies);
      return res.redirect(303, viewUrl(id));
    } catch (err) {
      if (err instanceof ViewNameTakenError) return refuse(req, res, invalidView([{ field: 'body.name', message: err.message }], 409, 'view_name_taken'), form);
      return refuse(req, res, err, form);
    }
  });

  router.get('/views/:id', async (req, res) => {
    const id = idOf(req);
    const view = await savedView(deps.db, id);
    if (!view || !maySee(view, actorOf(res))) throw missing(id);
    res.redirect(303, view.path);
  });

  router.post('/views/:id', async (req, res) => {
    const id = idOf(req);
    const raw = readForm(req.body, { single: ['name', 'shared', 'shared_field'] });
    // A form with the shared checkbox says so (shared_field), so that an unticked box is "not shared".
    const change = {
      ...(raw.name !== '' ? { name: nameOf(raw.name) } : {}),
      ...(raw.shared !== '' || raw.shared_field !== '' ? { shared: sharedOf(raw.shared) } : {}),
    };
    if (change.name === undefined && change.shared === undefined) throw invalidView([{ field: 'body.name', message: 'give a new name and/or shared' }]);
    try {
      const view = await changeView({ db: deps.db, now: now() }, actorOf(res), id, change);
      if (!view) throw missing(id);
      res.locals.log.info({ view: id }, 'saved view changed');
      return done(req, res, entryOf(view, actorOf(res)), `View "${view.name}" saved${view.shared ? ' (shared)' : ''}.`);
    } catch (err) {
      if (err instanceof ViewForbiddenError) throw forbidden(err);
      if (err instanceof ViewNameTakenError) throw invalidView([{ field: 'body.name', message: err.message }], 409, 'view_name_taken');
      throw err;
    }
  });

  router.post('/views/:id/delete', async (req, res) => {
    const id = idOf(req);
    try {
      const view = await deleteView({ db: deps.db, now: now() }, actorOf(res), id);
      if (!view) throw missing(id);
      res.locals.log.info({ view: id }, 'saved view deleted');
      return done(req, res, { id }, `View "${view.name}" deleted.`);
    } catch (err) {
      if (err instanceof ViewForbiddenError) throw forbidden(err);
      throw err;
    }
  });

  return router;
}

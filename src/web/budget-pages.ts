import { Router, type NextFunction, type Request, type Response } from 'express';
import { archiveBudget, BudgetNameTakenError, changeBudget, createBudget } from '../actions/budgets.js';
import { BUDGET_GROUPINGS, BudgetSchema, normaliseBudget, type BudgetInput, type BudgetPeriod, type BudgetSettings, type Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import { reportUrls } from '../present/urls.js';
import { appBudget, type Budget } from '../read-models/budgets.js';
import { ClientError, notFound } from './errors.js';
import { setFlash } from './flash.js';
import { readForm } from './form.js';
import type { RenderPage } from './render.js';
import type { WebAuth } from './types.js';
import { scopeOfRequest } from './request-scope.js';
import { describeAccessScope } from '../auth/access-scope.js';

/*
 * The budget editor for admins: new, change, archive. Viewers and operators read budgets in the
 * budgets report and get 403 here. POSTs carry a CSRF token (the app mounts the protection before
 * these routes). The form is validated with the configuration's own BudgetSchema; problems answer
 * 422 with the form showing them, and nothing is stored.
 */

export interface BudgetPagesDeps {
  db: Database;
  config: Pick<Config, 'budgets' | 'tagAliases' | 'tagKeyCase' | 'tagValueCase' | 'tagValueAliases'>;
  now?: () => Date;
  /**
   * The configuration's channel names (`channels`, validated by the notification config): when
   * given, a budget's `notify` must name only these. Without it any name is kept.
   */
  channelNames?: readonly string[];
}

interface MountDeps extends BudgetPagesDeps {
  auth: WebAuth;
  render: RenderPage;
  secureCookies: boolean;
}

const REPORT = reportUrls('budgets').html;

/** What the form shows (strings as typed). */
interface FormValues {
  name: string;
  by: string;
  tag_key: string;
  value: string;
  currency: string;
  period: string;
  amount: string;
  /** The monthly form a client may post instead of period and amount (as the configuration file). */
  amount_per_month: string;
  thresholds: string;
  notify: string;
}

const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  by: 'Covers',
  tag_key: 'Tag key',
  value: 'Group',
  currency: 'Currency',
  period: 'Period',
  amount: 'Amount for the period',
  amount_per_month: 'Amount per month',
  thresholds: 'Alert at',
  notify: 'Alert channels',
};

const GROUPINGS = [
  { value: '', label: 'Total (every priced resource)' },
  { value: 'tag', label: 'A tag (e.g. team)' },
  ...BUDGET_GROUPINGS.map((g) => ({ value: g, label: g.charAt(0).toUpperCase() + g.slice(1) })),
];

const PERIODS: Array<{ value: BudgetPeriod; label: string }> = [
  { value: 'month', label: 'Calendar month' },
  { value: 'quarter', label: 'Calendar quarter' },
  { value: 'year', label: 'Calendar year' },
];

interface FieldProblem {
  field: string;
  message: string;
}

const list = (v: string) =>
  v
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** The posted form; thresholds and channels may come in several fields (each a list itself). */
function formOf(body: unknown): FormValues {
  const form = readForm(body, { single: ['name', 'by', 'tag_key', 'value', 'currency', 'period', 'amount', 'amount_per_month'], lists: ['thresholds', 'notify'] });
  return { ...form, thresholds: form.thresholds.join(', '), notify: form.notify.join(', ') };
}

function formFromBudget(b: Budget): FormValues {
  const tag = b.by?.startsWith('tag:') ?? false;
  return {
    name: b.name,
    by: b.by === null ? '' : tag ? 'tag' : b.by,
    tag_key: tag ? b.by!.slice(4) : '',
    value: b.value ?? '',
    currency: b.currency,
    period: b.period,
    amount: b.amount,
    amount_per_month: '',
    thresholds: b.thresholds.join(', '),
    notify: b.notify.join(', '),
  };
}

const EMPTY_FORM: FormValues = { name: '', by: '', tag_key: '', value: '', currency: '', period: 'month', amount: '', amount_per_month: '', thresholds: '50, 80, 100', notify: '' };

/** The form as a budget, or the problems, each named by its form field. */
function parseForm(form: FormValues, rules: BudgetPagesDeps['config']): { budget: BudgetSettings } | { problems: FieldProblem[] } {
  const problems: FieldProblem[] = [];
  if (form.by !== '' && form.by !== 'tag' && !(BUDGET_GROUPINGS as readonly string[]).includes(form.by)) problems.push({ field: 'by', message: 'choose one of the listed groupings' });
  if (form.by === 'tag' && form.tag_key.trim() === '') problems.push({ field: 'tag_key', message: 'is required when the budget covers a tag' });
  const input: BudgetInput = {
    name: form.name,
    ...(form.by === '' ? {} : { by: form.by === 'tag' ? `tag:${form.tag_key.trim()}` : form.by }),
    ...(form.value.trim() === '' ? {} : { value: form.value }),
    currency: form.currency,
    ...(form.period.trim() === '' ? {} : { period: form.period.trim() as BudgetPeriod }),
    ...(form.amount.trim() === '' ? {} : { amount: form.amount }),
    ...(form.amount_per_month.trim() === '' ? {} : { amount_per_month: form.amount_per_month }),
    ...(form.thresholds.trim() === '' ? {} : { thresholds: list(form.thresholds).map((t) => (/^\d+$/.test(t) ? Number(t) : (t as unknown as number))) }),
    notify: list(form.notify),
  };
  const parsed = BudgetSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = String(issue.path[0] ?? 'name');
      const message = issue.code === 'invalid_type' && field === 'thresholds' ? 'must be whole percentages separated by commas, e.g. 50, 80, 100' : issue.message;
      if (!problems.some((p) => p.field === field)) problems.push({ field, message });
    }
  }
  if (problems.length > 0 || !parsed.success) return { problems };
  return { budget: normaliseBudget(parsed.data, rules) };
}

function wantsJson(req: Request): boolean {
  return req.accepts(['html', 'json']) === 'json';
}

function idOf(req: Request): number {
  const raw = String(req.params.id);
  if (!/^\d{1,15}$/.test(raw)) throw notFound(`No budget ${raw} made in the web app (budgets of the configuration file are changed in the file).`);
  return Number(raw);
}

export function budgetPages(deps: MountDeps): Router {
  const router = Router();
  const requireAdmin = deps.auth.requireRole('admin');
  /**
   * An unscoped admin: budgets are read from every team's figures (not split by team yet), so a
   * team-scoped admin may neither see nor change them.
   */
  const admin = (req: Request, res: Response, next: NextFunction): void => {
    requireAdmin(req, res, (err?: unknown) => {
      const scope = scopeOfRequest(res);
      if (err) next(err);
      else if (scope) next(new ClientError(403, 'forbidden', `Budgets cover every team; you see only ${describeAccessScope(scope)}, so you may not edit them.`));
      else next();
    });
  };
  const now = deps.now ?? (() => new Date());
  const configuredNames = (deps.config.budgets ?? []).map((b) => b.name);

  /** A parsed form whose channels are not all configured becomes a problem of `notify`. */
  const checkChannels = (parsed: ReturnType<typeof parseForm>): ReturnType<typeof parseForm> => {
    if ('problems' in parsed || !deps.channelNames) return parsed;
    const unknown = parsed.budget.notify.filter((n) => !deps.channelNames!.includes(n));
    if (unknown.length === 0) return parsed;
    const known = deps.channelNames.length > 0 ? `configured channels: ${deps.channelNames.join(', ')}` : 'no channels are configured';
    return { problems: [{ field: 'notify', message: `names no configured channel: ${unknown.join(', ')} (${known})` }] };
  };

  const actorOf = (res: Response) => {
    const identity = res.locals.identity;
    if (!identity) throw new ClientError(401, 'unauthenticated', 'Sign in first.');
    return { name: identity.name, role: identity.role };
  };

  const renderForm = async (req: Request, res: Response, view: { title: string; action: string; submit: string; form: FormValues; archiveAction?: string; problems?: FieldProblem[] }, status = 200) => {
    const problems = view.problems ?? [];
    await deps.render(
      req,
      res,
      'budgets/edit',
      {
        pageTitle: view.title,
        action: view.action,
        submitLabel: view.submit,
        form: view.form,
        groupings: GROUPINGS,
        periods: PERIODS,
        archiveAction: view.archiveAction ?? null,
        errors: problems.map((p) => ({ ...p, label: FIELD_LABELS[p.field] ?? p.field })),
        reportHref: REPORT,
      },
      { status, currentReport: 'budgets' },
    );
  };

  /** 422 with the problems: the form again (HTML), or JSON naming each field. */
  const refuse = async (req: Request, res: Response, problems: FieldProblem[], view: Parameters<typeof renderForm>[2]) => {
    if (wantsJson(req)) {
      res.status(422).json({ code: 'invalid_budget', message: `Invalid budget: ${problems.map((p) => `${p.field}: ${p.message}`).join('; ')}`, errors: problems.map((p) => ({ field: `body.${p.field}`, message: p.message })) });
      return;
    }
    await renderForm(req, res, { ...view, problems }, 422);
  };

  const done = (req: Request, res: Response, status: number, id: number, message: string) => {
    if (wantsJson(req)) return res.status(status).json({ id, message });
    setFlash(res, { kind: 'info', text: message }, deps.secureCookies);
    return res.redirect(303, REPORT);
  };

  router.get('/budgets/new', admin, async (req, res) => {
    await renderForm(req, res, { title: 'New budget', action: '/budgets', submit: 'Create budget', form: EMPTY_FORM });
  });

  router.post('/budgets', admin, async (req, res) => {
    const form = formOf(req.body);
    const view = { title: 'New budget', action: '/budgets', submit: 'Create budget', form };
    const parsed = checkChannels(parseForm(form, deps.config));
    if ('problems' in parsed) return refuse(req, res, parsed.problems, view);
    try {
      const id = await createBudget({ db: deps.db, configuredNames, now: now() }, actorOf(res), parsed.budget);
      res.locals.log.info({ budget: id, name: parsed.budget.name }, 'budget created');
      return done(req, res, 201, id, `Budget "${parsed.budget.name}" created.`);
    } catch (err) {
      if (err instanceof BudgetNameTakenError) return refuse(req, res, [{ field: 'name', message: err.message }], view);
      throw err;
    }
  });

  const editView = (id: number, form: FormValues) => ({ title: `Change budget "${form.name}"`, action: `/budgets/${id}`, submit: 'Save changes', form, archiveAction: `/budgets/${id}/archive` });

  router.get('/budgets/:id/edit', admin, async (req, res) => {
    const id = idOf(req);
    const budget = await appBudget(deps.db, id);
    if (!budget || budget.archived) throw notFound(`No budget #${id} to change${budget?.archived ? ': it is archived' : ''}.`);
    await renderForm(req, res, editView(id, formFromBudget(budget)));
  });

  router.post('/budgets/:id', admin, async (req, res) => {
    const id = idOf(req);
    const form = formOf(req.body);
    const parsed = checkChannels(parseForm(form, deps.config));
    if ('problems' in parsed) return refuse(req, res, parsed.problems, editView(id, form));
    try {
      const changed = await changeBudget({ db: deps.db, configuredNames, now: now() }, actorOf(res), id, parsed.budget);
      if (!changed) throw notFound(`No budget #${id} to change (it does not exist or is archived).`);
      res.locals.log.info({ budget: id }, 'budget changed');
      return done(req, res, 200, id, `Budget "${changed.name}" saved.`);
    } catch (err) {
      if (err instanceof BudgetNameTakenError) return refuse(req, res, [{ field: 'name', message: err.message }], editView(id, form));
      throw err;
    }
  });

  router.post('/budgets/:id/archive', admin, async (req, res) => {
    const id = idOf(req);
    const archived = await archiveBudget({ db: deps.db, now: now() }, actorOf(res), id);
    if (!archived) throw notFound(`No budget #${id} to archive (it does not exist or is archived already).`);
    res.locals.log.info({ budget: id }, 'budget archived');
    return done(req, res, 200, id, `Budget "${archived.name}" archived.`);
  });

  return router;
}

import { Router, type Request, type Response } from 'express';
import {
  cancelScheduledStop,
  executeStop,
  getScheduledStop,
  notifyCancelled,
  notifyScheduled,
  parseInstanceRefs,
  planStop,
  refuseOutOfScope,
  scheduleStops,
  type InstanceRef,
  type MoneyTotal,
  type StopClient,
  type StopOutcome,
  type StopPlan,
  type StopPlanItem,
} from '../actions/index.js';
import { AUDIT_ACTIONS, AUDIT_RESULT_LABELS, type AuditAction } from '../actions/audit.js';
import type { SendOptions } from '../actions/notify.js';
import type { Config } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import { formatMoney, formatTimestamp } from '../present/format.js';
import { reportUrls } from '../present/urls.js';
import { ruleMatchText } from '../read-models/idle-rules.js';
import { formatInstanceRef } from '../read-models/refs.js';
import { ClientError, invalidParameters } from './errors.js';
import { setFlash } from './flash.js';
import { readForm } from './form.js';
import type { RenderPage } from './render.js';
import { safeReturnPath, sameSitePreviousPage } from './return-path.js';
import type { WebAuth } from './types.js';

/*
 * The stop pages: confirmation (exact instances, status, cost saved, "cannot be undone"), the
 * stop itself with per-instance results, "stop later" with its warning, and cancelling a
 * scheduled stop. All need the operator role and (being POSTs) a CSRF token; the app mounts
 * CSRF protection and sign-in before these routes.
 */

export interface ActionPagesDeps {
  db: Queryable;
  /** The cloud client (only its stop endpoint is used). */
  client: StopClient;
  config: Pick<Config, 'notifications' | 'stopGraceHours' | 'ownerTagKey' | 'idleRules'>;
  /** Stop requests in flight at once per batch (default 4). */
  concurrency?: number;
  now?: () => Date;
  /** Webhook retry pacing (tests). */
  notify?: SendOptions;
}

interface MountDeps extends ActionPagesDeps {
  auth: WebAuth;
  render: RenderPage;
  secureCookies: boolean;
}

const REASON_MAX = 500;
const IDLE_REPORT = reportUrls('idle').html;
const SCHEDULED_REPORT = reportUrls('scheduled-stops').html;

function refsFrom(value: unknown): InstanceRef[] {
  const { refs, problems } = parseInstanceRefs(value);
  if (problems.length > 0) throw invalidParameters(problems.map((message) => ({ field: 'instance', message })));
  if (refs.length === 0) throw invalidParameters([{ field: 'instance', message: 'select at least one instance' }]);
  return refs;
}

function money(amount: string | null, currency: string | null): string {
  return amount === null || currency === null ? 'unpriced' : formatMoney(amount, currency);
}

function itemView(item: StopPlanItem) {
  return {
    refText: item.refText,
    name: item.name ?? '(not in the collected data)',
    instanceId: item.ref.instanceId,
    projectId: item.ref.projectId,
    regionId: item.ref.regionId,
    region: item.region ?? '',
    known: item.known,
    kind: item.kind === 'cluster_server' ? 'cluster server' : item.kind === 'instance' ? 'instance' : 'unknown',
    status: item.status ?? 'unknown',
    running: item.running,
    flavor: item.flavorName ?? '',
    perHour: item.running ? money(item.pricePerHour, item.currency) : '—',
    perMonth: item.running ? money(item.pricePerMonth, item.currency) : '—',
    rules: item.rules.map(ruleMatchText),
    scheduledAt: item.scheduledStop ? formatTimestamp(item.scheduledStop.dueAt) : null,
    dataAsOf: item.snapshotTakenAt ? formatTimestamp(item.snapshotTakenAt) : null,
  };
}

function totalsView(totals: MoneyTotal[]) {
  return totals.map((t) => ({ currency: t.currency, perHour: formatMoney(t.perHour, t.currency), perMonth: formatMoney(t.perMonth, t.currency), count: t.count }));
}


function outcomeView(outcome: StopOutcome) {
  return { ...itemView(outcome), result: outcome.result, resultLabel: AUDIT_RESULT_LABELS[outcome.result], message: outcome.message, error: outcome.error, taskIds: outcome.taskIds, auditId: outcome.auditId };
}

/** The stop forms' fields: the ticked instances, and one value of each of the others. */
function stopForm(req: Request) {
  const get = req.method === 'GET';
  return readForm(get ? req.query : req.body, { single: ['reason', 'confirm', 'dry_run', 'grace_hours', 'return_to'], lists: ['instance'] }, get ? 'query' : 'body');
}

function wantsJson(req: Request): boolean {
  return req.accepts(['html', 'json']) === 'json';
}

export function actionPages(deps: MountDeps): Router {
  const router = Router();
  const operator = deps.auth.requireRole('operator');
  const now = deps.now ?? (() => new Date());

  const actorOf = (res: Response) => {
    const identity = res.locals.identity;
    if (!identity) throw new ClientError(401, 'unauthenticated', 'Sign in first.');
    return { name: identity.name, role: identity.role };
  };

  /** Refuses (403) when a ref is outside the user's scope; audited when it is an attempt. */
  const guardScope = async (res: Response, refs: InstanceRef[], attempt: { action?: AuditAction; reason: string | null } | null): Promise<void> => {
    const identity = res.locals.identity;
    if (!identity?.scope) return;
    const refusal = await refuseOutOfScope(deps.db, { ...actorOf(res), scope: identity.scope }, refs, {
      action: attempt?.action,
      reason: attempt?.reason ?? null,
      now: now(),
      audit: attempt !== null,
    });
    if (!refusal) return;
    if (attempt) res.locals.log.warn({ user: identity.name, refused: refusal.refs.map(formatInstanceRef) }, 'action refused: outside the user\'s scope');
    throw new ClientError(403, 'outside_scope', refusal.message);
  };

  const renderConfirm = async (req: Request, res: Response, refs: InstanceRef[], extra: { error?: string; reason?: string; returnTo: string; status?: number }) => {
    await guardScope(res, refs, null);
    const plan: StopPlan = await planStop(deps.db, refs, { rules: deps.config, now: now() });
    const items = plan.items.map(itemView);
    await deps.render(
      req,
      res,
      'actions/confirm',
      {
        pageTitle: 'Confirm stop',
        items,
        savings: totalsView(plan.savings),
        unpricedRunning: plan.unpricedRunning,
        runningCount: plan.items.filter((i) => i.running).length,
        unknownCount: plan.items.filter((i) => !i.known).length,
        graceHours: deps.config.stopGraceHours,
        notificationsConfigured: deps.config.notifications !== null,
        error: extra.error ?? null,
        reason: extra.reason ?? '',
        returnTo: extra.returnTo,
      },
      { status: extra.status ?? 200, currentReport: 'idle' },
    );
  };

  const confirm = async (req: Request, res: Response) => {
    const form = stopForm(req);
    // A report's "Stop…" link carries no return path: back to the report it was followed from.
    const previous = sameSitePreviousPage(req);
    const returnTo = safeReturnPath(form.return_to) ?? (previous?.startsWith('/reports/') ? previous : null) ?? IDLE_REPORT;
    const formReturn = req.method === 'POST' ? safeReturnPath(form.return_to) : null;
    if (formReturn && !wantsJson(req) && form.instance.every((v) => v === '')) {
      // "Stop selected…" with nothing ticked: back to the report, saying so, rather than a bare 400 page.
      setFlash(res, { kind: 'error', text: 'Nothing was stopped: tick at least one instance, then choose "Stop selected…".' }, deps.secureCookies);
      res.redirect(303, formReturn);
      return;
    }
    const refs = refsFrom(form.instance);
    await renderConfirm(req, res, refs, { returnTo });
  };
  // GET too, so an inventory row can link to the confirmation of its instance; it changes nothing.
  router.get('/actions/stop/confirm', operator, confirm);
  router.post('/actions/stop/confirm', operator, confirm);

  /** The reason, or a re-rendered confirmation page saying it is needed. */
  const reasonOr400 = async (req: Request, res: Response, refs: InstanceRef[]): Promise<string | null> => {
    const form = stopForm(req);
    const reason = form.reason.trim().replace(/\s+/g, ' ');
    const returnTo = safeReturnPath(form.return_to) ?? IDLE_REPORT;
    let error: string | null = null;
    if (form.confirm !== 'yes') error = 'Nothing was done: confirm on this page first.';
    else if (reason.length < 3) error = 'Nothing was done: give a reason (at least 3 characters); it is kept in the audit log.';
    else if (reason.length > REASON_MAX) error = `Nothing was done: the reason must be at most ${REASON_MAX} characters.`;
    if (!error) return reason;
    if (wantsJson(req)) throw new ClientError(400, 'confirmation_required', error);
    await renderConfirm(req, res, refs, { error, reason, returnTo, status: 400 });
    return null;
  };

  /** The confirmation form's "Dry run" box, which covers every button of the form. */
  const isDryRun = (req: Request) => ['on', 'yes', 'true', '1'].includes(stopForm(req).dry_run);

  router.post('/actions/stop', operator, async (req, res) => {
    const refs = refsFrom(stopForm(req).instance);
    await guardScope(res, refs, { action: AUDIT_ACTIONS.stop, reason: stopForm(req).reason.trim().slice(0, REASON_MAX) || null });
    const reason = await reasonOr400(req, res, refs);
    if (reason === null) return;
    const dryRun = isDryRun(req);
    const batch = await executeStop(
      { db: deps.db, client: deps.client, actor: actorOf(res), reason, dryRun, concurrency: deps.concurrency, rules: deps.config, now, logger: res.locals.log },
      refs,
    );
    if (wantsJson(req)) {
      return res.json({
        dry_run: dryRun,
        counts: batch.counts,
        savings: batch.savings,
        outcomes: batch.outcomes.map((o) => ({ instance: o.refText, name: o.name, result: o.result, message: o.message, error: o.error, previous_status: o.status, new_status: o.newStatus, task_ids: o.taskIds, audit_id: o.auditId })),
      });
    }
    await deps.render(
      req,
      res,
      'actions/results',
      {
        pageTitle: dryRun ? 'Dry run: stop' : 'Stop results',
        dryRun,
        outcomes: batch.outcomes.map(outcomeView),
        counts: batch.counts,
        savings: totalsView(batch.savings),
        reason,
        auditHref: `${reportUrls('audit').html}?action=stop&actor=${encodeURIComponent(actorOf(res).name)}`,
        returnTo: safeReturnPath(stopForm(req).return_to) ?? IDLE_REPORT,
      },
      { currentReport: 'idle' },
    );
  });

  router.post('/actions/stop/schedule', operator, async (req, res) => {
    const refs = refsFrom(stopForm(req).instance);
    await guardScope(res, refs, { action: AUDIT_ACTIONS.scheduleStop, reason: stopForm(req).reason.trim().slice(0, REASON_MAX) || null });
    const reason = await reasonOr400(req, res, refs);
    if (reason === null) return;
    if (isDryRun(req)) {
      // Scheduling writes a stop that will happen: with "Dry run" ticked, nothing may be written.
      const error = 'Nothing was done: "Dry run" is ticked, and a dry run cannot schedule a stop. Untick it to schedule the stop, or use "Stop now" to see what a stop would do.';
      if (wantsJson(req)) throw new ClientError(400, 'dry_run_cannot_schedule', error);
      await renderConfirm(req, res, refs, { error, reason, returnTo: safeReturnPath(stopForm(req).return_to) ?? IDLE_REPORT, status: 400 });
      return;
    }
    const graceText = stopForm(req).grace_hours.trim();
    let graceHours = deps.config.stopGraceHours;
    if (graceText !== '') {
      graceHours = Number(graceText);
      if (!/^\d{1,3}(\.\d+)?$/.test(graceText) || graceHours < 1 || graceHours > 720) {
        throw invalidParameters([{ field: 'grace_hours', message: 'must be a number of hours from 1 to 720' }]);
      }
    }
    const scheduleDeps = { db: deps.db, config: deps.config, logger: res.locals.log, notify: deps.notify };
    const { scheduled, skipped } = await scheduleStops(scheduleDeps, { actor: actorOf(res), reason, refs, graceHours, now: now() });
    // Warnings go out after the answer (the webhook may be slow); each result is recorded on its row.
    if (scheduled.length > 0) {
      void notifyScheduled(scheduleDeps, scheduled).catch((err: unknown) => res.locals.log.error({ err }, 'scheduled-stop warnings could not be recorded'));
    }
    if (wantsJson(req)) {
      return res.json({ scheduled: scheduled.map((s) => ({ id: s.id, instance: s.refText, due_at: s.dueAt.toISOString(), owner: s.owner })), skipped });
    }
    await deps.render(
      req,
      res,
      'actions/scheduled',
      {
        pageTitle: 'Stops scheduled',
        graceHours,
        scheduled: scheduled.map((s) => ({ id: s.id, name: s.instanceName ?? '', refText: s.refText, owner: s.owner ?? '(no owner tag)', dueAt: formatTimestamp(s.dueAt) })),
        skipped,
        notificationsConfigured: deps.config.notifications !== null,
        scheduledHref: SCHEDULED_REPORT,
      },
      { currentReport: 'scheduled-stops' },
    );
  });

  router.post('/actions/scheduled/:id/cancel', operator, async (req, res) => {
    const id = /^\d{1,9}$/.test(String(req.params.id)) ? Number(req.params.id) : NaN;
    if (!Number.isSafeInteger(id)) throw invalidParameters([{ field: 'id', message: 'must be a scheduled stop id' }]);
    const back = safeReturnPath(readForm(req.body, { single: ['return_to'] }).return_to) ?? SCHEDULED_REPORT;
    const scheduled = res.locals.identity?.scope ? await getScheduledStop(deps.db, id) : null;
    if (scheduled) await guardScope(res, [scheduled.ref], { action: AUDIT_ACTIONS.cancelScheduledStop, reason: `cancel scheduled stop #${id}` });
    const scheduleDeps = { db: deps.db, config: deps.config, logger: res.locals.log, notify: deps.notify };
    const { cancelled, stop } = await cancelScheduledStop(scheduleDeps, { id, actor: actorOf(res), now: now() });
    if (!stop) throw new ClientError(404, 'not_found', `No scheduled stop #${id}.`);
    if (cancelled) void notifyCancelled(scheduleDeps, [stop]).catch((err: unknown) => res.locals.log.error({ err }, 'cancel notice could not be recorded'));
    const text = cancelled
      ? `Scheduled stop #${id} of ${stop.instanceName ?? stop.refText} cancelled.`
      : `Scheduled stop #${id} was not cancelled: it is ${stop.status}${stop.status === 'cancelled' && stop.cancelledBy ? ` (by ${stop.cancelledBy})` : ''}.`;
    if (wantsJson(req)) return res.status(cancelled ? 200 : 409).json({ id, cancelled, status: stop.status, message: text });
    setFlash(res, { kind: cancelled ? 'info' : 'error', text }, deps.secureCookies);
    res.redirect(303, back);
  });

  return router;
}

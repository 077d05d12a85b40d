import type { Config } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import { queryRows, sql } from '../db/statement.js';
import type { ScheduledStopStatus, StopNotice } from '../db/schema.js';
import { listSample, type Logger } from '../logger.js';
import { AUDIT_ACTIONS, appendAudit } from './audit.js';
import { sendWebhook, type SendOptions } from './notify.js';
import { formatInstanceRef, type InstanceRef } from '../read-models/refs.js';
import { toScheduledStop, type ScheduledStop, type ScheduledStopRow } from '../read-models/scheduled-stops.js';
import { executeStop, planStop, type StopActor, type StopClient, type StopOutcome } from './stop.js';

/*
 * "Stop later, with warning": an operator marks instances to be stopped after a grace period;
 * the owner (configured owner tag) and the operators are warned through the webhook; an operator
 * can cancel until it runs; `runDueStops` (scheduled every minute by main.ts) performs the due
 * ones through executeStop, audited like any other stop. Rows live in table scheduled_stops.
 */

export type { ScheduledStop };

export interface ScheduledStopsDeps {
  db: Queryable;
  config: Pick<Config, 'notifications' | 'stopGraceHours' | 'ownerTagKey' | 'idleRules'>;
  logger?: Logger;
  /** Webhook retry pacing (tests use a short one). */
  notify?: SendOptions;
}

export interface ScheduleRequest {
  actor: StopActor;
  reason: string;
  refs: readonly InstanceRef[];
  /** Default: config.stopGraceHours. */
  graceHours?: number;
  now?: Date;
}

export interface ScheduleSkip {
  refText: string;
  name: string | null;
  why: string;
}

/**
 * Marks running instances to be stopped at now + grace. Skipped (with the reason): instances
 * cloudtally has not seen (their owner cannot be warned), those not running, those already marked.
 * Each mark is audited (action schedule_stop). Warn people afterwards with notifyScheduled.
 */
export async function scheduleStops(deps: ScheduledStopsDeps, request: ScheduleRequest): Promise<{ scheduled: ScheduledStop[]; skipped: ScheduleSkip[] }> {
  const now = request.now ?? new Date();
  const graceHours = request.graceHours ?? deps.config.stopGraceHours;
  const dueAt = new Date(now.getTime() + graceHours * 3_600_000);
  const plan = await planStop(deps.db, request.refs, { rules: deps.config, now });
  const scheduled: ScheduledStop[] = [];
  const skipped: ScheduleSkip[] = [];
  for (const item of plan.items) {
    const skip = (why: string) => skipped.push({ refText: item.refText, name: item.name, why });
    if (!item.known) {
      skip('not in the collected data: its owner cannot be warned (stop it now instead, or collect first)');
      continue;
    }
    if (!item.running) {
      skip(`already ${item.status ?? 'not running'}`);
      continue;
    }
    const ownerValue = item.tags[deps.config.ownerTagKey];
    const owner = typeof ownerValue === 'string' && ownerValue.trim() !== '' ? ownerValue.trim() : null;
    const { ref, name } = item;
    const rows = await queryRows<ScheduledStopRow>(
      deps.db,
      sql`INSERT INTO scheduled_stops (instance_id, project_id, region_id, instance_name, owner, reason, created_by, created_by_role, created_at, due_at)
       VALUES (${ref.instanceId}, ${ref.projectId}, ${ref.regionId}, ${name}, ${owner}, ${request.reason}, ${request.actor.name}, ${request.actor.role},
         ${now.toISOString()}, ${dueAt.toISOString()})
       ON CONFLICT DO NOTHING RETURNING *`,
    );
    const row = rows[0];
    if (!row) {
      skip(`already marked to be stopped${item.scheduledStop ? ` at ${item.scheduledStop.dueAt.toISOString()}` : ''}`);
      continue;
    }
    const stop = toScheduledStop(row);
    await appendAudit(deps.db, {
      at: now,
      actor: request.actor.name,
      role: request.actor.role,
      action: AUDIT_ACTIONS.scheduleStop,
      instanceId: item.ref.instanceId,
      projectId: item.ref.projectId,
      regionId: item.ref.regionId,
      reason: `${request.reason} [scheduled stop #${stop.id} due ${dueAt.toISOString()}]`,
      dryRun: false,
      result: 'scheduled',
      error: null,
      taskIds: [],
    });
    scheduled.push(stop);
  }
  return { scheduled, skipped };
}

function describe(stop: ScheduledStop): string {
  return `${stop.instanceName ?? '(unnamed)'} (${stop.ref.instanceId}, project ${stop.ref.projectId}, region ${stop.ref.regionId})`;
}

function groupByOwner(stops: readonly ScheduledStop[]): Map<string | null, ScheduledStop[]> {
  const groups = new Map<string | null, ScheduledStop[]>();
  for (const stop of stops) groups.set(stop.owner, [...(groups.get(stop.owner) ?? []), stop]);
  return groups;
}

function utc(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Records one notice on the rows it was about. */
async function recordNotice(db: Queryable, ids: number[], notice: StopNotice): Promise<void> {
  await db.execute('UPDATE scheduled_stops SET notices = notices || $2::jsonb WHERE id = any($1::int[])', [ids, JSON.stringify([notice])]);
}

async function notifyGroups(deps: ScheduledStopsDeps, stops: readonly ScheduledStop[], event: StopNotice['event'], text: (owner: string | null, group: ScheduledStop[]) => string): Promise<StopNotice[]> {
  const notices: StopNotice[] = [];
  for (const [owner, group] of groupByOwner(stops)) {
    const sent = await sendWebhook(deps.config.notifications, text(owner, group), deps.notify);
    const notice: StopNotice = { event, at: new Date().toISOString(), status: sent.status, attempts: sent.attempts, error: sent.error };
    if (sent.status === 'failed') deps.logger?.warn({ event, stops: listSample(group.map((s) => s.id)), error: sent.error }, 'scheduled-stop notice failed');
    await recordNotice(deps.db, group.map((s) => s.id), notice);
    notices.push(notice);
  }
  return notices;
}

function ownerLine(owner: string | null, ownerKey: string): string {
  return owner ? `Owner: ${owner}` : `Owner: unknown (no "${ownerKey}" tag)`;
}

function cancelHint(deps: ScheduledStopsDeps): string {
  const url = deps.config.notifications?.appUrl;
  return url ? `Operators can cancel it until then: ${url}/reports/scheduled-stops` : 'Operators can cancel it in cloudtally (Scheduled stops) until then.';
}

/** Warns each owner (one message per owner) and the operators' channel that instances will be stopped. */
export function notifyScheduled(deps: ScheduledStopsDeps, stops: readonly ScheduledStop[]): Promise<StopNotice[]> {
  return notifyGroups(deps, stops, 'scheduled', (owner, group) => {
    const first = group[0]!;
    const lines = group.map((s) => `• ${describe(s)}: stop at ${utc(s.dueAt)}`);
    return [
      `cloudtally will stop ${group.length} instance${group.length === 1 ? '' : 's'} after the grace period, as marked by ${first.createdBy} (${first.createdByRole}): ${first.reason}`,
      ownerLine(owner, deps.config.ownerTagKey),
      ...lines,
      `${cancelHint(deps)} A stopped instance cannot be started again from cloudtally.`,
    ].join('\n');
  });
}

export interface CancelRequest {
  id: number;
  actor: StopActor;
  now?: Date;
}

/**
 * Cancels a pending scheduled stop (audited, action cancel_scheduled_stop). Returns the row as it
 * is now and whether this call cancelled it (false when it already ran, was cancelled, or is unknown).
 */
export async function cancelScheduledStop(deps: ScheduledStopsDeps, request: CancelRequest): Promise<{ cancelled: boolean; stop: ScheduledStop | null }> {
  const now = request.now ?? new Date();
  const rows = await deps.db.query<ScheduledStopRow>(
    `UPDATE scheduled_stops SET status = 'cancelled', cancelled_by = $2, cancelled_at = $3
     WHERE id = $1 AND status = 'pending' RETURNING *`,
    [request.id, request.actor.name, now.toISOString()],
  );
  const row = rows[0];
  if (!row) return { cancelled: false, stop: await getScheduledStop(deps.db, request.id) };
  const stop = toScheduledStop(row);
  await appendAudit(deps.db, {
    at: now,
    actor: request.actor.name,
    role: request.actor.role,
    action: AUDIT_ACTIONS.cancelScheduledStop,
    instanceId: stop.ref.instanceId,
    projectId: stop.ref.projectId,
    regionId: stop.ref.regionId,
    reason: `scheduled stop #${stop.id} (due ${stop.dueAt.toISOString()}) cancelled`,
    dryRun: false,
    result: 'cancelled',
    error: null,
    taskIds: [],
  });
  return { cancelled: true, stop };
}

/** Tells owners a scheduled stop was cancelled. */
export function notifyCancelled(deps: ScheduledStopsDeps, stops: readonly ScheduledStop[]): Promise<StopNotice[]> {
  return notifyGroups(deps, stops, 'cancelled', (owner, group) =>
    [
      `cloudtally will NOT stop ${group.length === 1 ? 'this instance' : 'these instances'}: the scheduled stop was cancelled by ${group[0]!.cancelledBy ?? 'an operator'}.`,
      ownerLine(owner, deps.config.ownerTagKey),
      ...group.map((s) => `• ${describe(s)}`),
    ].join('\n'),
  );
}

export async function getScheduledStop(db: Queryable, id: number): Promise<ScheduledStop | null> {
  const rows = await db.query<ScheduledStopRow>('SELECT * FROM scheduled_stops WHERE id = $1', [id]);
  return rows[0] ? toScheduledStop(rows[0]) : null;
}

/** A claim older than this is taken to belong to a process that died mid-run: it becomes due again. */
const STALE_CLAIM_MS = 15 * 60_000;
/** Due stops claimed per run. */
const CLAIM_BATCH = 200;

export const SCHEDULER_ACTOR: StopActor = { name: 'scheduler', role: 'system' };

export interface RunDueStopsDeps extends ScheduledStopsDeps {
  client: StopClient;
  concurrency?: number;
}

export interface RunDueStopsResult {
  stops: ScheduledStop[];
  outcomes: StopOutcome[];
}

/**
 * Performs the stops that are due at `now`: claims them (so another replica running the same
 * schedule skips them), stops them through executeStop (audited as actor "scheduler", the reason
 * naming who marked them), records each result on its row and tells the owners. A stop that
 * fails stays `failed` (not retried: an operator decides).
 */
export async function runDueStops(deps: RunDueStopsDeps, now: Date = new Date()): Promise<RunDueStopsResult> {
  await deps.db.execute(`UPDATE scheduled_stops SET status = 'pending', claimed_at = NULL WHERE status = 'running' AND claimed_at < $1`, [
    new Date(now.getTime() - STALE_CLAIM_MS).toISOString(),
  ]);
  const claimed = await deps.db.query<ScheduledStopRow>(
    `UPDATE scheduled_stops SET status = 'running', claimed_at = $1
     WHERE id IN (SELECT id FROM scheduled_stops WHERE status = 'pending' AND due_at <= $1 ORDER BY due_at, id LIMIT ${CLAIM_BATCH} FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [now.toISOString()],
  );
  const stops = claimed.map(toScheduledStop).sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime() || a.id - b.id);
  if (stops.length === 0) return { stops: [], outcomes: [] };

  const batch = await executeStop(
    { db: deps.db, client: deps.client, actor: SCHEDULER_ACTOR, reason: 'scheduled stop', dryRun: false, concurrency: deps.concurrency, rules: deps.config, now: () => now, logger: deps.logger },
    stops.map((s) => ({ ...s.ref, reason: `scheduled stop #${s.id}, marked by ${s.createdBy} (${s.createdByRole}) at ${s.createdAt.toISOString()}: ${s.reason}` })),
  );

  const finished: ScheduledStop[] = [];
  for (const [i, stop] of stops.entries()) {
    const outcome = batch.outcomes[i]!;
    const status: ScheduledStopStatus = outcome.result === 'failed' ? 'failed' : 'done';
    const rows = await deps.db.query<ScheduledStopRow>(
      `UPDATE scheduled_stops SET status = $2, finished_at = $3, result = $4, error = $5, audit_id = $6 WHERE id = $1 RETURNING *`,
      [stop.id, status, now.toISOString(), outcome.result, outcome.error, outcome.auditId],
    );
    finished.push(toScheduledStop(rows[0]!));
  }
  deps.logger?.info({ due: stops.length, ...batch.counts }, 'scheduled stops run');

  const outcomeOf = new Map(finished.map((s, i) => [s.id, batch.outcomes[i]!]));
  await notifyGroups(deps, finished, 'executed', (owner, group) =>
    [
      `cloudtally ran ${group.length} scheduled stop${group.length === 1 ? '' : 's'}:`,
      ownerLine(owner, deps.config.ownerTagKey),
      ...group.map((s) => `• ${describe(s)}: ${outcomeOf.get(s.id)!.message}`),
    ].join('\n'),
  );
  return { stops: finished, outcomes: batch.outcomes };
}

import type { CloudClient } from '../cloud/client.js';
import { CloudApiError } from '../cloud/errors.js';
import type { Queryable } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { AUDIT_ACTIONS, appendAudit, type AuditResult } from './audit.js';
import { loadInstancesByRef, type CurrentInstance } from '../costing/current-instances.js';
import { totalsByCurrency, type MoneyTotal } from '../read-models/decimal.js';
import { evaluateIdleRules, ruleMatchText, type IdleRuleSettings, type RuleMatch } from '../read-models/idle-rules.js';
import { formatInstanceRef, sameRef, type InstanceRef } from '../read-models/refs.js';

/*
 * Stopping instances. Every write to the cloud goes through here: planned against what
 * cloudtally knows, executed through the client's stop endpoint with bounded concurrency, and
 * each attempt audited on its own (so a failure in the middle of a batch leaves the others done,
 * reported and audited). The API has no start endpoint: nothing here can undo a stop.
 */

/** What the stop needs of the cloud client (web/ never sees the client itself). */
export type StopClient = Pick<CloudClient, 'stopInstance'>;

export interface StopPlanItem {
  ref: InstanceRef;
  /** `project:region:id`. */
  refText: string;
  /** Whether cloudtally has seen it in its latest data (unknown ones are still sent to the API). */
  known: boolean;
  kind: CurrentInstance['kind'] | null;
  name: string | null;
  status: string | null;
  running: boolean;
  region: string | null;
  flavorName: string | null;
  /** Saved per hour / month by stopping it (its flavor price), when running and priced. */
  pricePerHour: string | null;
  pricePerMonth: string | null;
  currency: string | null;
  tags: Record<string, string>;
  /** Idle rules it matches now (when the plan was given the rules). */
  rules: RuleMatch[];
  scheduledStop: CurrentInstance['scheduledStop'];
  snapshotTakenAt: Date | null;
}

export interface StopPlan {
  items: StopPlanItem[];
  /** Per currency: what stopping the running, priced items saves. */
  savings: MoneyTotal[];
  /** Running items with no known price (never counted as zero). */
  unpricedRunning: number;
}

export interface PlanOptions {
  /** To list the idle rules each instance matches. */
  rules?: IdleRuleSettings;
  now?: Date;
}

/** The exact instances a stop would touch, in the order given, with status and the cost saved. */
export async function planStop(db: Queryable, refs: readonly InstanceRef[], options: PlanOptions = {}): Promise<StopPlan> {
  const found = await loadInstancesByRef(db, refs);
  const now = options.now ?? new Date();
  const items = refs.map((ref): StopPlanItem => {
    const instance = found.find((i) => sameRef(i.ref, ref));
    if (!instance) {
      return {
        ref,
        refText: formatInstanceRef(ref),
        known: false,
        kind: null,
        name: null,
        status: null,
        running: false,
        region: null,
        flavorName: null,
        pricePerHour: null,
        pricePerMonth: null,
        currency: null,
        tags: {},
        rules: [],
        scheduledStop: null,
        snapshotTakenAt: null,
      };
    }
    return {
      ref,
      refText: formatInstanceRef(ref),
      known: true,
      kind: instance.kind,
      name: instance.name,
      status: instance.status,
      running: instance.running,
      region: instance.region,
      flavorName: instance.flavorName,
      pricePerHour: instance.pricePerHour,
      pricePerMonth: instance.pricePerMonth,
      currency: instance.currency,
      tags: instance.tags,
      rules: options.rules && instance.running ? evaluateIdleRules(instance, options.rules, now) : [],
      scheduledStop: instance.scheduledStop,
      snapshotTakenAt: instance.snapshotTakenAt,
    };
  });
  const { totals, unpriced } = totalsByCurrency(items.filter((i) => i.running));
  return { items, savings: totals, unpricedRunning: unpriced };
}

export interface StopActor {
  name: string;
  role: string;
}

export interface ExecuteStopDeps {
  db: Queryable;
  client: StopClient;
  actor: StopActor;
  /** Why (audited with each instance, followed by the idle rules it matches). */
  reason: string;
  /** Plan, decide and audit, but send nothing to the cloud. */
  dryRun: boolean;
  /** Stop requests in flight at once (default 4). */
  concurrency?: number;
  rules?: IdleRuleSettings;
  now?: () => Date;
  logger?: Logger;
}

/** One instance to stop; `reason` overrides the batch's (scheduled stops carry their own). */
export type StopRequest = InstanceRef & { reason?: string };

export type StopResult = Extract<AuditResult, 'stopped' | 'already_stopped' | 'not_found' | 'failed' | 'would_stop'>;

export interface StopOutcome extends StopPlanItem {
  result: StopResult;
  /** One sentence for people. */
  message: string;
  /** The API's error (or the client's), when it failed. */
  error: string | null;
  /** Status in the stop answer. */
  newStatus: string | null;
  taskIds: string[];
  dryRun: boolean;
  auditId: number;
  at: Date;
}

export interface StopBatchResult {
  outcomes: StopOutcome[];
  /** What the stopped instances (or, in a dry run, those that would be stopped) save per currency. */
  savings: MoneyTotal[];
  counts: Record<StopResult, number>;
}

/**
 * Stops the instances (or, with dryRun, decides what would happen). Per instance:
 * - known and not running: `already_stopped`, a no-op (no request sent);
 * - the API answers 404: `not_found` (it no longer exists), a no-op;
 * - the API accepts: `stopped`, with the task ids of the answer;
 * - anything else: `failed`, with the error; the other instances go on.
 * Every instance gets its audit row, written as soon as its attempt ends.
 */
export async function executeStop(deps: ExecuteStopDeps, requests: readonly StopRequest[]): Promise<StopBatchResult> {
  const now = deps.now ?? (() => new Date());
  const plan = await planStop(deps.db, requests, { rules: deps.rules, now: now() });
  const outcomes: StopOutcome[] = new Array(plan.items.length);
  let next = 0;

  const worker = async () => {
    while (next < plan.items.length) {
      const index = next++;
      const item = plan.items[index]!;
      const request = requests[index]!;
      outcomes[index] = await stopOne(deps, item, request.reason ?? deps.reason, now);
    }
  };
  const concurrency = Math.max(1, Math.min(deps.concurrency ?? 4, plan.items.length));
  await Promise.all(Array.from({ length: concurrency }, worker));

  const counts: Record<StopResult, number> = { stopped: 0, already_stopped: 0, not_found: 0, failed: 0, would_stop: 0 };
  for (const o of outcomes) counts[o.result]++;
  const saved = outcomes.filter((o) => (o.result === 'stopped' || o.result === 'would_stop') && o.running);
  return { outcomes, savings: totalsByCurrency(saved).totals, counts };
}

async function stopOne(deps: ExecuteStopDeps, item: StopPlanItem, reason: string, now: () => Date): Promise<StopOutcome> {
  let result: StopResult;
  let message: string;
  let error: string | null = null;
  let newStatus: string | null = null;
  let taskIds: string[] = [];
  const label = item.name ? `${item.name} (${item.ref.instanceId})` : item.ref.instanceId;

  if (item.known && !item.running) {
    result = 'already_stopped';
    message = `${label} is already ${item.status ?? 'not running'}: nothing to do.`;
  } else if (deps.dryRun) {
    result = 'would_stop';
    message = item.known ? `Dry run: ${label} would be stopped.` : `Dry run: ${label} is not in the collected data; the stop would be sent and the cloud would decide.`;
  } else {
    try {
      const answer = await deps.client.stopInstance(item.ref.projectId, item.ref.regionId, item.ref.instanceId);
      const record = answer.results.find((r) => r.id === item.ref.instanceId) ?? answer.results[0];
      newStatus = record?.status ?? null;
      taskIds = [...new Set(answer.results.map((r) => r.task_id).filter((t): t is string => typeof t === 'string' && t !== ''))];
      result = 'stopped';
      message = `${label} stopped${newStatus ? ` (status now ${newStatus})` : ''}.`;
    } catch (err) {
      if (err instanceof CloudApiError && err.status === 404) {
        result = 'not_found';
        message = `${label} no longer exists in the cloud: nothing to do.`;
        error = err.message;
      } else {
        result = 'failed';
        error = err instanceof Error ? err.message : String(err);
        message = `${label} could not be stopped: ${error}`;
        deps.logger?.warn({ instance: item.refText, err: error }, 'stop failed');
      }
    }
  }

  const at = now();
  const rules = item.rules.length > 0 ? ` [idle rules: ${item.rules.map(ruleMatchText).join('; ')}]` : '';
  const auditId = await appendAudit(deps.db, {
    at,
    actor: deps.actor.name,
    role: deps.actor.role,
    action: AUDIT_ACTIONS.stop,
    instanceId: item.ref.instanceId,
    projectId: item.ref.projectId,
    regionId: item.ref.regionId,
    reason: `${reason}${rules}`,
    dryRun: deps.dryRun,
    result,
    error,
    taskIds,
  });
  deps.logger?.info({ instance: item.refText, result, dryRun: deps.dryRun, actor: deps.actor.name, auditId }, 'stop attempt');
  return { ...item, result, message, error, newStatus, taskIds, dryRun: deps.dryRun, auditId, at };
}

/**
 * Anomaly alerts (opt-in per grouping: config `anomalies.alert_groupings`): the spikes and drops
 * of the last complete days, each enqueued once as an OutgoingMessage keyed
 * `anomaly:<grouping>:<group>:<currency>:<day>` (the outbox ignores a key it already holds, so
 * replicas and restarts send it once). Only days on which something changed in the snapshots are
 * sent: a lasting change stays flagged for a few days (until it is half the baseline), but it is
 * news only on the day it happened. Data gaps are never sent as anomalies.
 */
import type { Config } from '../config/index.js';
import type { Database, Queryable } from '../db/connection.js';
import { listSample, type Logger } from '../logger.js';
import { explainRow, lastCompleteDay, scanAnomalies } from '../reports/anomalies.js';
import { addDays, dimensionLabel } from '../reports/shared/format.js';
import type { ReportCtx } from '../reports/shared/types.js';
import type { OutgoingMessage } from './message.js';
import { enqueueMessage } from './outbox.js';

/** Enqueues one message (outbox.ts's enqueueMessage). */
export type Enqueue = (q: Queryable, message: OutgoingMessage) => Promise<unknown>;

/** Complete days looked at by default: a missed run (restart, failure) still sends yesterday's. */
export const ALERT_LOOKBACK_DAYS = 3;

export function anomalyKey(grouping: string, group: string, currency: string, day: string): string {
  return `anomaly:${grouping}:${group}:${currency}:${day}`;
}

/**
 * Enqueues the alerts of the configured alert groupings for the complete days from `fromDay`
 * (default: the last ALERT_LOOKBACK_DAYS complete days). Returns the keys enqueued.
 */
export async function enqueueAnomalyAlerts(ctx: ReportCtx, enqueue: Enqueue, opts: { fromDay?: string } = {}): Promise<string[]> {
  const last = lastCompleteDay(ctx);
  const fromDay = opts.fromDay ?? addDays(last, -(ALERT_LOOKBACK_DAYS - 1));
  const keys: string[] = [];
  for (const alert of ctx.config.anomalies.alerts) {
    const scan = await scanAnomalies(ctx, alert.grouping, { fromDay, toDay: last });
    const flagged = scan.rows.filter((r) => r.kind !== 'data gap');
    // Keys already in the outbox were sent (or are being sent): not explained again.
    const queued = await queuedKeys(ctx.db, flagged.map((r) => anomalyKey(alert.grouping, r.group!, r.currency!, r.day)));
    for (const r of flagged) {
      if (queued.has(anomalyKey(alert.grouping, r.group!, r.currency!, r.day))) continue;
      const row = await explainRow(ctx, alert.grouping, r);
      const lines = (row.lines as Array<{ text: string }>) ?? [];
      if (lines.length === 0) continue;
      const key = anomalyKey(alert.grouping, r.group!, r.currency!, r.day);
      const link = ctx.config.web.publicUrl
        ? `${ctx.config.web.publicUrl}/reports/anomalies?${new URLSearchParams({ by: alert.grouping, from: r.day, to: r.day }).toString()}`
        : undefined;
      const what = `${dimensionLabel(alert.grouping)} ${r.group}`;
      const pct = r.judgement!.changePercent === null ? '' : ` (${r.judgement!.changePercent}%)`;
      const message: OutgoingMessage = {
        key,
        channels: alert.notify,
        subject: `Spend ${r.kind} on ${r.day}: ${what}, ${r.judgement!.change} ${r.currency}${pct}`,
        text: [
          `${what} spent ${r.spend} ${r.currency} on ${r.day} (UTC), against a usual ${r.judgement!.median} ${r.currency} (median of ${r.baselineDays} days): ${r.judgement!.change} ${r.currency}${pct}.`,
          `What changed: ${String(row.explanation)}`,
          ...lines.map((l) => `- ${l.text}`),
          ...(link ? [`Report: ${link}`] : []),
        ].join('\n'),
        data: { type: 'anomaly', grouping: alert.grouping, ...row },
        ...(link ? { link } : {}),
      };
      await enqueue(ctx.db, message);
      keys.push(key);
    }
  }
  return keys;
}

async function queuedKeys(q: Queryable, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const rows = await q.query<{ key: string }>('select key from notify_messages where key = any($1::text[])', [keys]);
  return new Set(rows.map((r) => r.key));
}

/**
 * After each collection (main.ts): the anomaly alerts of the configured alert groupings into the
 * outbox. A failure is logged and never fails the run; the next run tries again.
 */
export async function runAnomalyAlerts(deps: { db: Database; config: Config; logger: Logger; now: Date }): Promise<string[]> {
  if (deps.config.anomalies.alerts.length === 0) return [];
  try {
    const keys = await enqueueAnomalyAlerts({ db: deps.db, config: deps.config, now: deps.now }, enqueueMessage);
    if (keys.length > 0) deps.logger.info({ component: 'anomalies', alerts: keys.length, keys: listSample(keys) }, 'anomaly alerts enqueued');
    return keys;
  } catch (err) {
    deps.logger.error({ err, component: 'anomalies' }, 'checking spend anomalies for alerts failed');
    return [];
  }
}

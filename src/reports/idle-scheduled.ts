import { z } from 'zod';
import { toScheduledStop, type ScheduledStop } from '../read-models/scheduled-stops.js';
import type { Queryable } from '../db/connection.js';
import { SCHEDULED_STOP_STATUSES } from '../db/schema.js';
import type { Column, FilterField, Row } from './report.js';
import { keysetRows } from './shared/batches.js';
import type { Report } from './shared/types.js';

/*
 * Scheduled stops ("stop later, with warning"): what will be stopped when, who marked it, whether
 * the webhook warnings went out (failures shown, with the error), and the outcome once run.
 * Operators cancel pending ones from here (views/reports/scheduled-stops.eta).
 */

const STATUS_FILTERS = ['open', ...SCHEDULED_STOP_STATUSES, 'all'] as const;

const params = z.strictObject({
  status: z.enum(STATUS_FILTERS, { error: `status must be one of ${STATUS_FILTERS.join(', ')}` }).optional(),
  notices: z.enum(['failed'], { error: 'notices must be failed' }).optional(),
});
export type ScheduledStopsParams = z.infer<typeof params>;

const COLUMNS: Column[] = [
  { key: 'id', label: '#', kind: 'int' },
  { key: 'instance_name', label: 'Instance', kind: 'text' },
  { key: 'instance_id', label: 'Instance ID', kind: 'text' },
  { key: 'project_id', label: 'Project', kind: 'int', secondary: true },
  { key: 'region_id', label: 'Region', kind: 'int' },
  { key: 'owner', label: 'Owner', kind: 'text' },
  { key: 'due_at', label: 'Stops at', kind: 'timestamp' },
  { key: 'status', label: 'Status', kind: 'text' },
  { key: 'created_by', label: 'Marked by', kind: 'text', secondary: true },
  { key: 'created_at', label: 'Marked at', kind: 'timestamp', secondary: true },
  { key: 'reason', label: 'Reason', kind: 'text' },
  { key: 'notices', label: 'Warnings', kind: 'text' },
  { key: 'notice_failed', label: 'Warning failed', kind: 'bool', secondary: true },
  { key: 'result', label: 'Result', kind: 'text' },
  { key: 'error', label: 'Error', kind: 'text' },
  { key: 'cancelled_by', label: 'Cancelled by', kind: 'text', secondary: true },
];

function statusClause(p: ScheduledStopsParams): string {
  const status = p.status ?? 'open';
  const clauses: string[] = [];
  if (status === 'open') clauses.push(`status in ('pending', 'running')`);
  else if (status !== 'all') clauses.push(`status = '${status}'`); // a value of the enum above
  if (p.notices === 'failed') clauses.push(`notices @> '[{"status": "failed"}]'::jsonb`);
  return clauses.length ? clauses.join(' and ') : 'true';
}

function noticeText(stop: ScheduledStop): string {
  if (stop.notices.length === 0) return 'none yet';
  return stop.notices
    .map((n) => `${n.event}: ${n.status === 'failed' ? `FAILED after ${n.attempts} attempt${n.attempts === 1 ? '' : 's'} (${n.error ?? 'no detail'})` : n.status === 'not_configured' ? 'no webhook configured' : 'sent'}`)
    .join('; ');
}

function toRow(stop: ScheduledStop): Row {
  return {
    id: stop.id,
    ref: stop.refText,
    instance_name: stop.instanceName,
    instance_id: stop.ref.instanceId,
    project_id: stop.ref.projectId,
    region_id: stop.ref.regionId,
    owner: stop.owner,
    due_at: stop.dueAt.toISOString(),
    status: stop.status,
    created_by: stop.createdBy,
    created_at: stop.createdAt.toISOString(),
    reason: stop.reason,
    notices: noticeText(stop),
    notice_failed: stop.notices.some((n) => n.status === 'failed'),
    result: stop.result,
    error: stop.error,
    cancelled_by: stop.cancelledBy,
    cancellable: stop.status === 'pending',
  };
}

async function fetch(db: Queryable, p: ScheduledStopsParams, limit: number, offset: number, afterId: number | null = null): Promise<Row[]> {
  const values: unknown[] = [limit, offset];
  let filter = statusClause(p);
  if (afterId !== null) {
    values.push(afterId);
    filter += ` and id > $3`;
  }
  // Open ones by when they run; the others newest first... one order keeps paging simple: by id.
  const rows = await db.query(`select * from scheduled_stops where ${filter} order by id limit $1 offset $2`, values);
  return rows.map((r) => toRow(toScheduledStop(r as never)));
}

export const scheduledStopsReport: Report<ScheduledStopsParams> = {
  name: 'scheduled-stops',
  title: 'Scheduled stops',
  description: 'Instances marked to be stopped after a grace period: when, by whom, whether the warnings went out; operators can cancel.',
  section: 'operations',
  params,
  view: 'scheduled-stops',
  async run(ctx, p, page) {
    const where = statusClause(p);
    const [rows, counts] = await Promise.all([
      fetch(ctx.db, p, page.limit, page.offset),
      ctx.db.query<{ n: string; failed: string; pending: string }>(
        `select count(*) as n,
           count(*) filter (where notices @> '[{"status": "failed"}]'::jsonb) as failed,
           count(*) filter (where status = 'pending') as pending
         from scheduled_stops where ${where}`,
      ),
    ]);
    const total = Number(counts[0]?.n ?? 0);
    const failed = Number(counts[0]?.failed ?? 0);
    const notes = ['Times are UTC. A scheduled stop is performed by the scheduler within a minute of its time and audited like any other stop.'];
    if (!ctx.config.notifications) notes.push('No webhook is configured (notifications): owners and operators are not warned.');
    if (failed > 0) notes.push(`${failed} of these could not be announced through the webhook: see "Warnings" for the error.`);
    return {
      title: `Scheduled stops (${p.status ?? 'open'})`,
      summary: [
        { label: 'Listed', value: total, kind: 'int' },
        { label: 'Pending', value: Number(counts[0]?.pending ?? 0), kind: 'int' },
        { label: 'Warnings failed', value: failed, kind: 'int' },
      ],
      charts: [],
      columns: COLUMNS,
      rows,
      totalRows: total,
      notes,
    };
  },
  async export(ctx, p) {
    return { columns: COLUMNS, rows: keysetRows<number>((after, limit) => fetch(ctx.db, p, limit, 0, after), (row) => Number(row.id)) };
  },
  async filters(_ctx, p): Promise<FilterField[]> {
    return [
      { name: 'status', label: 'Status', type: 'select', value: p.status ?? '', options: STATUS_FILTERS.map((s) => ({ value: s === 'open' ? '' : s, label: s === 'open' ? 'open (pending or running)' : s })) },
      { name: 'notices', label: 'Warnings', type: 'select', value: p.notices ?? '', options: [{ value: '', label: 'any' }, { value: 'failed', label: 'failed' }] },
    ];
  },
};

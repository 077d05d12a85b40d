import { z } from 'zod';
import { Binds } from '../db/binds.js';
import type { Queryable } from '../db/connection.js';
import type { Column, FilterField, Row } from './report.js';
import { offsetRows } from './shared/batches.js';
import { dateParam, textParam } from './shared/params.js';
import type { Report } from './shared/types.js';

/*
 * The alert history: every notice cloudtally decided to send, newest first. Budget threshold
 * crossings (actual and forecast), spend anomalies and scheduled report deliveries are the
 * outbox's messages (notify_messages, one delivery per channel in notify_deliveries);
 * scheduled-stop notices are recorded on the stops they were about (scheduled_stops.notices).
 * Each row says when it was decided, what crossed and the figure (the message's subject), the
 * channels with their delivery state and attempts, and the last error. Read-only.
 */

export const ALERT_TYPES = ['budget', 'anomaly', 'delivery', 'scheduled_stop'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];
const TYPE_LABELS: Record<AlertType, string> = { budget: 'Budget threshold', anomaly: 'Spend anomaly', delivery: 'Report delivery', scheduled_stop: 'Scheduled-stop notice' };

/** The state of a notice over its channels. */
export const ALERT_STATES = ['sent', 'pending', 'failed', 'partly failed', 'not configured'] as const;

const params = z.strictObject({
  type: z.enum(ALERT_TYPES, { error: `type must be one of ${ALERT_TYPES.join(', ')}` }).optional(),
  state: z.enum(ALERT_STATES, { error: `state must be one of ${ALERT_STATES.join(', ')}` }).optional(),
  /** A budget's id (`config:<name>` or the number of one made in the web app): its alerts only. */
  budget: textParam('budget', 200),
  from: dateParam('from'),
  to: dateParam('to'),
});
export type AlertsParams = z.infer<typeof params>;

const COLUMNS: Column[] = [
  { key: 'at', label: 'Decided', kind: 'timestamp' },
  { key: 'type_label', label: 'Type', kind: 'text' },
  { key: 'subject', label: 'What crossed', kind: 'text', hrefKey: 'link', wraps: true },
  { key: 'state', label: 'Delivery', kind: 'text' },
  { key: 'channels', label: 'Channels', kind: 'text', wraps: true },
  { key: 'attempts', label: 'Attempts', kind: 'int' },
  { key: 'last_error', label: 'Last error', kind: 'text' },
  { key: 'delivered_at', label: 'Last delivered', kind: 'timestamp', secondary: true },
  { key: 'type', label: 'Type code', kind: 'text', secondary: true },
  { key: 'key', label: 'Key', kind: 'text', secondary: true },
];

/*
 * One statement over both sources. A message's state: sent when every channel was, failed when
 * none was and none is still trying, partly failed when some failed and none is pending, else
 * pending. A scheduled-stop notice covers the stops of one owner: the stops sharing it are one row.
 */
function alertsSource(only: 'all' | 'budgets' = 'all'): string {
  return `
  with outbox as (
    select m.key, m.created_at as at,
      case split_part(m.key, ':', 1) when 'budget' then 'budget' when 'anomaly' then 'anomaly' when 'delivery' then 'delivery' else 'other' end as type,
      m.payload ->> 'subject' as subject,
      m.payload ->> 'link' as link,
      coalesce(d.channels, '') as channels, coalesce(d.attempts, 0) as attempts, d.last_error, d.delivered_at,
      case when d.n is null then 'not configured'
           when d.sent = d.n then 'sent'
           when d.pending > 0 then 'pending'
           when d.sent = 0 then 'failed'
           else 'partly failed' end as state
    from notify_messages m
    left join lateral (
      select count(*) as n, count(*) filter (where x.status = 'sent') as sent, count(*) filter (where x.status = 'pending') as pending,
        sum(x.attempts)::int as attempts, max(x.sent_at) as delivered_at,
        (array_agg(x.last_error order by x.last_error is null, x.id desc))[1] as last_error,
        string_agg(x.channel || ': ' || x.status || ' after ' || x.attempts || case when x.attempts = 1 then ' attempt' else ' attempts' end, '; ' order by x.channel) as channels
      from notify_deliveries x where x.message_id = m.id
    ) d on true
    ${only === 'budgets' ? "where left(m.key, 7) = 'budget:'" : ''}
  ),
  stop_notices as (
    select 'scheduled_stop:' || n.event || ':' || n.at as key, n.at::timestamptz as at, 'scheduled_stop' as type,
      'Scheduled stop ' || n.event || ': ' || count(*) || case when count(*) = 1 then ' instance' else ' instances' end as subject,
      '/reports/scheduled-stops' as link,
      case when n.status = 'not_configured' then '' else 'notifications webhook: ' || n.status || ' after ' || n.attempts || case when n.attempts = 1 then ' attempt' else ' attempts' end end as channels,
      n.attempts, n.error as last_error, case when n.status = 'sent' then n.at::timestamptz end as delivered_at,
      case n.status when 'sent' then 'sent' when 'failed' then 'failed' else 'not configured' end as state
    from scheduled_stops s cross join lateral jsonb_to_recordset(s.notices) as n(event text, at text, status text, attempts int, error text)
    ${only === 'budgets' ? 'where false' : ''}
    group by n.event, n.at, n.status, n.attempts, n.error
  )
  select * from (select * from outbox union all select * from stop_notices) a`;
}

/** Every notice; the budgets report reads only the budget alerts' rows (not every delivery of every notice). */
const SOURCE = alertsSource();

function where(p: AlertsParams, binds: Binds): string {
  const clauses: string[] = [];
  if (p.type) clauses.push(`a.type = ${binds.add(p.type)}`);
  if (p.state) clauses.push(`a.state = ${binds.add(p.state)}`);
  if (p.budget) {
    const prefix = binds.add(`budget:${p.budget}:`);
    clauses.push(`left(a.key, length(${prefix})) = ${prefix}`);
  }
  if (p.from) clauses.push(`a.at >= ${binds.add(`${p.from}T00:00:00Z`)}::timestamptz`);
  if (p.to) clauses.push(`a.at < (${binds.add(p.to)}::date + 1)::timestamptz`);
  return clauses.length ? `where ${clauses.join(' and ')}` : '';
}

/** A message's link as a path of this app (messages carry CLOUDTALLY_PUBLIC_URL's absolute URL), or null. */
function appPath(link: unknown): string | null {
  if (typeof link !== 'string' || link === '') return null;
  if (link.startsWith('/') && !link.startsWith('//')) return link;
  try {
    const url = new URL(link);
    return url.pathname.startsWith('/reports/') ? `${url.pathname}${url.search}` : null;
  } catch {
    return null;
  }
}

function toRow(r: Row): Row {
  const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : v ?? null);
  return { ...r, at: iso(r.at), delivered_at: iso(r.delivered_at), link: appPath(r.link), type_label: TYPE_LABELS[r.type as AlertType] ?? String(r.type), attempts: Number(r.attempts) };
}

async function page(db: Queryable, p: AlertsParams, limit: number, offset: number): Promise<Row[]> {
  const binds = new Binds();
  const filter = where(p, binds);
  const rows = await db.query(`${SOURCE} ${filter} order by a.at desc, a.key limit ${binds.add(limit)} offset ${binds.add(offset)}`, binds.values);
  return rows.map(toRow);
}

/** The newest alert of each budget (by id), for the budgets report. */
export async function lastBudgetAlerts(db: Queryable, budgetIds: readonly string[]): Promise<Map<string, Row>> {
  if (budgetIds.length === 0) return new Map();
  const binds = new Binds();
  const ids = binds.add(budgetIds);
  const rows = await db.query(
    `${alertsSource('budgets')} join unnest(${ids}::text[]) as b(id) on left(a.key, length('budget:' || b.id || ':')) = 'budget:' || b.id || ':'
     where a.type = 'budget'
     order by a.at desc`,
    binds.values,
  );
  const last = new Map<string, Row>();
  for (const row of rows) {
    const id = budgetIds.find((b) => String(row.key).startsWith(`budget:${b}:`));
    if (id !== undefined && !last.has(id)) last.set(id, toRow(row));
  }
  return last;
}

function titleOf(p: AlertsParams): string {
  const parts = [p.type && TYPE_LABELS[p.type].toLowerCase(), p.state, p.budget && `budget ${p.budget}`, p.from && `from ${p.from}`, p.to && `to ${p.to}`].filter(Boolean);
  return parts.length ? `Alert history: ${parts.join(', ')}` : 'Alert history';
}

export const alertsReport: Report<AlertsParams> = {
  name: 'alerts',
  title: 'Alert history',
  description: 'Every alert cloudtally decided to send (budget thresholds, spend anomalies, report deliveries, scheduled-stop notices): when, what crossed, to which channels, whether it arrived.',
  section: 'operations',
  params,
  async run(ctx, p, pg) {
    const binds = new Binds();
    const filter = where(p, binds);
    const [rows, counts] = await Promise.all([
      page(ctx.db, p, pg.limit, pg.offset),
      ctx.db.query<{ n: string; failed: string; pending: string }>(
        `select count(*) as n, count(*) filter (where a.state in ('failed', 'partly failed')) as failed, count(*) filter (where a.state = 'pending') as pending from (${SOURCE} ${filter}) a`,
        binds.values,
      ),
    ]);
    const n = Number(counts[0]?.n ?? 0);
    return {
      title: titleOf(p),
      summary: [
        { label: 'Alerts', value: n, kind: 'int' },
        { label: 'Not delivered', value: Number(counts[0]?.failed ?? 0), kind: 'int', hint: 'failed on at least one channel after the last attempt' },
        { label: 'Still trying', value: Number(counts[0]?.pending ?? 0), kind: 'int' },
      ],
      charts: [],
      columns: COLUMNS,
      rows,
      totalRows: n,
      notes: [
        'Each alert is decided once (its key is unique) and sent to each of its channels, retried with backoff until it arrives or the last attempt fails. Times are UTC; the date filters are UTC days.',
        'Delivery: sent (every channel), pending (still trying), failed (no channel), partly failed (some channels), not configured (no channel to send to).',
      ],
    };
  },
  async export(ctx, p) {
    return { columns: COLUMNS, rows: offsetRows((limit, offset) => page(ctx.db, p, limit, offset)) };
  },
  async filters(_ctx, p): Promise<FilterField[]> {
    const opt = (values: ReadonlyArray<readonly [string, string]>, all: string) => [{ value: '', label: all }, ...values.map(([value, label]) => ({ value, label }))];
    return [
      { name: 'type', label: 'Type', type: 'select', value: p.type ?? '', options: opt(ALERT_TYPES.map((t) => [t, TYPE_LABELS[t]] as const), 'Any type') },
      { name: 'state', label: 'Delivery', type: 'select', value: p.state ?? '', options: opt(ALERT_STATES.map((s) => [s, s] as const), 'Any state') },
      { name: 'budget', label: 'Budget id', type: 'text', value: p.budget ?? '' },
      { name: 'from', label: 'From', type: 'date', value: p.from ?? '' },
      { name: 'to', label: 'To', type: 'date', value: p.to ?? '' },
    ];
  },
};

/**
 * Collection health: the runs (status, duration, rows, per-scope errors), or per scope and kind
 * the age of the latest good snapshot against its schedule and the last error seen for it.
 */
import { z } from 'zod';
import { COLLECTOR_NAMES, type CollectorName } from '../config/index.js';
import { cronGapHours } from '../costing/gap-caps.js';
import { SNAPSHOT_KINDS, type RunError, type SnapshotKind } from '../db/schema.js';
import { deliveryKeyPrefix, lastDeliveries, outboxCounts, outboxProblems } from '../read-models/outbox.js';
import type { Column, Row } from './report.js';
import { listRows, offsetRows } from './shared/batches.js';
import { formatAge, kindLabel } from './shared/format.js';
import { dirParam, intParam, sortParam } from './shared/params.js';
import { latestSnapshotsSql } from '../db/latest-snapshots.js';
import { freshnessNotes } from './shared/snapshots.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';

export const collectionHealthParams = z.strictObject({
  view: z.enum(['runs', 'scopes', 'notifications', 'deliveries'], { error: 'view must be runs, scopes, notifications or deliveries' }).default('runs'),
  status: z.enum(['running', 'succeeded', 'partial', 'failed'], { error: 'status must be running, succeeded, partial or failed' }).optional(),
  days: intParam('days', 1, 3650).default(7),
  sort: sortParam(['started_at', 'age_hours', 'scope']),
  dir: dirParam,
});
export type CollectionHealthParams = z.infer<typeof collectionHealthParams>;

/** Which snapshot kind each collector writes. */
export const COLLECTOR_KIND: Record<CollectorName, SnapshotKind> = {
  clusters: 'cluster',
  instances: 'instance',
  ports: 'port',
  keypairs: 'keypair',
  flavors: 'flavor',
  k8s_prices: 'k8s_price',
  storage_keys: 'storage_key',
  image_tags: 'image_tag',
  free_features: 'free_feature',
};
const KIND_COLLECTOR = Object.fromEntries(Object.entries(COLLECTOR_KIND).map(([c, k]) => [k, c])) as Record<SnapshotKind, CollectorName>;

const RUN_COLUMNS: Column[] = [
  { key: 'run_id', label: 'Run', kind: 'int' },
  { key: 'trigger', label: 'Trigger', kind: 'text' },
  { key: 'status', label: 'Status', kind: 'text' },
  { key: 'started_at', label: 'Started', kind: 'timestamp', sortable: true },
  { key: 'finished_at', label: 'Finished', kind: 'timestamp', secondary: true },
  { key: 'duration_seconds', label: 'Seconds', kind: 'decimal' },
  { key: 'collectors', label: 'Collectors', kind: 'text' },
  { key: 'rows', label: 'Rows written', kind: 'int' },
  { key: 'error_count', label: 'Errors', kind: 'int' },
  { key: 'errors', label: 'Errors (collector / scope: status message)', kind: 'text' },
  { key: 'runner_id', label: 'Runner', kind: 'text', secondary: true },
];

const SCOPE_COLUMNS: Column[] = [
  { key: 'scope', label: 'Scope', kind: 'text', sortable: true },
  { key: 'kind', label: 'Kind', kind: 'text' },
  { key: 'latest_good_at', label: 'Latest good snapshot', kind: 'timestamp' },
  { key: 'age_hours', label: 'Age (hours)', kind: 'decimal', sortable: true },
  { key: 'max_age_hours', label: 'Stale after (hours)', kind: 'decimal' },
  { key: 'stale', label: 'Stale', kind: 'bool' },
  { key: 'rows', label: 'Rows', kind: 'int' },
  { key: 'last_error_at', label: 'Last error', kind: 'timestamp' },
  { key: 'last_error', label: 'Last error message', kind: 'text' },
];

const NOTIFICATION_COLUMNS: Column[] = [
  { key: 'key', label: 'Message', kind: 'text' },
  { key: 'channel', label: 'Channel', kind: 'text' },
  { key: 'status', label: 'Status', kind: 'text' },
  { key: 'attempts', label: 'Attempts', kind: 'int' },
  { key: 'created_at', label: 'Queued', kind: 'timestamp' },
  { key: 'next_attempt_at', label: 'Next attempt', kind: 'timestamp' },
  { key: 'last_error', label: 'Last error', kind: 'text' },
];

const DELIVERY_COLUMNS: Column[] = [
  { key: 'delivery', label: 'Delivery', kind: 'text' },
  { key: 'report', label: 'Report', kind: 'text' },
  { key: 'schedule', label: 'Schedule', kind: 'text' },
  { key: 'channels', label: 'Channels', kind: 'text' },
  { key: 'last_slot', label: 'Last slot queued', kind: 'timestamp' },
  { key: 'status', label: 'Status', kind: 'text' },
  { key: 'detail', label: 'Per channel', kind: 'text' },
];

/** Failed deliveries (of the last `days`) and pending ones that failed once or are overdue. */
async function notificationRows(ctx: ReportCtx, p: CollectionHealthParams, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const found = await outboxProblems(ctx.db, ctx.now, { days: p.days, overdueMinutes: ctx.config.outbox.overdueAfterMinutes, limit, offset });
  return {
    rows: found.rows.map((r) => ({
      key: r.key,
      channel: r.channel,
      status: r.status === 'pending' ? (r.overdue ? 'overdue' : 'retrying') : 'failed',
      attempts: r.attempts,
      created_at: r.createdAt,
      next_attempt_at: r.nextAttemptAt,
      last_error: r.lastError,
    })),
    total: found.total,
  };
}

/** Each configured scheduled delivery with the status of its latest slot. */
async function deliveryRows(ctx: ReportCtx): Promise<Row[]> {
  const deliveries = ctx.config.deliveries;
  const last = await lastDeliveries(ctx.db, deliveries.map((d) => d.id));
  return deliveries.map((d) => {
    const latest = last.get(d.id);
    return {
      delivery: d.name ?? `#${d.id}`,
      report: d.report,
      schedule: d.schedule,
      channels: d.notify.join(', '),
      last_slot: latest ? latest.key.slice(deliveryKeyPrefix(d.id).length) : null,
      status: latest?.status ?? 'not yet run',
      detail: latest ? latest.channels.map((c) => `${c.channel}: ${c.status} (${c.attempts} attempt${c.attempts === 1 ? '' : 's'})${c.lastError && c.status !== 'sent' ? ` ${c.lastError}` : ''}`).join('; ') : null,
    };
  });
}

function errorText(errors: readonly RunError[]): string {
  return errors
    .slice(0, 20)
    .map((e) => `${e.severity === 'warning' ? 'warning: ' : ''}${e.collector} / ${e.scope}: ${e.status ?? 'no status'} ${e.message}`)
    .join('; ')
    .concat(errors.length > 20 ? `; and ${errors.length - 20} more` : '');
}

async function runRows(ctx: ReportCtx, p: CollectionHealthParams, limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const found = await ctx.db.query<{
    id: number;
    trigger: string;
    status: string;
    started_at: Date;
    finished_at: Date | null;
    seconds: string | null;
    collectors: string[];
    rows: string | null;
    errors: RunError[];
    runner_id: string;
    total_rows: number;
  }>(
    `select id, trigger, status, started_at, finished_at, extract(epoch from finished_at - started_at)::numeric(12, 3) as seconds,
       collectors, (select sum(value::numeric) from jsonb_each_text(counts) where value ~ '^[0-9]+$') as rows, errors, runner_id,
       count(*) over ()::int as total_rows
     from collection_runs
     where started_at >= $1::timestamptz - make_interval(days => $2::int) and ($3::text is null or status = $3)
     order by started_at ${p.dir === 'asc' ? 'asc' : 'desc'}, id ${p.dir === 'asc' ? 'asc' : 'desc'}
     limit $4 offset $5`,
    [ctx.now, p.days, p.status ?? null, limit, offset],
  );
  return {
    rows: found.map((r) => ({
      run_id: r.id,
      trigger: r.trigger,
      status: r.status,
      started_at: r.started_at,
      finished_at: r.finished_at,
      duration_seconds: r.seconds,
      collectors: r.collectors.join(', '),
      rows: r.rows === null ? 0 : Number(r.rows),
      error_count: r.errors.length,
      errors: errorText(r.errors),
      runner_id: r.runner_id,
    })),
    total: Number(found[0]?.total_rows ?? 0),
  };
}

/** Per (kind, scope): its latest complete snapshot, its age against 2 x its schedule, and the last error seen for it. */
async function scopeRows(ctx: ReportCtx, p: CollectionHealthParams): Promise<Row[]> {
  const latest = await ctx.db.query<{ kind: SnapshotKind; scope_key: string; taken_at: Date; row_count: number }>(
    `select l.kind, l.scope_key, l.taken_at, s.row_count from (${latestSnapshotsSql('$1')}) l join snapshots s on s.id = l.id`,
    [SNAPSHOT_KINDS],
  );
  const errors = await ctx.db.query<{ started_at: Date; collector: string; scope: string; message: string; status: number | null }>(
    `select distinct on (e ->> 'collector', e ->> 'scope') r.started_at, e ->> 'collector' as collector, e ->> 'scope' as scope,
       e ->> 'message' as message, (e ->> 'status')::int as status
     from collection_runs r cross join lateral jsonb_array_elements(r.errors) e
     where r.started_at >= $1::timestamptz - make_interval(days => $2::int) and jsonb_typeof(r.errors) = 'array'
     order by e ->> 'collector', e ->> 'scope', r.started_at desc`,
    [ctx.now, p.days],
  );
  const lastError = new Map(errors.map((e) => [`${e.collector}@${e.scope}`, e]));
  const rows: Row[] = latest.map((s) => {
    const collector = KIND_COLLECTOR[s.kind];
    const maxAge = 2 * cronGapHours(ctx.config.schedules[collector]);
    const ageHours = Math.max(0, (ctx.now.getTime() - s.taken_at.getTime()) / 3600_000);
    const error = lastError.get(`${collector}@${s.scope_key}`);
    lastError.delete(`${collector}@${s.scope_key}`);
    return {
      scope: s.scope_key,
      kind: kindLabel(s.kind),
      latest_good_at: s.taken_at,
      age_hours: ageHours.toFixed(2),
      max_age_hours: String(maxAge),
      stale: ageHours > maxAge,
      rows: s.row_count,
      last_error_at: error && error.started_at > s.taken_at ? error.started_at : null,
      last_error: error && error.started_at > s.taken_at ? `${error.status ?? 'no status'} ${error.message}` : null,
    };
  });
  // Scopes that failed and never had a good snapshot.
  for (const e of lastError.values()) {
    const kind = COLLECTOR_KIND[e.collector as CollectorName];
    if (!kind || !(COLLECTOR_NAMES as readonly string[]).includes(e.collector)) continue;
    rows.push({ scope: e.scope, kind: kindLabel(kind), latest_good_at: null, age_hours: null, max_age_hours: String(2 * cronGapHours(ctx.config.schedules[e.collector as CollectorName])), stale: true, rows: 0, last_error_at: e.started_at, last_error: `${e.status ?? 'no status'} ${e.message}` });
  }
  const dir = p.dir === 'desc' ? -1 : 1;
  if (p.sort === 'age_hours') rows.sort((a, b) => (Number(a.age_hours ?? Infinity) - Number(b.age_hours ?? Infinity)) * (p.dir ? dir : -1));
  else rows.sort((a, b) => (String(a.scope).localeCompare(String(b.scope)) || String(a.kind).localeCompare(String(b.kind))) * dir);
  return rows;
}

const TITLES: Record<CollectionHealthParams['view'], string> = {
  runs: 'Collection runs',
  scopes: 'Collection health per scope',
  notifications: 'Notifications not delivered',
  deliveries: 'Scheduled deliveries',
};

const COLUMNS: Record<CollectionHealthParams['view'], Column[]> = {
  runs: RUN_COLUMNS,
  scopes: SCOPE_COLUMNS,
  notifications: NOTIFICATION_COLUMNS,
  deliveries: DELIVERY_COLUMNS,
};

export const collectionHealthReport: Report<CollectionHealthParams> = defineReport({
  name: 'collection-health',
  title: 'Collection health',
  description: 'Collection runs with their status and per-scope errors, and the age of each scope\'s latest good snapshot.',
  section: 'health',
  params: collectionHealthParams,

  async run(ctx, params, page) {
    const scopes = await scopeRows(ctx, params);
    const stale = scopes.filter((r) => r.stale === true);
    const lastRun = await ctx.db.query<{ status: string; started_at: Date }>('select status, started_at from collection_runs order by started_at desc, id desc limit 1');
    const failed = await ctx.db.query<{ n: number }>(
      "select count(*)::int as n from collection_runs where status in ('failed', 'partial') and started_at >= $1::timestamptz - interval '24 hours'",
      [ctx.now],
    );
    const runs =
      params.view === 'runs'
        ? await runRows(ctx, params, page.limit, page.offset)
        : params.view === 'notifications'
          ? await notificationRows(ctx, params, page.limit, page.offset)
          : params.view === 'deliveries'
            ? { rows: (await deliveryRows(ctx)).slice(page.offset, page.offset + page.limit), total: ctx.config.deliveries.length }
            : null;
    const outbox = await outboxCounts(ctx.db, ctx.now, { days: params.days, overdueMinutes: ctx.config.outbox.overdueAfterMinutes });
    const notifyFailed = outbox.channels.reduce((n, c) => n + c.failed, 0);
    const notifyOverdue = outbox.channels.reduce((n, c) => n + c.overdue, 0);
    const recent = await runRows(ctx, { ...params, status: undefined, dir: 'desc' }, 30, 0);
    return {
      title: TITLES[params.view],
      summary: [
        { label: 'Last run', value: lastRun[0] ? `${lastRun[0].status}, ${formatAge(ctx.now, lastRun[0].started_at)} ago` : null, kind: 'text' },
        { label: 'Failed or partial runs, last 24 h', value: failed[0]?.n ?? 0, kind: 'int' },
        { label: 'Stale scopes', value: stale.length, kind: 'int', hint: 'latest good snapshot older than twice the schedule' },
        { label: `Failed notifications, last ${params.days} days`, value: notifyFailed, kind: 'int', hint: 'alerts and scheduled deliveries a channel did not take after every retry' },
        { label: 'Overdue notifications', value: notifyOverdue, kind: 'int', hint: `pending more than ${ctx.config.outbox.overdueAfterMinutes} minutes past their time` },
      ],
      charts: [
        {
          id: 'run-durations',
          title: 'Duration of the last runs (seconds)',
          type: 'bar',
          labels: [...recent.rows].reverse().map((r) => `#${r.run_id}`),
          datasets: [{ label: 'seconds', data: [...recent.rows].reverse().map((r) => (r.duration_seconds === null ? null : Number(r.duration_seconds))) }],
          valueLabel: 'seconds',
        },
      ],
      columns: COLUMNS[params.view],
      rows: runs ? runs.rows : scopes.slice(page.offset, page.offset + page.limit),
      totalRows: runs ? runs.total : scopes.length,
      notes: [
        ...freshnessNotes(
          ctx.now,
          scopes.filter((r) => r.latest_good_at instanceof Date).map((r) => ({ taken_at: r.latest_good_at as Date, scope_key: String(r.scope) })),
          'any kind',
        ),
        stale.length > 0
          ? `Stale: ${stale.map((r) => `${r.scope} ${String(r.kind).toLowerCase()}`).join(', ')}. Reports keep showing their latest good snapshot.`
          : 'Every scope has a good snapshot within twice its schedule.',
        'A failed scope never erases or hides its last good snapshot.',
        ...(notifyFailed + notifyOverdue > 0
          ? [
              `Notifications not delivered: ${outbox.channels
                .filter((c) => c.failed + c.overdue > 0)
                .map((c) => `${c.channel} (${c.failed} failed, ${c.overdue} overdue)`)
                .join(', ')}. The notifications view lists them with their errors.`,
            ]
          : []),
      ],
    };
  },

  async export(ctx, params) {
    if (params.view === 'notifications') {
      return { columns: NOTIFICATION_COLUMNS, rows: offsetRows(async (limit, offset) => (await notificationRows(ctx, params, limit, offset)).rows) };
    }
    if (params.view === 'deliveries') return { columns: DELIVERY_COLUMNS, rows: listRows(await deliveryRows(ctx)) };
    if (params.view === 'scopes') {
      const rows = await scopeRows(ctx, params);
      return { columns: SCOPE_COLUMNS, rows: listRows(rows) };
    }
    return { columns: RUN_COLUMNS, rows: offsetRows(async (limit, offset) => (await runRows(ctx, params, limit, offset)).rows) };
  },

  async filters(_ctx, params) {
    return [
      {
        name: 'view',
        label: 'Show',
        type: 'select',
        value: params.view,
        options: [
          { value: 'runs', label: 'Runs' },
          { value: 'scopes', label: 'Scopes' },
          { value: 'notifications', label: 'Notifications not delivered' },
          { value: 'deliveries', label: 'Scheduled deliveries' },
        ],
      },
      {
        name: 'status',
        label: 'Run status',
        type: 'select',
        value: params.status ?? '',
        options: [{ value: '', label: 'Any' }, ...['running', 'succeeded', 'partial', 'failed'].map((s) => ({ value: s, label: s }))],
      },
      { name: 'days', label: 'Days', type: 'number', value: String(params.days) },
    ];
  },
});

import { z } from 'zod';
import { Binds } from '../db/binds.js';
import { AUDIT_ACTIONS, AUDIT_RESULT_LABELS, AUDIT_RESULTS, type AuditResult } from '../read-models/audit-vocabulary.js';
import type { Queryable } from '../db/connection.js';
import { scopeKeyOf } from '../db/schema.js';
import type { Column, FilterField, Row } from './report.js';
import { keysetRows } from './shared/batches.js';
import { dateParam, textParam, yesNoParam } from './shared/params.js';
import type { Report } from './shared/types.js';

/*
 * The audit log as a report: every action attempt (stops, dry runs, scheduling, cancelling),
 * newest first, filtered by actor, action, result, instance and date range; CSV with the same
 * filters. Read-only: nothing in the app edits or deletes audit rows (the database refuses it).
 */

const ACTIONS = Object.values(AUDIT_ACTIONS) as [string, ...string[]];

const params = z
  .strictObject({
    actor: textParam('actor', 100),
    action: z.enum(ACTIONS, { error: `action must be one of ${ACTIONS.join(', ')}` }).optional(),
    result: z.enum(AUDIT_RESULTS, { error: `result must be one of ${AUDIT_RESULTS.join(', ')}` }).optional(),
    instance: textParam('instance', 128),
    from: dateParam('from'),
    to: dateParam('to'),
    dry_run: yesNoParam('dry_run'),
  })
  .refine((p) => !p.from || !p.to || p.from <= p.to, { error: 'from must not be after to', path: ['from'] });
export type AuditParams = z.infer<typeof params>;

const COLUMNS: Column[] = [
  { key: 'id', label: '#', kind: 'int' },
  { key: 'at', label: 'When', kind: 'timestamp' },
  { key: 'actor', label: 'Who', kind: 'text' },
  { key: 'role', label: 'Role', kind: 'text', secondary: true },
  { key: 'action', label: 'Action', kind: 'text' },
  { key: 'instance_id', label: 'Instance ID', kind: 'text' },
  { key: 'instance_name', label: 'Instance', kind: 'text' },
  { key: 'project_id', label: 'Project', kind: 'int', secondary: true },
  { key: 'region_id', label: 'Region', kind: 'int', secondary: true },
  { key: 'reason', label: 'Reason / rule', kind: 'text' },
  { key: 'dry_run', label: 'Dry run', kind: 'bool', secondary: true },
  { key: 'outcome', label: 'Outcome', kind: 'text' },
  { key: 'result', label: 'Result code', kind: 'text', secondary: true },
  { key: 'error', label: 'Error', kind: 'text' },
  { key: 'task_ids', label: 'Task IDs', kind: 'json' },
];

function where(p: AuditParams, binds: Binds): string {
  const clauses: string[] = [];
  if (p.actor) clauses.push(`a.actor = ${binds.add(p.actor)}`);
  if (p.action) clauses.push(`a.action = ${binds.add(p.action)}`);
  if (p.result) clauses.push(`a.result = ${binds.add(p.result)}`);
  if (p.instance) clauses.push(`a.instance_id = ${binds.add(p.instance.trim())}`);
  if (p.from) clauses.push(`a.at >= ${binds.add(`${p.from}T00:00:00Z`)}::timestamptz`);
  if (p.to) clauses.push(`a.at < (${binds.add(p.to)}::date + 1)::timestamptz`);
  if (p.dry_run !== undefined) clauses.push(`a.dry_run = ${binds.add(p.dry_run)}`);
  return clauses.length ? `where ${clauses.join(' and ')}` : '';
}

const SELECT = `
  select a.id, a.at, a.actor, a.role, a.action, a.instance_id, a.project_id, a.region_id,
    a.reason, a.dry_run, a.result, a.error, a.task_ids
  from audit_log a`;

/**
 * The rows with the name each instance had when last seen (resource_presence_seen), read for the
 * page's instances after the page: the audit log stays on the coordinator and presence is sharded,
 * which Citus cannot join laterally.
 */
async function withInstanceNames(db: Queryable, rows: Row[]): Promise<Row[]> {
  // Each row's instance as presence keys it, or null when the row names none.
  const keys = rows.map((r) =>
    r.instance_id != null && r.project_id != null && r.region_id != null ? { scope: scopeKeyOf(Number(r.project_id), Number(r.region_id)), id: String(r.instance_id) } : null,
  );
  const wanted = keys.filter((k) => k !== null);
  const names = new Map<string, string | null>();
  if (wanted.length > 0) {
    const found = await db.query<{ scope_key: string; resource_id: string; name: string | null }>(
      `select distinct on (r.scope_key, r.resource_id) r.scope_key, r.resource_id, r.name
       from resource_presence_seen r join (select distinct * from unnest($1::text[], $2::text[]) as k(scope_key, resource_id)) k
         on r.scope_key = k.scope_key and r.resource_id = k.resource_id
       where r.kind in ('instance', 'cluster_server')
       order by r.scope_key, r.resource_id, r.last_seen_at desc`,
      [wanted.map((k) => k.scope), wanted.map((k) => k.id)],
    );
    for (const f of found) names.set(`${f.scope_key} ${f.resource_id}`, f.name);
  }
  return rows.map(({ id, at, actor, role, action, instance_id, ...rest }, i) => {
    const key = keys[i];
    return { id, at, actor, role, action, instance_id, instance_name: key ? (names.get(`${key.scope} ${key.id}`) ?? null) : null, ...rest };
  });
}

function toRow(r: Row): Row {
  const outcome = AUDIT_RESULT_LABELS[r.result as AuditResult] ?? String(r.result);
  return { ...r, id: Number(r.id), at: r.at instanceof Date ? r.at.toISOString() : r.at, outcome };
}

async function page(db: Queryable, p: AuditParams, limit: number, beforeId: number | null, offset = 0): Promise<Row[]> {
  const binds = new Binds();
  let filter = where(p, binds);
  if (beforeId !== null) filter = `${filter ? `${filter} and` : 'where'} a.id < ${binds.add(beforeId)}`;
  const rows = await db.query(`${SELECT} ${filter} order by a.id desc limit ${binds.add(limit)} offset ${binds.add(offset)}`, binds.values);
  return (await withInstanceNames(db, rows)).map(toRow);
}

function titleOf(p: AuditParams): string {
  const parts = [p.actor && `by ${p.actor}`, p.action, p.result, p.instance && `instance ${p.instance}`, p.from && `from ${p.from}`, p.to && `to ${p.to}`].filter(Boolean);
  return parts.length ? `Audit log: ${parts.join(', ')}` : 'Audit log';
}

export const auditReport: Report<AuditParams> = {
  name: 'audit',
  title: 'Audit log',
  description: 'Every action attempt: who, when, which instance, why, dry run or real, the result and the API’s error. Append-only.',
  section: 'operations',
  params,
  async run(ctx, p, pg) {
    const binds = new Binds();
    const filter = where(p, binds);
    const [rows, count] = await Promise.all([
      page(ctx.db, p, pg.limit, null, pg.offset),
      ctx.db.query<{ n: string }>(`select count(*) as n from audit_log a ${filter}`, binds.values),
    ]);
    return {
      title: titleOf(p),
      summary: [{ label: 'Entries', value: Number(count[0]?.n ?? 0), kind: 'int' }],
      charts: [],
      columns: COLUMNS,
      rows,
      totalRows: Number(count[0]?.n ?? 0),
      notes: ['The audit log is append-only: the database refuses any change or deletion of its rows. Times are UTC; the date filters are UTC days.'],
    };
  },
  async export(ctx, p) {
    return { columns: COLUMNS, rows: keysetRows<number>((after, limit) => page(ctx.db, p, limit, after), (row) => Number(row.id)) };
  },
  async filters(ctx, p): Promise<FilterField[]> {
    const actors = await ctx.db.query<{ actor: string }>('select distinct actor from audit_log order by actor limit 200');
    const opt = (values: readonly string[], all: string) => [{ value: '', label: all }, ...values.map((v) => ({ value: v, label: v }))];
    return [
      { name: 'actor', label: 'Who', type: 'select', value: p.actor ?? '', options: opt(actors.map((a) => a.actor), 'Anyone') },
      { name: 'action', label: 'Action', type: 'select', value: p.action ?? '', options: opt(ACTIONS, 'Any action') },
      { name: 'result', label: 'Result', type: 'select', value: p.result ?? '', options: opt(AUDIT_RESULTS, 'Any result') },
      { name: 'instance', label: 'Instance ID', type: 'text', value: p.instance ?? '' },
      { name: 'from', label: 'From', type: 'date', value: p.from ?? '' },
      { name: 'to', label: 'To', type: 'date', value: p.to ?? '' },
      { name: 'dry_run', label: 'Dry run', type: 'select', value: p.dry_run === undefined ? '' : p.dry_run ? 'yes' : 'no', options: [{ value: '', label: 'Both' }, { value: 'yes', label: 'Dry runs' }, { value: 'no', label: 'Real' }] },
    ];
  },
};

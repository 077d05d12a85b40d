import { z } from 'zod';
import { loadIdleCandidates, type CurrentInstance } from '../read-models/current-instances.js';
import { decimalScale, decimalToUnits, totalsByCurrency } from '../read-models/decimal.js';
import { describeIdleRules, evaluateIdleRules, IDLE_RULE_TITLES, IDLE_RULES, type IdleRuleId, type RuleMatch } from '../read-models/idle-rules.js';
import { formatInstanceRef } from '../read-models/refs.js';
import type { Column, FilterField, Row, SummaryItem } from './report.js';
import { listRows } from './shared/batches.js';
import { totalRow } from './shared/totals.js';
import { dirParam, idParam, sortParam } from './shared/params.js';
import { freshnessNotes, latestSnapshots } from './shared/snapshots.js';
import type { Report, ReportCtx } from './shared/types.js';

/*
 * Idle candidates: running instances and cluster servers that an idle rule matches, each with
 * every rule that matched and why, its age, tags, scope, and the cost at stake (its flavor's
 * price, hourly and monthly, exact; "unpriced" when unknown). Totals per currency, never mixed.
 * Operators select rows and stop them (views/reports/idle.eta -> /actions/stop/confirm).
 */

const SORTS = ['price_per_hour', 'age_days', 'name', 'scheduled_stop_at'] as const;

const params = z.strictObject({
  project: idParam('project'),
  region: idParam('region'),
  rule: z.enum(IDLE_RULES, { error: `rule must be one of ${IDLE_RULES.join(', ')}` }).optional(),
  sort: sortParam(SORTS),
  dir: dirParam,
});
export type IdleParams = z.infer<typeof params>;

const COLUMNS: Column[] = [
  { key: 'name', label: 'Name', kind: 'text', sortable: true },
  { key: 'instance_id', label: 'Instance ID', kind: 'text' },
  { key: 'kind', label: 'Kind', kind: 'text', secondary: true },
  { key: 'project_id', label: 'Project', kind: 'int', secondary: true },
  { key: 'region_id', label: 'Region ID', kind: 'int', secondary: true },
  { key: 'region', label: 'Region', kind: 'text' },
  { key: 'status', label: 'Status', kind: 'text', secondary: true },
  { key: 'rules', label: 'Rules', kind: 'text', secondary: true },
  { key: 'reasons', label: 'Why', kind: 'text' },
  { key: 'age_days', label: 'Age (days)', kind: 'int', sortable: true },
  { key: 'created_at', label: 'Created', kind: 'timestamp', secondary: true },
  { key: 'flavor', label: 'Flavor', kind: 'text', secondary: true },
  { key: 'price_per_hour', label: 'Cost per hour', kind: 'money', currencyKey: 'currency', hourly: true, sortable: true },
  { key: 'price_per_month', label: 'Cost per month', kind: 'money', currencyKey: 'currency' },
  { key: 'currency', label: 'Currency', kind: 'text', secondary: true },
  { key: 'scheduled_stop_at', label: 'Scheduled stop', kind: 'timestamp', sortable: true },
  { key: 'tags', label: 'Tags', kind: 'tags', secondary: true },
];

export interface IdleCandidate {
  instance: CurrentInstance;
  matches: RuleMatch[];
}

/** Every idle candidate now, exactly evaluated, filtered by the parameters. */
export async function idleCandidates(ctx: ReportCtx, p: Pick<IdleParams, 'project' | 'region' | 'rule'>): Promise<IdleCandidate[]> {
  const rows = await loadIdleCandidates(ctx.db, ctx.config, ctx.now, { projectId: p.project, regionId: p.region });
  const out: IdleCandidate[] = [];
  for (const instance of rows) {
    const matches = evaluateIdleRules(instance, ctx.config, ctx.now);
    if (matches.length === 0) continue;
    if (p.rule && !matches.some((m) => m.rule === p.rule)) continue;
    out.push({ instance, matches });
  }
  return out;
}

function toRow(c: IdleCandidate, now: Date): Row {
  const i = c.instance;
  const age = i.createdAt ? Math.floor((now.getTime() - i.createdAt.getTime()) / 86_400_000) : null;
  return {
    ref: formatInstanceRef(i.ref),
    name: i.name,
    instance_id: i.ref.instanceId,
    kind: i.kind === 'cluster_server' ? `server of ${i.clusterName ?? 'a cluster'}` : 'instance',
    project_id: i.ref.projectId,
    region_id: i.ref.regionId,
    region: i.region,
    status: i.status,
    rules: c.matches.map((m) => m.rule).join(', '),
    reasons: c.matches.map((m) => `${IDLE_RULE_TITLES[m.rule]}: ${m.reason}`).join('; '),
    matches: c.matches,
    age_days: age,
    created_at: i.createdAt ? i.createdAt.toISOString() : null,
    flavor: i.flavorName ?? i.flavorId,
    price_per_hour: i.pricePerHour,
    price_per_month: i.pricePerMonth,
    currency: i.currency,
    priced: i.pricePerHour !== null && i.currency !== null,
    scheduled_stop_at: i.scheduledStop ? i.scheduledStop.dueAt.toISOString() : null,
    scheduled_stop_id: i.scheduledStop?.id ?? null,
    tags: i.tags,
  };
}

/**
 * The rows in the chosen order (ties by instance reference). Prices are compared as integers at
 * one common scale, each parsed once, and text with one collator (the order of localeCompare):
 * a comparison per pair on a list of every running instance ran parsers a million times.
 */
function sortRows(rows: Row[], sort: IdleParams['sort'], dir: IdleParams['dir']): Row[] {
  const key = sort ?? 'price_per_hour';
  const direction = dir ?? (key === 'name' || key === 'scheduled_stop_at' ? 'asc' : 'desc');
  const sign = direction === 'asc' ? 1 : -1;
  const collator = new Intl.Collator();
  const present = (v: unknown) => v !== null && v !== undefined;
  const scale = key === 'price_per_hour' ? Math.max(0, ...rows.filter((r) => present(r[key])).map((r) => decimalScale(String(r[key])))) : 0;
  const keyed = rows.map((row) => {
    const v = row[key];
    return { row, ref: String(row.ref), value: !present(v) ? null : key === 'price_per_hour' ? decimalToUnits(String(v), scale) : v };
  });
  const compare = (a: unknown, b: unknown): number => {
    if (a === null) return b === null ? 0 : 1; // nulls last either way
    if (b === null) return -1;
    if (typeof a === 'bigint' && typeof b === 'bigint') return sign * (a < b ? -1 : a > b ? 1 : 0);
    if (typeof a === 'number' && typeof b === 'number') return sign * (a - b);
    return sign * collator.compare(String(a), String(b));
  };
  return keyed.sort((a, b) => compare(a.value, b.value) || collator.compare(a.ref, b.ref)).map((k) => k.row);
}

async function allRows(ctx: ReportCtx, p: IdleParams): Promise<Row[]> {
  const candidates = await idleCandidates(ctx, p);
  return sortRows(
    candidates.map((c) => toRow(c, ctx.now)),
    p.sort,
    p.dir,
  );
}

function moneyTotals(rows: readonly Row[]) {
  return totalsByCurrency(
    rows.map((r) => ({ pricePerHour: r.price_per_hour as string | null, pricePerMonth: r.price_per_month as string | null, currency: r.currency as string | null })),
  );
}

/** The cost at stake per currency over every candidate (not the page), summed exactly as the summary's. */
function totals(rows: readonly Row[]): Row[] {
  return moneyTotals(rows).totals.map((t) => totalRow(COLUMNS, { currency: t.currency, price_per_hour: t.perHour, price_per_month: t.perMonth }));
}

function summary(rows: Row[]): SummaryItem[] {
  const { totals, unpriced } = moneyTotals(rows);
  const items: SummaryItem[] = [{ label: 'Idle candidates', value: rows.length, kind: 'int' }];
  for (const t of totals) {
    items.push({ label: `At stake per hour (${t.currency})`, value: t.perHour, kind: 'money', currency: t.currency, hourly: true, hint: `${t.count} priced instance${t.count === 1 ? '' : 's'}` });
    items.push({ label: `At stake per month (${t.currency})`, value: t.perMonth, kind: 'money', currency: t.currency });
  }
  items.push({ label: 'Unpriced', value: unpriced, kind: 'int', hint: 'no known flavor price: counted, never as zero' });
  return items;
}

function title(p: IdleParams): string {
  const parts: string[] = [];
  if (p.rule) parts.push(IDLE_RULE_TITLES[p.rule as IdleRuleId].toLowerCase());
  if (p.project) parts.push(`project ${p.project}`);
  if (p.region) parts.push(`region ${p.region}`);
  return parts.length ? `Idle candidates: ${parts.join(', ')}` : 'Idle candidates';
}

async function notes(ctx: ReportCtx): Promise<string[]> {
  const snapshots = await latestSnapshots(ctx.db, ['instance', 'cluster']);
  return [
    ...freshnessNotes(ctx.now, snapshots, 'instances and clusters'),
    'Only running (ACTIVE) instances are candidates. Stops made through cloudtally since the latest snapshot are already applied.',
    'Cost at stake: the flavor price of the latest complete flavor snapshot of the instance’s scope; monthly is the API’s monthly price (hourly × 730 when it gives none). Currencies are never added together.',
    ...describeIdleRules(ctx.config),
  ];
}

export const idleReport: Report<IdleParams> = {
  name: 'idle',
  title: 'Idle candidates',
  description: 'Running instances an idle rule matches, why, and the cost at stake; operators can stop them from here.',
  section: 'operations',
  params,
  view: 'idle',
  async run(ctx, p, page) {
    const [rows, reportNotes] = await Promise.all([allRows(ctx, p), notes(ctx)]);
    return {
      title: title(p),
      summary: summary(rows),
      charts: [],
      columns: COLUMNS,
      rows: rows.slice(page.offset, page.offset + page.limit),
      totalRows: rows.length,
      totals: totals(rows),
      notes: reportNotes,
    };
  },
  async export(ctx, p) {
    const rows = await allRows(ctx, p);
    return { columns: COLUMNS, rows: listRows(rows), totals: async () => totals(rows) };
  },
  async filters(ctx, p): Promise<FilterField[]> {
    const scopes = await latestSnapshots(ctx.db, ['instance', 'cluster']);
    const projects = [...new Set(scopes.map((s) => s.project_id).filter((v): v is number => v !== null))].sort((a, b) => a - b);
    const regions = [...new Set(scopes.map((s) => s.region_id).filter((v): v is number => v !== null))].sort((a, b) => a - b);
    return [
      { name: 'rule', label: 'Rule', type: 'select', value: p.rule ?? '', options: [{ value: '', label: 'Any rule' }, ...IDLE_RULES.map((r) => ({ value: r, label: IDLE_RULE_TITLES[r] }))] },
      { name: 'project', label: 'Project', type: 'select', value: p.project ? String(p.project) : '', options: [{ value: '', label: 'All projects' }, ...projects.map((v) => ({ value: String(v), label: String(v) }))] },
      { name: 'region', label: 'Region', type: 'select', value: p.region ? String(p.region) : '', options: [{ value: '', label: 'All regions' }, ...regions.map((v) => ({ value: String(v), label: String(v) }))] },
    ];
  },
};

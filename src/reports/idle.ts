import { z } from 'zod';
import { scopeOf } from './shared/access-scope.js';
import type { MoneyTotal } from '../read-models/decimal.js';
import { IDLE_SORTS, queryIdleCandidates, type IdleCandidateRow, type IdleCandidates } from '../read-models/idle-candidates.js';
import { describeIdleRules, evaluateIdleRules, IDLE_RULE_TITLES, IDLE_RULES, ruleMatchText, type IdleRuleId, type IdleRuleSettings, type RuleMatch } from '../read-models/idle-rules.js';
import { formatInstanceRef } from '../read-models/refs.js';
import type { Column, FilterField, Row, SummaryItem } from './report.js';
import { listRows } from './shared/batches.js';
import { totalRow } from './shared/totals.js';
import { dirParam, idParam, sortParam } from './shared/params.js';
import { latestSnapshots } from '../db/latest-snapshots.js';
import { scopeFilterFields } from './shared/fields.js';
import { freshnessNotes } from './shared/snapshots.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';

/*
 * Idle candidates: running instances and cluster servers that an idle rule matches, each with
 * every rule that matched and why, its age, tags, scope, and the cost at stake (its flavor's
 * price, hourly and monthly, exact; "unpriced" when unknown). Totals per currency, never mixed.
 * Operators select rows and stop them (views/reports/idle.eta -> /actions/stop/confirm).
 */

const params = z.strictObject({
  project: idParam('project'),
  region: idParam('region'),
  rule: z.enum(IDLE_RULES, { error: `rule must be one of ${IDLE_RULES.join(', ')}` }).optional(),
  sort: sortParam(IDLE_SORTS),
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
  { key: 'reasons', label: 'Why', kind: 'text', wraps: true },
  { key: 'age_days', label: 'Age (days)', kind: 'int', sortable: true },
  { key: 'created_at', label: 'Created', kind: 'timestamp', secondary: true },
  { key: 'flavor', label: 'Flavor', kind: 'text', secondary: true },
  { key: 'price_per_hour', label: 'Cost per hour', kind: 'money', currencyKey: 'currency', hourly: true, sortable: true },
  { key: 'price_per_month', label: 'Cost per month', kind: 'money', currencyKey: 'currency' },
  { key: 'currency', label: 'Currency', kind: 'text', secondary: true },
  { key: 'scheduled_stop_at', label: 'Scheduled stop', kind: 'timestamp', sortable: true },
  { key: 'tags', label: 'Tags', kind: 'tags', secondary: true },
];

function toRow(c: IdleCandidateRow, settings: IdleRuleSettings, now: Date): Row {
  const i = c.instance;
  // The database decided which rules match; the same rules in TypeScript word why.
  const reasons = new Map(evaluateIdleRules(i, settings, now).map((m) => [m.rule, m.reason]));
  const matches: RuleMatch[] = c.rules.map((rule) => ({ rule, reason: reasons.get(rule) ?? '' }));
  return {
    ref: formatInstanceRef(i.ref),
    name: i.name,
    instance_id: i.ref.instanceId,
    kind: i.kind === 'cluster_server' ? `server of ${i.clusterName ?? 'a cluster'}` : 'instance',
    project_id: i.ref.projectId,
    region_id: i.ref.regionId,
    region: i.region,
    status: i.status,
    rules: matches.map((m) => m.rule).join(', '),
    reasons: matches.map(ruleMatchText).join('; '),
    matches,
    age_days: c.ageDays,
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

/** The candidates matching the parameters, `limit` rows from `offset` in the chosen order (ties by reference). */
async function candidates(ctx: ReportCtx, p: IdleParams, limit: number | null, offset: number) {
  const result = await queryIdleCandidates(ctx.db, ctx.config, ctx.now, {
    projectId: p.project,
    regionId: p.region,
    rule: p.rule,
    scope: scopeOf(ctx),
    sort: p.sort,
    dir: p.dir,
    limit,
    offset,
  });
  return { ...result, rows: result.rows.map((c) => toRow(c, ctx.config, ctx.now)) };
}

/** The cost at stake per currency over every candidate (not the page), summed in SQL. */
function totals(totals: readonly MoneyTotal[]): Row[] {
  return totals.map((t) => totalRow(COLUMNS, { currency: t.currency, price_per_hour: t.perHour, price_per_month: t.perMonth }));
}

function summary({ count, totals, unpriced }: Omit<IdleCandidates, 'rows'>): SummaryItem[] {
  const items: SummaryItem[] = [{ label: 'Idle candidates', value: count, kind: 'int' }];
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

/**
 * Cached like the other reports, and keyed on the actions too (showsActions): a stop or a scheduled
 * stop made through cloudtally changes the data version, so it shows at the next request.
 */
export const idleReport: Report<IdleParams> = defineReport<IdleParams>({
  name: 'idle',
  title: 'Idle candidates',
  description: 'Running instances an idle rule matches, why, and the cost at stake; operators can stop them from here.',
  section: 'operations',
  params,
  view: 'idle',
  async run(ctx, p, page) {
    const [result, reportNotes] = await Promise.all([candidates(ctx, p, page.limit, page.offset), notes(ctx)]);
    return {
      title: title(p),
      summary: summary(result),
      charts: [],
      columns: COLUMNS,
      rows: result.rows,
      totalRows: result.count,
      totals: totals(result.totals),
      notes: reportNotes,
    };
  },
  async export(ctx, p) {
    const result = await candidates(ctx, p, null, 0);
    return { columns: COLUMNS, rows: listRows(result.rows), totals: async () => totals(result.totals) };
  },
  scoped: true,
  async filters(ctx, p): Promise<FilterField[]> {
    return [
      { name: 'rule', label: 'Rule', type: 'select', value: p.rule ?? '', options: [{ value: '', label: 'Any rule' }, ...IDLE_RULES.map((r) => ({ value: r, label: IDLE_RULE_TITLES[r] }))] },
      ...(await scopeFilterFields(ctx.db, p, ['instance', 'cluster'])),
    ];
  },
}, { cached: true, showsActions: true });

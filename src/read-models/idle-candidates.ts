import { Binds } from '../db/binds.js';
import { scopeCondition, type TagScope } from '../db/access-scope-sql.js';
import type { Queryable } from '../db/connection.js';
import type { MoneyTotal } from './decimal.js';
import { CURRENT_INSTANCES_SQL, currentInstancesSql, toInstance, type CurrentInstance, type CurrentInstanceRow } from '../costing/current-instances.js';
import { currentInstancesFresh } from '../costing/derive/current-instances.js';
import { IDLE_RULES, type IdleRuleId, type IdleRuleSettings } from './idle-rules.js';
import { idleRuleFlagsSql, idleRuleInputsFromTags, idleTagExtraction, STORED_IDLE_RULE_INPUTS } from './idle-rules-sql.js';
import { runningSql } from '../costing/pricing.js';

/*
 * The idle candidates list, decided, counted, totalled, sorted and paged in one statement: only
 * the page's rows leave the database (a list of every running instance is the common case when
 * nothing carries an owner tag yet).
 */

export const IDLE_SORTS = ['price_per_hour', 'age_days', 'name', 'scheduled_stop_at'] as const;
export type IdleSort = (typeof IDLE_SORTS)[number];

export interface IdleCandidatesQuery {
  projectId?: number;
  regionId?: number;
  /** Only candidates this rule matches. */
  rule?: IdleRuleId;
  sort?: IdleSort;
  dir?: 'asc' | 'desc';
  /** Rows wanted (null: all) from `offset`. */
  limit: number | null;
  offset: number;
  /** Only the instances of this tag scope (team-scoped access); absent or null: all. */
  scope?: TagScope | null;
  /** `snapshots`: read the snapshots even when current_instances is current (tests compare both). */
  source?: 'snapshots';
}

export interface IdleCandidateRow {
  instance: CurrentInstance;
  /** The rules that match, in IDLE_RULES order. */
  rules: IdleRuleId[];
  /** Whole days since creation (null: unknown creation time). */
  ageDays: number | null;
}

export interface IdleCandidates {
  rows: IdleCandidateRow[];
  /** Candidates in all (not only the page). */
  count: number;
  /** Cost at stake per currency over every candidate, exact, by currency code. */
  totals: MoneyTotal[];
  /** Candidates without a known price (never counted as zero). */
  unpriced: number;
}

/** The default direction of each sort: the most money and the oldest first, names and due times ascending. */
export function defaultIdleDirection(sort: IdleSort): 'asc' | 'desc' {
  return sort === 'name' || sort === 'scheduled_stop_at' ? 'asc' : 'desc';
}

const SORT_TERMS: Record<IdleSort, string[]> = {
  price_per_hour: ['x.price_per_hour'],
  age_days: ['x.age_days'],
  name: ['lower(x.name) collate "C"', 'x.name collate "C"'],
  scheduled_stop_at: ['x.scheduled_due_at'],
};

/** Ties (and equal values) in the order of the reference: project, region, instance id, then kind. */
const TIE_TERMS = ['x.project_id', 'x.region_id', 'x.instance_id collate "C"', 'x.kind'];

interface CandidateRow extends CurrentInstanceRow {
  age_days: number | null;
  rule_flags: boolean[] | null;
  total_count: string;
  total_unpriced: string;
  totals: Array<{ currency: string; per_hour: string; per_month: string; count: string }> | null;
}

export async function queryIdleCandidates(q: Queryable, settings: IdleRuleSettings, now: Date, query: IdleCandidatesQuery): Promise<IdleCandidates> {
  // The narrow current_instances table when it holds the current snapshots, else the snapshots.
  // Side by side: the table is current after every run, so both answers are needed nearly always.
  const [stored, stops] = await Promise.all([query.source !== 'snapshots' && currentInstancesFresh(q, idleTagExtraction(settings)), anyStops(q)]);
  const rows = await q.query<CandidateRow>(...(stored ? storedCandidatesSql(settings, now, query, stops) : snapshotCandidatesSql(settings, now, query)));
  const first = rows[0];
  return {
    rows: rows.filter((r) => r.instance_id !== null).map((r) => ({
      instance: toInstance(r),
      rules: IDLE_RULES.filter((_, i) => r.rule_flags?.[i] === true),
      ageDays: r.age_days,
    })),
    count: Number(first?.total_count ?? 0),
    unpriced: Number(first?.total_unpriced ?? 0),
    totals: (first?.totals ?? []).map((t) => ({ currency: t.currency, perHour: t.per_hour, perMonth: t.per_month, count: Number(t.count) })),
  };
}

/** Whether some instance was stopped through cloudtally since its latest snapshot. */
async function anyStops(q: Queryable): Promise<boolean> {
  const [row] = await q.query<{ any: boolean }>('select exists (select 1 from instance_status_overrides) as any');
  return row?.any === true;
}

function orderAndPage(query: IdleCandidatesQuery, binds: Binds, sortTerms: Record<IdleSort, string[]>): string {
  const sort = query.sort ?? 'price_per_hour';
  const dir = query.dir ?? defaultIdleDirection(sort);
  const order = [...sortTerms[sort].map((t) => `${t} ${dir} nulls last`), ...TIE_TERMS].join(', ');
  return `order by ${order}${query.limit === null ? '' : ` limit ${binds.add(query.limit)}::int`} offset ${binds.add(query.offset)}::int`;
}

const ageDaysSql = (nowSql: string) => `floor(extract(epoch from (${nowSql} - date_trunc('milliseconds', x.created_at))) / 86400)::int`;

/** The statement over the snapshots: every current instance read, priced and judged. */
function snapshotCandidatesSql(settings: IdleRuleSettings, now: Date, query: IdleCandidatesQuery): [string, unknown[]] {
  const binds = new Binds();
  const flags = idleRuleFlagsSql(settings, now, binds, idleRuleInputsFromTags(settings, binds));
  const filters = ['x.running'];
  if (query.projectId !== undefined) filters.push(`x.project_id = ${binds.add(query.projectId)}::int`);
  if (query.regionId !== undefined) filters.push(`x.region_id = ${binds.add(query.regionId)}::int`);
  if (query.scope) filters.push(scopeCondition(query.scope, 'x', binds));
  // Each rule is evaluated once per row (into rule_flags), then filtered on.
  const matched = query.rule ? `x.rule_flags[${IDLE_RULES.indexOf(query.rule) + 1}]` : 'true = any(x.rule_flags)';
  const page = orderAndPage(query, binds, SORT_TERMS);
  return [
    `with current_rows as (${CURRENT_INSTANCES_SQL} where ${filters.join(' and ')}),
    -- OFFSET 0: the rules are computed here once, not again wherever the filter is pushed down.
    flagged as (
      select x.*, array[${IDLE_RULES.map((r) => flags[r]).join(', ')}] as rule_flags
      from current_rows x offset 0
    ),
    candidates as materialized (
      select x.*, ${ageDaysSql(`${binds.add(now.toISOString())}::timestamptz`)} as age_days
      from flagged x
      where ${matched}
    ),
    summary as (
      select count(*) as total_count, count(*) filter (where price_per_hour is null or currency_code is null) as total_unpriced,
        (select json_agg(json_build_object('currency', t.currency, 'per_hour', t.per_hour, 'per_month', t.per_month, 'count', t.n) order by t.currency collate "C")
         from (select currency_code as currency, trim_scale(sum(price_per_hour))::text as per_hour,
                 trim_scale(sum(coalesce(price_per_month, 0)))::text as per_month, count(*) as n
               from candidates where price_per_hour is not null and currency_code is not null group by currency_code) t) as totals
      from candidates
    )
    -- One row per page row (or one with only the summary when the page is empty); page_ord keeps
    -- the page's order (row_number numbers the rows as the ordered, limited subquery yields them).
    select s.total_count, s.total_unpriced, s.totals, p.*
    from summary s
    left join lateral (select row_number() over () as page_ord, x.* from (select * from candidates x ${page}) x) p on true
    order by p.page_ord`,
    binds.values,
  ];
}

/**
 * The statement over current_instances: one pass counts and totals the candidates, another
 * (the default order is an index's) finds the page's keys, and only the page's rows get their
 * stops and scheduled stops joined. Both passes read the table in the statement's one snapshot.
 */
function storedCandidatesSql(settings: IdleRuleSettings, now: Date, query: IdleCandidatesQuery, stops: boolean): [string, unknown[]] {
  const binds = new Binds();
  const nowSql = `${binds.add(now.toISOString())}::timestamptz`;
  const flags = idleRuleFlagsSql(settings, now, binds, STORED_IDLE_RULE_INPUTS);
  // Running as the snapshot says, unless cloudtally stopped it since (`stops`: some instance was;
  // else the join is left out: a stop committed meanwhile changes the data version, so the next
  // request sees it).
  const running = stops ? `case when o.instance_id is null then x.snapshot_running else ${runningSql('o.status', 'x.vm_state')} end` : 'x.snapshot_running';
  const overrides = stops ? `left join instance_status_overrides o on o.instance_id = x.instance_id and o.project_id = x.project_id and o.region_id = x.region_id` : '';
  const where = [running, query.rule ? flags[query.rule] : `(${IDLE_RULES.map((r) => flags[r]).join(' or ')})`];
  if (query.projectId !== undefined) where.push(`x.project_id = ${binds.add(query.projectId)}::int`);
  if (query.regionId !== undefined) where.push(`x.region_id = ${binds.add(query.regionId)}::int`);
  if (query.scope) where.push(scopeCondition(query.scope, 'x', binds));
  const priced = 'x.price_per_hour is not null and x.currency_code is not null';
  const scheduled = query.sort === 'scheduled_stop_at'
    ? `left join scheduled_stops ss on ss.instance_id = x.instance_id and ss.project_id = x.project_id and ss.region_id = x.region_id and ss.status in ('pending', 'running')`
    : '';
  const page = orderAndPage(query, binds, { ...SORT_TERMS, age_days: [ageDaysSql(nowSql)], scheduled_stop_at: ['ss.due_at'] });
  // The page's rows, with their snapshot's time (the latest complete one of the scope: the table's stamp says so).
  const row = `(select y.*, (select max(s.taken_at) from snapshots s where s.complete and s.scope_key = y.scope_key
        and s.kind = case when y.kind = 'instance' then 'instance' else 'cluster' end) as taken_at
      from current_instances y where y.scope_key = k.scope_key and y.kind = k.kind and y.instance_id = k.instance_id)`;
  return [
    `with summary as (
      select coalesce(sum(g.n), 0) as total_count, coalesce(sum(g.n - g.priced), 0) as total_unpriced,
        json_agg(json_build_object('currency', g.currency, 'per_hour', g.per_hour, 'per_month', g.per_month, 'count', g.priced)
          order by g.currency collate "C") filter (where g.priced > 0) as totals
      from (
        select x.currency_code as currency, count(*) as n, count(*) filter (where ${priced}) as priced,
          trim_scale(sum(x.price_per_hour) filter (where ${priced}))::text as per_hour,
          trim_scale(sum(coalesce(x.price_per_month, 0)) filter (where ${priced}))::text as per_month
        from current_instances x ${overrides}
        where ${where.join(' and ')}
        group by x.currency_code
      ) g
    ),
    page as (
      select row_number() over () as page_ord, k.* from (
        select x.scope_key, x.kind, x.instance_id, array[${IDLE_RULES.map((r) => flags[r]).join(', ')}] as rule_flags, ${ageDaysSql(nowSql)} as age_days
        from current_instances x ${overrides} ${scheduled}
        where ${where.join(' and ')}
        ${page}) k
    )
    select s.total_count, s.total_unpriced, s.totals, p.*
    from summary s
    left join lateral (
      select k.page_ord, k.rule_flags, k.age_days, c.*
      from page k cross join lateral (${currentInstancesSql(row)}) c
    ) p on true
    order by p.page_ord`,
    binds.values,
  ];
}

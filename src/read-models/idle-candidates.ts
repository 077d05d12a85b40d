import { Binds } from '../db/binds.js';
import type { Queryable } from '../db/connection.js';
import type { MoneyTotal } from './decimal.js';
import { CURRENT_INSTANCES_SQL, toInstance, type CurrentInstance, type CurrentInstanceRow } from './current-instances.js';
import { IDLE_RULES, type IdleRuleId, type IdleRuleSettings } from './idle-rules.js';
import { idleRuleFlagsSql } from './idle-rules-sql.js';

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
  const binds = new Binds();
  const flags = idleRuleFlagsSql(settings, now, binds);
  const filters = ['x.running'];
  if (query.projectId !== undefined) filters.push(`x.project_id = ${binds.add(query.projectId)}::int`);
  if (query.regionId !== undefined) filters.push(`x.region_id = ${binds.add(query.regionId)}::int`);
  // Each rule is evaluated once per row (into rule_flags), then filtered on.
  const matched = query.rule ? `x.rule_flags[${IDLE_RULES.indexOf(query.rule) + 1}]` : 'true = any(x.rule_flags)';

  const sort = query.sort ?? 'price_per_hour';
  const dir = query.dir ?? defaultIdleDirection(sort);
  const order = [...SORT_TERMS[sort].map((t) => `${t} ${dir} nulls last`), ...TIE_TERMS].join(', ');
  const page = `order by ${order}${query.limit === null ? '' : ` limit ${binds.add(query.limit)}::int`} offset ${binds.add(query.offset)}::int`;

  const rows = await q.query<CandidateRow>(
    `with current_rows as (${CURRENT_INSTANCES_SQL} where ${filters.join(' and ')}),
    -- OFFSET 0: the rules are computed here once, not again wherever the filter is pushed down.
    flagged as (
      select x.*, array[${IDLE_RULES.map((r) => flags[r]).join(', ')}] as rule_flags
      from current_rows x offset 0
    ),
    candidates as materialized (
      select x.*, floor(extract(epoch from (${binds.add(now.toISOString())}::timestamptz - date_trunc('milliseconds', x.created_at))) / 86400)::int as age_days
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
  );
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

/**
 * The inventory's row count and cost per currency read from the cost rollups of the snapshots it
 * lists, instead of pricing and counting every row on each request (100,000 instances: 2-3 ms
 * instead of 300-500 ms). A rollup is written from the very rows the inventory lists, priced by
 * the same SQL (pricedResourcesSql), in the transaction that completes the snapshot, so its sums
 * are the sums of those rows, to the last digit (numeric additions).
 *
 * It answers only where that holds exactly; everything else reads the rows:
 * - filters that select one rollup group set: none, or one of project, region, flavor, state,
 *   type, one tag (key:value), each optionally with currency / priced;
 * - every listed snapshot has its rollups (a snapshot without rows has none, nor has one whose
 *   rows were written without them: then the rows are read);
 * - cost totals: not while a stop through cloudtally since the snapshots changes what a row
 *   costs (instance_status_overrides, rare and gone at the next collection); the count still is.
 */
import { scopeOf } from './shared/access-scope.js';
import type { Config } from '../config/index.js';
import { normaliseTagKey, normaliseTagValue } from '../tags/normalise.js';
import { STATE_RUNNING, STATE_STOPPED, TAG_DIMENSION_PREFIX } from '../costing/pricing.js';
import { UNTAGGED } from '../db/schema.js';
import type { InventoryParams } from './inventory.js';
import { KINDS } from './inventory-kinds.js';
import type { ReportCtx } from './shared/types.js';

/**
 * A tag filter's stored key and the values it matches: the value as given (a link from a report
 * carries the stored value, which may predate the current rules) and through the value rules, so
 * `team:ML` finds what is stored as `ml`.
 */
export function tagFilterValues(t: { key: string; value: string }, config: Config): { key: string; values: string[] } {
  const key = normaliseTagKey(t.key, config);
  return { key, values: [...new Set([t.value, normaliseTagValue(key, t.value, config)])] };
}

export type CurrencyCost = {
  currency: string;
  price_per_hour: string;
  price_per_month: string;
};

export interface RollupSummary {
  /** The rows of each listed snapshot, in the list's default order (scope key in byte order, then id). */
  snapshots: { id: number; rows: number }[];
  count: number;
  /** Cost per currency (ordered by currency); null when a stop since the snapshots may change it. */
  totals: CurrencyCost[] | null;
}

/** The rollup groups the filters select: a dimension and its group values (undefined = all). */
interface GroupSet {
  dimension: string;
  values?: string[];
}

function groupSet(p: InventoryParams, config: Config): GroupSet | null {
  if (p.status !== undefined || p.missing_tag !== undefined || (p.q !== undefined && p.q !== '')) return null;
  const sets: GroupSet[] = [];
  if (p.project !== undefined) sets.push({ dimension: 'project', values: [String(p.project)] });
  if (p.region !== undefined) sets.push({ dimension: 'region', values: [String(p.region)] });
  if (p.flavor !== undefined) sets.push({ dimension: 'flavor', values: [p.flavor] });
  if (p.state !== undefined) sets.push({ dimension: 'state', values: [p.state === 'running' ? STATE_RUNNING : STATE_STOPPED] });
  if (p.type !== undefined) sets.push({ dimension: 'kind', values: [p.type] });
  for (const t of p.tag ?? []) {
    const { key, values } = tagFilterValues(t, config);
    // The (untagged) group also holds the resources lacking the key, which the filter does not match.
    if (values.includes(UNTAGGED)) return null;
    sets.push({ dimension: `${TAG_DIMENSION_PREFIX}${key}`, values });
  }
  if (sets.length > 1) return null;
  return sets[0] ?? { dimension: 'kind' };
}

/** The count and totals of the inventory from rollups, or null when they cannot give them exactly (see above). */
export async function rollupSummary(ctx: ReportCtx, p: InventoryParams, latestIds: number[]): Promise<RollupSummary | null> {
  const spec = KINDS[p.kind];
  // The rollups sum every resource: a scoped user's rows are counted from the rows themselves.
  if (!spec.rolledUp || scopeOf(ctx)) return null;
  const set = groupSet(p, ctx.config);
  if (!set) return null;
  const values: unknown[] = [latestIds, set.dimension];
  const bind = (value: unknown) => `$${values.push(value)}`;
  const where = ['r.dimension = $2'];
  if (set.values) where.push(`r.group_value = any(${bind(set.values)}::text[])`);
  if (p.currency !== undefined) where.push(`r.currency = upper(${bind(p.currency)}::text)`);
  if (p.priced !== undefined) where.push(p.priced === 'yes' ? 'r.currency is not null' : 'r.currency is null');
  // Part 0: rows per snapshot (and whether it has rollups at all); part 1: cost per currency.
  // Joins rather than correlated subqueries per snapshot: Citus plans these (rollups are sharded, snapshots a reference table).
  const sql = `with listed as (select l.id, l.scope_key collate "C" as scope_c from snapshots l where l.id = any($1::int[])),
    rolled as (select distinct k.snapshot_id from cost_rollups k where k.snapshot_id = any($1::int[]) and k.dimension = 'kind'),
    picked as (
      select r.snapshot_id, r.currency, r.price_per_hour, r.price_per_month, r.resource_count
      from cost_rollups r
      where r.snapshot_id = any($1::int[]) and ${where.join(' and ')}
    ),
    counted as (select x.snapshot_id, sum(x.resource_count) as n from picked x group by x.snapshot_id)
    select 0 as part, l.id, l.scope_c, rd.snapshot_id is not null as rolled, null::text as currency,
      coalesce(c.n, 0)::int as n,
      null::numeric as price_per_hour, null::numeric as price_per_month
    from listed l left join rolled rd on rd.snapshot_id = l.id left join counted c on c.snapshot_id = l.id
    union all
    select 1, null, null::text collate "C", null, x.currency, null, sum(x.price_per_hour), sum(x.price_per_month)
    from picked x where x.currency is not null group by x.currency
    order by part, scope_c, id, currency`;
  const overridable = spec.overridable && !p.at;
  const [rows, overridden] = await Promise.all([
    ctx.db.query<{ part: number; id: number; rolled: boolean; n: number } & CurrencyCost & Record<string, unknown>>(sql, values),
    overridable ? ctx.db.query<{ any: boolean }>('select exists (select 1 from instance_status_overrides) as any') : Promise.resolve([{ any: false }]),
  ]);
  const snapshots = rows.filter((r) => r.part === 0);
  if (snapshots.some((s) => !s.rolled)) return null;
  return {
    snapshots: snapshots.map((s) => ({ id: s.id, rows: s.n })),
    count: snapshots.reduce((n, s) => n + s.n, 0),
    totals: overridden[0]?.any
      ? null
      : rows.filter((r) => r.part === 1).map((r) => ({ currency: r.currency, price_per_hour: r.price_per_hour, price_per_month: r.price_per_month })),
  };
}

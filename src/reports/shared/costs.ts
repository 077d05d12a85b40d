/**
 * Current cost by group, read from the rollups of the latest complete priced snapshot of each
 * scope (never from raw resource rows).
 */
import { z } from 'zod';
import { effectiveRollupsSql, FIXED_DIMENSIONS, PRICED_KINDS, TAG_DIMENSION_PREFIX, type PricedKind } from '../../db/cost-model.js';
import type { Queryable } from '../../db/connection.js';
import { UNTAGGED } from '../../db/schema.js';
import type { Config } from '../../config/index.js';
import { normaliseTagKey } from '../../tags/normalise.js';
import type { Column, FilterField } from '../report.js';
import { dimensionLabel, kindLabel } from './format.js';
import { regionNames } from './regions.js';
import { latestSnapshotsSql } from './snapshots.js';

export interface CostFilter {
  kind?: PricedKind;
  projectId?: number;
  regionId?: number;
}

export interface GroupCost {
  group_value: string;
  currency: string | null;
  /** NULL when the currency is (no known price). */
  price_per_hour: string | null;
  price_per_month: string | null;
  resource_count: number;
  unpriced_count: number;
}

/**
 * SQL (with `latest` and `eff` CTEs) of the effective rollup rows of dimension $2 for the latest
 * priced snapshots ($1 = priced kinds), filtered by $4 kind, $5 project, $6 region; $3 = UNTAGGED.
 * Rows without a currency (no known price) carry NULL amounts (see effectiveRollupsSql).
 */
export function latestEffectiveCte(): string {
  return `latest as (${latestSnapshotsSql('$1')}),
    eff as (
      select * from (${effectiveRollupsSql('latest', '$2', '$3')}) e
      where ($4::text is null or e.kind = $4) and ($5::int is null or e.project_id = $5) and ($6::int is null or e.region_id = $6)
    )`;
}

export function latestEffectiveParams(dimension: string, filter: CostFilter): unknown[] {
  return [PRICED_KINDS, dimension, UNTAGGED, filter.kind ?? null, filter.projectId ?? null, filter.regionId ?? null];
}

export async function latestGroupCosts(q: Queryable, dimension: string, filter: CostFilter = {}): Promise<GroupCost[]> {
  return q.query<GroupCost & Record<string, unknown>>(
    `with ${latestEffectiveCte()}
     select group_value, currency, sum(price_per_hour) as price_per_hour, sum(price_per_month) as price_per_month,
       sum(resource_count)::int as resource_count, sum(unpriced_count)::int as unpriced_count
     from eff group by group_value, currency
     order by currency nulls last, sum(price_per_hour) desc, group_value`,
    latestEffectiveParams(dimension, filter),
  );
}

export interface CurrencyTotal {
  currency: string | null;
  price_per_hour: string | null;
  price_per_month: string | null;
  resource_count: number;
  unpriced_count: number;
}

/** Run-rate per currency (the `kind` dimension holds each snapshot's totals); NULL = unpriced. */
export async function latestTotals(q: Queryable, filter: CostFilter = {}): Promise<CurrencyTotal[]> {
  return q.query<CurrencyTotal & Record<string, unknown>>(
    `with ${latestEffectiveCte()}
     select currency, sum(price_per_hour) as price_per_hour, sum(price_per_month) as price_per_month,
       sum(resource_count)::int as resource_count, sum(unpriced_count)::int as unpriced_count
     from eff group by currency order by currency nulls last`,
    latestEffectiveParams('kind', filter),
  );
}

/** The dimensions present in the latest rollups: fixed ones first, then tag keys sorted. */
export async function latestDimensions(q: Queryable): Promise<string[]> {
  const rows = await q.query<{ dimension: string }>(
    `with latest as (${latestSnapshotsSql('$1')})
     select distinct r.dimension from cost_rollups r join latest l on l.id = r.snapshot_id where r.dimension like 'tag:%' order by 1`,
    [PRICED_KINDS],
  );
  return [...FIXED_DIMENSIONS, ...rows.map((r) => r.dimension)];
}

export const GROUPING_HELP = `project, region, kind, flavor, state or tag:<key>`;

/**
 * A grouping by a tag key that no resource carries puts everything in "(untagged)": say so, and
 * name the keys that exist, rather than show a table that looks like nobody tags anything.
 */
export async function unknownTagKeyNotes(q: Queryable, dimension: string): Promise<string[]> {
  if (!dimension.startsWith(TAG_DIMENSION_PREFIX)) return [];
  const dimensions = await latestDimensions(q);
  if (dimensions.includes(dimension)) return [];
  const keys = dimensions.filter((d) => d.startsWith(TAG_DIMENSION_PREFIX)).map((d) => d.slice(TAG_DIMENSION_PREFIX.length));
  const key = dimension.slice(TAG_DIMENSION_PREFIX.length);
  return [
    `No resource in the latest snapshots has the tag key "${key}", so every resource is in (untagged). ` +
      (keys.length > 0 ? `Tag keys in use: ${keys.join(', ')}.` : 'No resource carries any tag yet.'),
  ];
}

/**
 * A grouping as given in a URL (`tag:Team`, `project`) to the dimension stored in rollups: tag
 * keys through the configured case and aliases. Returns null when it is none of these.
 */
export function dimensionOf(by: string, config: Config): string | null {
  if ((FIXED_DIMENSIONS as readonly string[]).includes(by)) return by;
  if (by.startsWith(TAG_DIMENSION_PREFIX) && by.length > TAG_DIMENSION_PREFIX.length) {
    return TAG_DIMENSION_PREFIX + normaliseTagKey(by.slice(TAG_DIMENSION_PREFIX.length), config);
  }
  return null;
}

/**
 * The "group by" control of a report: every dimension of the latest rollups, plus the current one
 * when the data does not hold it (yet), so the page always shows what the URL asked for.
 */
export async function groupingField(ctx: { db: Queryable; config: Config }, by: string, label: string): Promise<FilterField> {
  const dimensions = await latestDimensions(ctx.db);
  const current = dimensionOf(by, ctx.config) ?? by;
  if (!dimensions.includes(current)) dimensions.push(current);
  return { name: 'by', label, type: 'select', value: current, options: dimensions.map((d) => ({ value: d, label: dimensionLabel(d) })) };
}

/** Region names by region id (the `region` grouping's values) of the regions in the latest snapshots (regions.ts). */
async function latestRegionNames(q: Queryable): Promise<Record<string, string>> {
  const rows = await q.query<{ region_id: number }>(
    `with latest as (${latestSnapshotsSql('$1')}) select distinct region_id from latest where region_id is not null`,
    [['instance', 'cluster']],
  );
  return regionNames(q, rows.map((r) => r.region_id));
}

/** Groupings whose values are codes: a name column stands beside them (regions: ids; kinds: codes). */
const NAMED_GROUPINGS: Record<string, string> = { region: 'Region name', kind: 'Kind name' };

/** The column that names each group beside its value, for the groupings whose values are codes. */
export function groupNameColumns(dimension: string): Column[] {
  const label = NAMED_GROUPINGS[dimension];
  return label ? [{ key: 'group_name', label, kind: 'text' }] : [];
}

/** The names of a grouping's values (see groupNameColumns), or null when it has none. */
export async function groupNames(q: Queryable, dimension: string): Promise<((value: string) => string | null) | null> {
  if (dimension === 'kind') return (value) => kindLabel(value);
  if (dimension !== 'region') return null;
  const names = await latestRegionNames(q);
  return (value) => names[value] ?? null;
}

/** A group's label for charts and legends: its name where the grouping has names (kinds, regions), else its value. */
export async function groupLabels(q: Queryable, dimension: string): Promise<(value: string) => string> {
  const names = await groupNames(q, dimension);
  return (value) => names?.(value) ?? value;
}

/** The `by` parameter of the reports that group costs: one message for anything it is not. */
export function groupingParam(defaultValue: string) {
  return z
    .string()
    .max(259, { error: `by must be one of ${GROUPING_HELP} (a tag key of at most 255 characters)`, abort: true })
    .refine(isGrouping, { error: `by must be one of ${GROUPING_HELP}` })
    .default(defaultValue);
}

/** zod-friendly check that `by` names a grouping (before normalisation). */
export function isGrouping(by: string): boolean {
  if ((FIXED_DIMENSIONS as readonly string[]).includes(by)) return true;
  return by.startsWith(TAG_DIMENSION_PREFIX) && by.slice(TAG_DIMENSION_PREFIX.length).trim() !== '' && by.length <= 259;
}

/** Groupings of costs as reports offer them: the `by` parameter, its control, and the names of its groups. */
import { z } from 'zod';
import { latestDimensions } from '../../costing/current-costs.js';
import { FIXED_DIMENSIONS, GROUPING_HELP, isGrouping, TAG_DIMENSION_PREFIX } from '../../costing/pricing.js';
import type { Queryable } from '../../db/connection.js';
import type { Config } from '../../config/index.js';
import { normaliseTagKey } from '../../tags/normalise.js';
import type { Column, FilterField } from '../report.js';
import { dimensionLabel, kindLabel } from './format.js';
import { regionNames } from './regions.js';
import { latestSnapshotsSql } from '../../db/latest-snapshots.js';

export { GROUPING_HELP, isGrouping };

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

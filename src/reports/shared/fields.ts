import { PRICED_KINDS } from '../../costing/pricing.js';
import type { Queryable } from '../../db/connection.js';
import { latestSnapshots } from '../../db/latest-snapshots.js';
import { SNAPSHOT_KINDS, type SnapshotKind } from '../../db/schema.js';
import type { FilterField } from '../report.js';
import { kindLabel } from './format.js';
import { regionNames } from './regions.js';

/**
 * The project and region choices of a scope-filtered report: the scopes of the latest complete
 * snapshots of `kinds` (and the value asked for, even when no current scope has it), regions by
 * their name ("Region 38" when the API never named it).
 */
export async function scopeFilterFields(db: Queryable, params: { project?: number | undefined; region?: number | undefined }, kinds: readonly SnapshotKind[] = SNAPSHOT_KINDS): Promise<FilterField[]> {
  const scopes = await latestSnapshots(db, kinds);
  const known = (values: Array<number | null>, asked: number | undefined) =>
    [...new Set([...values, asked ?? null].filter((v): v is number => v !== null))].sort((a, b) => a - b);
  const projects = known(scopes.map((s) => s.project_id), params.project);
  const regions = known(scopes.map((s) => s.region_id), params.region);
  const names = await regionNames(db, regions);
  return [
    optionalSelect('project', 'Project', params.project?.toString(), projects.map((p) => [String(p), String(p)] as const), 'All projects'),
    optionalSelect('region', 'Region', params.region?.toString(), regions.map((r) => [String(r), names[String(r)] ?? `Region ${r}`] as const), 'All regions'),
  ];
}

/** A select that may be left unset: `anyLabel` (value '') first, then the options as [value, label]. */
export function optionalSelect(name: string, label: string, value: string | undefined, options: ReadonlyArray<readonly [string, string]>, anyLabel = 'Any'): FilterField {
  return { name, label, type: 'select', value: value ?? '', options: [{ value: '', label: anyLabel }, ...options.map(([v, l]) => ({ value: v, label: l }))] };
}

/** One text field per value of a repeated parameter (they combine with AND), and an empty one to add another. */
export function repeatedTextFields(name: string, label: string, values: readonly string[]): FilterField[] {
  return [
    ...values.map((value) => ({ name, label, type: 'text' as const, value })),
    { name, label: values.length > 0 ? `And ${label.charAt(0).toLowerCase()}${label.slice(1)}` : label, type: 'text', value: '' },
  ];
}

/** A choice among the priced kinds (instances, GPU clusters, Kubernetes clusters), or none. */
export function pricedKindSelect(name: string, label: string, value: string | undefined, anyLabel: string): FilterField {
  return optionalSelect(name, label, value, PRICED_KINDS.map((k) => [k, kindLabel(k)] as const), anyLabel);
}

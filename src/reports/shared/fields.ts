import { PRICED_KINDS } from '../../costing/pricing.js';
import type { FilterField } from '../report.js';
import { kindLabel } from './format.js';

/** The project and region number inputs, as every scope-filtered report shows them. */
export function scopeFilterFields(params: { project?: number | undefined; region?: number | undefined }): FilterField[] {
  return [
    { name: 'project', label: 'Project', type: 'number', value: params.project?.toString() ?? '' },
    { name: 'region', label: 'Region', type: 'number', value: params.region?.toString() ?? '' },
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

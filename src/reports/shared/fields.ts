import type { FilterField } from '../report.js';

/** The project and region number inputs, as every scope-filtered report shows them. */
export function scopeFilterFields(params: { project?: number | undefined; region?: number | undefined }): FilterField[] {
  return [
    { name: 'project', label: 'Project', type: 'number', value: params.project?.toString() ?? '' },
    { name: 'region', label: 'Region', type: 'number', value: params.region?.toString() ?? '' },
  ];
}

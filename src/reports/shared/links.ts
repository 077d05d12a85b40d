/**
 * Drill-down links: from a number in a cost report to the inventory rows behind it, with the
 * same filters expressed as inventory parameters.
 */
import { NO_VALUE, STATE_RUNNING, TAG_DIMENSION_PREFIX } from '../../costing/pricing.js';
import { UNTAGGED } from '../../db/schema.js';
import type { CostFilter } from '../../costing/current-costs.js';

export function appUrl(path: string, params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') search.append(k, String(v));
  const text = search.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * The inventory of priced resources behind one (group, currency) of a dimension: the currency
 * row links with `currency=`, the unpriced row with `priced=no`.
 */
export function inventoryHref(dimension: string, groupValue: string, currency: string | null, filter: CostFilter): string {
  const params: Record<string, string | number | undefined> = {
    kind: 'resources',
    type: filter.kind,
    project: filter.projectId,
    region: filter.regionId,
  };
  if (currency === null) params.priced = 'no';
  else params.currency = currency;
  if (dimension.startsWith(TAG_DIMENSION_PREFIX)) {
    const key = dimension.slice(TAG_DIMENSION_PREFIX.length);
    if (groupValue === UNTAGGED) params.missing_tag = key;
    else params.tag = `${key}:${groupValue}`;
  } else if (dimension === 'project' || dimension === 'region') {
    if (groupValue !== NO_VALUE) params[dimension] = groupValue;
  } else if (dimension === 'kind') {
    params.type = groupValue;
  } else if (dimension === 'flavor') {
    params.flavor = groupValue;
  } else if (dimension === 'state') {
    params.state = groupValue === STATE_RUNNING ? 'running' : 'stopped';
  }
  return appUrl('/reports/inventory', params);
}

/**
 * The cost report behind a figure of one period: grouped by the same dimension, and narrowed to
 * the group where the cost report can filter by it (project, region, kind); a tag value, a flavor
 * or a state is a row of the grouped report. `group` null: every group (an "other" slice, a day).
 */
export function costReportHref(dimension: string, group: string | null, period: { period?: string; from?: string; to?: string }): string {
  const params: Record<string, string | undefined> = { by: dimension, ...period };
  if (group !== null && group !== NO_VALUE && (dimension === 'project' || dimension === 'region' || dimension === 'kind')) params[dimension] = group;
  return appUrl('/reports/cost', params);
}

/** Link to the stop confirmation page of one instance (inventory rows; the page itself checks the role). */
export function stopConfirmPath(ref: { projectId: number; regionId: number; instanceId: string }): string {
  return appUrl('/actions/stop/confirm', { instance: `${ref.projectId}:${ref.regionId}:${ref.instanceId}` });
}

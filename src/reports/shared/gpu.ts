/**
 * The GPU columns of the spend reports (cost, monthly; docs/finance-numbers.md "GPU-hours"):
 * GPU-hours in the period, the cost per GPU-hour, and the hours of running resources whose GPU
 * count cannot be read from their flavor (unknown, never counted as 0). Sums in SQL.
 */
import type { Queryable } from '../../db/connection.js';
import { gpuCountSql } from '../../db/gpu-count.js';
import { compareDecimal } from '../../read-models/decimal.js';
import type { Column, Row } from '../report.js';
import { latestSnapshotIds, snapshotsByIdSql } from '../../db/latest-snapshots.js';
import { viewRowsSql } from '../../db/versions.js';

/** The three GPU columns; `sortable`: GPU-hours and cost per GPU-hour accept sort=. */
export function gpuColumns(sortable = false): Column[] {
  return [
    { key: 'gpu_hours', label: 'GPU-hours', kind: 'decimal', ...(sortable ? { sortable } : {}) },
    { key: 'cost_per_gpu_hour', label: 'Cost per GPU-hour', kind: 'money', currencyKey: 'currency', hourly: true, quotient: true, ...(sortable ? { sortable } : {}) },
    { key: 'gpu_unknown_hours', label: 'Hours with GPU count unknown', kind: 'decimal', secondary: true },
  ];
}

/**
 * The GPU cells of a row: GPU-hours shown as unknown (null), not 0, when every running resource of
 * the row has a GPU count that cannot be read (0 GPU-hours counted, some hours unknown).
 */
export function gpuCells(f: Record<string, unknown>): Row {
  const hours = f.gpu_hours as string | null;
  const unknown = f.gpu_unknown_hours as string | null;
  const allUnknown = hours !== null && unknown !== null && compareDecimal(hours, '0') === 0 && compareDecimal(unknown, '0') > 0;
  return { gpu_hours: allUnknown ? null : hours, cost_per_gpu_hour: f.cost_per_gpu_hour, gpu_unknown_hours: unknown };
}

/**
 * The notes on GPU counts: that GPU-hours are unknown before GPUs were counted, and the flavors
 * of the latest catalogues whose hardware description gives no GPU count.
 */
export async function gpuNotes(q: Queryable, anyUnknownPeriod: boolean): Promise<string[]> {
  const unreadable = await q.query<{ flavor: string; gpu: string | null }>(
    `select distinct coalesce(g.flavor_name, g.flavor_id) as flavor, g.hardware->>'gpu' as gpu
     from ${viewRowsSql('gpu_flavors', snapshotsByIdSql('$1'), ['flavor_id', 'flavor_name', 'hardware'])} g
     where ${gpuCountSql(`g.hardware->>'gpu'`)} is null
     order by 1`,
    [await latestSnapshotIds(q, ['flavor'])],
  );
  return [
    'GPU-hours = GPUs per unit (read from the flavor\'s hardware description, e.g. "8x Nvidia H100 80GB") x running units x hours; cost per GPU-hour = the spend of the resources with GPUs counted / their GPU-hours.',
    ...(unreadable.length > 0
      ? [`GPU count cannot be read for ${unreadable.map((u) => `${u.flavor} (${u.gpu ? `"${u.gpu}"` : 'no description'})`).join(', ')}: their hours are in "Hours with GPU count unknown", never counted as 0 GPUs.`]
      : []),
    ...(anyUnknownPeriod ? ['GPU-hours are empty (unknown) where the period includes days collected before cloudtally counted GPUs.'] : []),
  ];
}

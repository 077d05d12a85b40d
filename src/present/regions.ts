import type { PresentedColumn } from './column.js';

/** A column holding region ids (`region_id`, or `region` when it is a number). */
export function isRegionColumn(column: Pick<PresentedColumn, 'key' | 'kind'>): boolean {
  return column.kind === 'int' && (column.key === 'region_id' || column.key === 'region');
}

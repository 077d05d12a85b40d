/**
 * The allocated view of the monthly report (`allocation=on`, docs/allocation.md): per group,
 * currency and month the direct spend, what the configured rules moved in and out, and the total
 * after allocation, all in the currency's minor unit (see shared/allocation.ts for the rounding).
 */
import type { AllocationRule } from '../allocation-config.js';
import type { BucketCostRow } from '../costing/cost-over-time.js';
import { compareDecimal } from '../read-models/decimal.js';
import { minorUnit } from '../present/minor-units.js';
import type { Column, Row } from './report.js';
import { allocate } from './shared/allocation.js';
import { dimensionLabel } from './shared/format.js';

export interface AllocatedView {
  rows: Row[];
  notes: string[];
}

export function allocatedColumns(dimension: string, nameColumns: Column[]): Column[] {
  return [
    { key: 'group', label: dimensionLabel(dimension), kind: 'text' },
    ...nameColumns,
    { key: 'currency', label: 'Currency', kind: 'text' },
    { key: 'month', label: 'Month', kind: 'text' },
    { key: 'direct', label: 'Direct spend', kind: 'money', currencyKey: 'currency' },
    { key: 'allocated_in', label: 'Allocated in', kind: 'money', currencyKey: 'currency' },
    { key: 'allocated_out', label: 'Allocated out', kind: 'money', currencyKey: 'currency' },
    { key: 'total', label: 'Total after allocation', kind: 'money', currencyKey: 'currency' },
  ];
}

const describeRule = (r: AllocationRule) =>
  `"${r.source}" split ${r.method === 'fixed' ? `by fixed shares (${Object.entries(r.shares ?? {}).map(([g, p]) => `${g} ${p} %`).join(', ')})` : r.method === 'even' ? 'evenly' : 'in proportion to direct spend'}`;

/** Every row of the allocated view (groups x currencies x months are few: computed in memory). */
export function allocatedView(dimension: string, cells: readonly BucketCostRow[], allRules: readonly AllocationRule[], nameOf: ((g: string) => string | null) | null): AllocatedView {
  const rules = allRules.filter((r) => r.dimension === dimension);
  const blocks = new Map<string, Map<string, string>>();
  for (const c of cells) {
    if (c.currency === null || c.cost === null) continue;
    const key = `${c.currency}\u0000${c.bucket}`;
    const block = blocks.get(key) ?? new Map<string, string>();
    block.set(c.group_value, c.cost);
    blocks.set(key, block);
  }
  const rows: Row[] = [];
  const kept = new Set<string>();
  for (const [key, direct] of [...blocks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [currency, month] = key.split('\u0000') as [string, string];
    const result = allocate(direct, minorUnit(currency), rules);
    for (const g of result.unallocated) kept.add(`${g} (${currency}, ${month})`);
    const ordered = result.groups.sort((a, b) => compareDecimal(b.total, a.total) || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
    for (const g of ordered) {
      rows.push({
        group: g.group,
        ...(nameOf ? { group_name: nameOf(g.group) } : {}),
        currency,
        month,
        direct: g.direct,
        allocated_in: g.allocatedIn,
        allocated_out: g.allocatedOut,
        total: g.total,
      });
    }
  }
  const notes = [
    rules.length > 0
      ? `Shared costs allocated by the configured rules, in this order: ${rules.map(describeRule).join('; ')}. ` +
        'Amounts are in whole cents (the minor unit): each month\'s direct spend is rounded by largest remainder so that the groups add up to the month\'s rounded total, and every split is rounded the same way, so totals per currency are exactly preserved.'
      : `No allocation rule is configured for ${dimensionLabel(dimension)}: the totals equal the direct spend (rules are set in the configuration file, "allocation").`,
    ...(kept.size > 0 ? [`Not allocated (no group to receive it): ${[...kept].join(', ')}.`] : []),
  ];
  return { rows, notes };
}

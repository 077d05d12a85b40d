/**
 * The allocation columns of the monthly report (`allocation=on`, docs/allocation.md): the plain
 * layout stays as it is (group, currency, one column per month, total, ...) and gains, per month,
 * what the configured rules moved in and out and the group's figure after allocation, in the
 * currency's minor unit (see shared/allocation.ts for the rounding). Per month because the rules
 * split each month's spend on its own (proportional weights are that month's direct spend).
 */
import type { AllocationRule } from '../allocation-config.js';
import type { BucketCostRow } from '../costing/cost-over-time.js';
import type { Column, Row } from './report.js';
import { allocate, type AllocatedGroup } from './shared/allocation.js';
import { minorUnit } from '../present/minor-units.js';
import { dimensionLabel } from './shared/format.js';

export interface MonthlyAllocation {
  /** Per row (`rowKey(currency, group)`), per month: the group's allocated figures. */
  figures: Map<string, Map<string, AllocatedGroup>>;
  notes: string[];
}

export const rowKey = (currency: string, group: string) => `${currency}\u0000${group}`;

/** The row keys of one month's allocation columns. */
export function allocationKeys(month: string): { in: string; out: string; after: string } {
  return { in: `${month}_allocated_in`, out: `${month}_allocated_out`, after: `${month}_after_allocation` };
}

/**
 * After the plain layout's columns, per month: allocated in, allocated out (behind "More columns"
 * on the page) and the figure after allocation. A month without data has none (unknown, not 0).
 */
export function allocationColumns(months: readonly string[], known: (month: string) => boolean): Column[] {
  return months.flatMap((m): Column[] => {
    const keys = allocationKeys(m);
    const unknown = known(m) ? {} : { emptyText: 'no data' };
    const label = (what: string) => `${m} ${what}${known(m) ? '' : ' (no data)'}`;
    return [
      { key: keys.in, label: label('allocated in'), kind: 'money', currencyKey: 'currency', secondary: true, ...unknown },
      { key: keys.out, label: label('allocated out'), kind: 'money', currencyKey: 'currency', secondary: true, ...unknown },
      { key: keys.after, label: label('after allocation'), kind: 'money', currencyKey: 'currency', ...unknown },
    ];
  });
}

const describeRule = (r: AllocationRule) =>
  `"${r.source}" split ${r.method === 'fixed' ? `by fixed shares (${Object.entries(r.shares ?? {}).map(([g, p]) => `${g} ${p} %`).join(', ')})` : r.method === 'even' ? 'evenly' : 'in proportion to direct spend'}`;

/** Each month's and currency's direct spend split by the rules of `dimension` (few cells: in memory, in whole minor units). */
export function allocationByMonth(dimension: string, cells: readonly BucketCostRow[], allRules: readonly AllocationRule[]): MonthlyAllocation {
  const rules = allRules.filter((r) => r.dimension === dimension);
  const blocks = new Map<string, Map<string, string>>();
  for (const c of cells) {
    if (c.currency === null || c.cost === null) continue;
    const key = `${c.currency}\u0000${c.bucket}`;
    const block = blocks.get(key) ?? new Map<string, string>();
    block.set(c.group_value, c.cost);
    blocks.set(key, block);
  }
  const figures: MonthlyAllocation['figures'] = new Map();
  const kept: string[] = [];
  for (const [key, direct] of [...blocks.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const [currency, month] = key.split('\u0000') as [string, string];
    const result = allocate(direct, minorUnit(currency), rules);
    for (const g of result.unallocated) kept.push(`${g} (${currency}, ${month})`);
    for (const g of result.groups) {
      const row = figures.get(rowKey(currency, g.group)) ?? new Map<string, AllocatedGroup>();
      row.set(month, g);
      figures.set(rowKey(currency, g.group), row);
    }
  }
  const notes = [
    rules.length > 0
      ? `Shared costs allocated by the configured rules, in this order: ${rules.map(describeRule).join('; ')}. ` +
        'The allocation columns follow the months: per month allocated in, allocated out (under More columns) and the figure after allocation, in whole cents (the minor unit): ' +
        'each month\'s direct spend is rounded by largest remainder so that the groups add up to the month\'s rounded total, and every split is rounded the same way, so totals per currency are exactly preserved.'
      : `No allocation rule is configured for ${dimensionLabel(dimension)}: nothing is allocated, and the figures after allocation are the direct spend in whole cents (rules are set in the configuration file, "allocation").`,
    ...(kept.length > 0 ? [`Not allocated (no group to receive it): ${kept.join(', ')}.`] : []),
  ];
  return { figures, notes };
}

/** A plain row with its allocation cells: 0 in a month with data where the group had no figure, null in a month without data. */
export function withAllocation(row: Row, months: readonly string[], known: (month: string) => boolean, allocation: MonthlyAllocation): Row {
  const byMonth = allocation.figures.get(rowKey(String(row.currency), String(row.group)));
  const out: Row = { ...row };
  for (const m of months) {
    const keys = allocationKeys(m);
    const g = known(m) ? byMonth?.get(m) : undefined;
    const zero = known(m) ? '0' : null;
    out[keys.in] = g?.allocatedIn ?? zero;
    out[keys.out] = g?.allocatedOut ?? zero;
    out[keys.after] = g?.total ?? zero;
  }
  return out;
}

/** Groups that only receive (a fixed share to a group without spend in the period): no row in the plain layout. */
export function receiversWithoutRow(allocation: MonthlyAllocation, plainRows: readonly Row[]): Array<{ currency: string; group: string }> {
  const plain = new Set(plainRows.map((r) => rowKey(String(r.currency), String(r.group))));
  return [...allocation.figures.keys()]
    .filter((k) => !plain.has(k))
    .sort()
    .map((k) => {
      const [currency, group] = k.split('\u0000') as [string, string];
      return { currency, group };
    });
}

/** Every allocation key of these months (for the totals per currency). */
export function allAllocationKeys(months: readonly string[]): string[] {
  return months.flatMap((m) => Object.values(allocationKeys(m)));
}

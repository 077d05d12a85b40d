/**
 * The footing rule (present/footing.ts) on values computed by hand: largest remainder over the
 * exact values, to the rounded total, ties to the earlier value, unknown (null) values left out.
 */
import { describe, expect, it } from 'vitest';
import { footDecimals, footedAmount, footRows } from '../../src/present/footing.js';
import type { PresentedColumn } from '../../src/present/column.js';

describe('footDecimals', () => {
  it('gives the missing cent to the largest remainder', () => {
    // 224.224 + 224.224 + 220.887 = 669.335 -> 669.34; cut down: 224.22 + 224.22 + 220.88 = 669.32;
    // remainders .004, .004, .007: the two cents go to the third, then the first (tie: earlier).
    expect(footDecimals(['224.224', '224.224', '220.887'], 2)).toEqual(['224.23', '224.22', '220.89']);
  });

  it('takes a cent away where each rounded on its own would be too many', () => {
    // 3 x 730.735 = 2192.205 -> 2192.21; each alone would be 730.74 (2192.22).
    expect(footDecimals(['730.735', '730.735', '730.735'], 2)).toEqual(['730.74', '730.74', '730.73']);
  });

  it('works below zero and for currencies without minor unit', () => {
    // -1.004 - 1.004 - 1.004 = -3.012 -> -3.01; floors -1.01 x 3 = -3.03; remainders .006 each: +2 cents.
    expect(footDecimals(['-1.004', '-1.004', '-1.004'], 2)).toEqual(['-1.00', '-1.00', '-1.01']);
    // JPY: 100.5 + 200.5 = 301 (exact): 100 + 201 or 101 + 200; the tie goes to the first.
    expect(footDecimals(['100.5', '200.5'], 0)).toEqual(['101', '200']);
  });

  it('foots to a given total, and refuses a total the values cannot reach', () => {
    expect(footDecimals(['0.333', '0.333', '0.334'], 2, '1.000')).toEqual(['0.33', '0.33', '0.34']);
    expect(footDecimals(['0.333', '0.333', '0.334'], 2, '1.05')).toBeNull();
  });
});

describe('footRows', () => {
  const columns: PresentedColumn[] = [
    { key: 'group', label: 'Group', kind: 'text' },
    { key: 'currency', label: 'Currency', kind: 'text' },
    { key: 'cost', label: 'Cost', kind: 'money', currencyKey: 'currency' },
    { key: 'per_gpu_hour', label: 'Per GPU-hour', kind: 'money', currencyKey: 'currency', hourly: true, quotient: true },
  ];

  it('foots per currency to its totals row, leaves unknown cells and quotients alone, and keeps the exact values', () => {
    const rows = [
      { group: 'a', currency: 'EUR', cost: '0.335', per_gpu_hour: '1.00005' },
      { group: 'b', currency: 'EUR', cost: null, per_gpu_hour: null },
      { group: 'c', currency: 'EUR', cost: '0.335', per_gpu_hour: '1.00005' },
      { group: 'x', currency: 'USD', cost: '0.335', per_gpu_hour: null },
    ];
    const footed = footRows(rows, columns, [{ group: 'Total', currency: 'EUR', cost: '0.67' }, { group: 'Total', currency: 'USD', cost: '0.335' }]);
    expect(footed.map((r) => footedAmount(r, 'cost'))).toEqual(['0.34', undefined, '0.33', '0.34']);
    expect(footed.map((r) => footedAmount(r, 'per_gpu_hour'))).toEqual([undefined, undefined, undefined, undefined]);
    // The exact values are untouched, and JSON does not see the footed ones.
    expect(JSON.parse(JSON.stringify(footed))).toEqual(rows);
  });
});

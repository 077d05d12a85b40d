/**
 * Shared-cost allocation (docs/allocation.md) of one month's spend in one currency, in whole
 * minor units (cents) so that every figure adds up exactly:
 *
 * 1. The direct spend of each group (exact decimals) is rounded by largest remainder: each is cut
 *    down to the cent, and the cents missing to the month's total (rounded half away from zero)
 *    go one each to the groups with the largest cut-off remainders. The groups' cents then add up
 *    to the rounded total, which allocation never changes.
 * 2. The rules apply in order. A rule moves everything its source holds (its direct spend plus
 *    what earlier rules gave it) to the receivers: shares computed exactly from the weights
 *    (direct spend for `proportional`, 1 each for `even`, the percentages for `fixed`), and the
 *    whole cents distributed by largest remainder again, so the shares add up to the amount.
 *
 * Receivers of `proportional` and `even` are the other groups with direct spend above zero in that
 * month and currency, except sources already split (they stay empty). A source with nobody to
 * receive keeps its spend (reported as not allocated). Pure arithmetic on BigInt: no floats.
 */
import type { AllocationRule } from '../../allocation-config.js';
import { decimalScale, decimalToUnits, unitsToDecimal } from '../../read-models/decimal.js';
import { floorDiv, footDecimals } from '../../present/footing.js';

export interface AllocatedGroup {
  group: string;
  /** Amounts in the currency's minor unit, as decimal text with exactly that many decimals. */
  direct: string;
  allocatedIn: string;
  allocatedOut: string;
  total: string;
}

export interface AllocationResult {
  groups: AllocatedGroup[];
  /** Sources that had spend but no receiver (kept their spend). */
  unallocated: string[];
}

/**
 * Splits `amount` whole units over `weights` (non-negative, positive sum) by largest remainder:
 * each share is amount x weight / sum cut down to a unit, the units left over go one each to the
 * largest remainders (ties: the order of `weights`, which callers sort by group name).
 */
export function largestRemainder(amount: bigint, weights: readonly bigint[]): bigint[] {
  const sum = weights.reduce((a, b) => a + b, 0n);
  if (sum <= 0n) throw new Error('largestRemainder: weights must have a positive sum');
  const shares = weights.map((w) => floorDiv(amount * w, sum));
  const remainders = weights.map((w, i) => amount * w - shares[i]! * sum);
  let left = amount - shares.reduce((a, b) => a + b, 0n);
  const order = weights.map((_, i) => i).sort((a, b) => (remainders[b]! > remainders[a]! ? 1 : remainders[b]! < remainders[a]! ? -1 : a - b));
  for (let k = 0; left > 0n; k = (k + 1) % order.length, left--) shares[order[k]!]! += 1n;
  return shares;
}

/**
 * Allocates one month and currency: `direct` maps each group to its exact spend (decimal text),
 * `digits` is the currency's minor unit, `rules` those of this grouping in configuration order.
 */
export function allocate(direct: ReadonlyMap<string, string>, digits: number, rules: readonly AllocationRule[]): AllocationResult {
  const names = [...direct.keys()].sort();
  const scale = Math.max(digits, ...names.map((g) => decimalScale(direct.get(g)!)));
  const exact = new Map(names.map((g) => [g, decimalToUnits(direct.get(g)!, scale)]));
  // Step 1: direct spend in whole units adding up to the rounded total (the footing of every rounded table).
  const footed = footDecimals(names.map((g) => direct.get(g)!), digits);
  if (!footed) throw new Error('allocate: the direct spend does not foot');
  const cut = footed.map((text) => decimalToUnits(text, digits));
  const units = new Map<string, { direct: bigint; in: bigint; out: bigint }>(names.map((g, i) => [g, { direct: cut[i]!, in: 0n, out: 0n }]));

  const emptied = new Set<string>();
  const unallocated: string[] = [];
  for (const rule of rules) {
    const source = units.get(rule.source);
    emptied.add(rule.source);
    if (!source) continue;
    const amount = source.direct + source.in - source.out;
    if (amount === 0n) continue;
    let receivers: Array<[string, bigint]>;
    if (rule.method === 'fixed') {
      const pctScale = Math.max(...Object.values(rule.shares ?? {}).map(decimalScale));
      receivers = Object.entries(rule.shares ?? {})
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([g, pct]) => [g, decimalToUnits(pct, pctScale)]);
    } else {
      receivers = names
        .filter((g) => g !== rule.source && !emptied.has(g) && exact.get(g)! > 0n)
        .map((g) => [g, rule.method === 'even' ? 1n : exact.get(g)!]);
    }
    if (receivers.length === 0) {
      unallocated.push(rule.source);
      continue;
    }
    const shares = largestRemainder(amount, receivers.map(([, w]) => w));
    source.out += amount;
    receivers.forEach(([g], i) => {
      const cell = units.get(g) ?? { direct: 0n, in: 0n, out: 0n };
      cell.in += shares[i]!;
      units.set(g, cell);
    });
  }
  const groups = [...units.entries()].map(([group, u]) => ({
    group,
    direct: unitsToDecimal(u.direct, digits),
    allocatedIn: unitsToDecimal(u.in, digits),
    allocatedOut: unitsToDecimal(u.out, digits),
    total: unitsToDecimal(u.direct + u.in - u.out, digits),
  }));
  return { groups, unallocated };
}

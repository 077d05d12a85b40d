/**
 * The `allocation` rules of the configuration file (docs/allocation.md): costs of a source group
 * split across the groups of the same grouping, `proportional` to their direct spend, `even`ly,
 * or by `fixed` percentages. Rules apply in order; each source is split once.
 *
 * Cross-dimension rules (from a project into teams) are refused: a project's spend has no place
 * in a table grouped by team, so `to` must be the grouping of `from.by`.
 */
import { z } from 'zod';
import { addDecimal, compareDecimal } from './read-models/decimal.js';

export const ALLOCATION_METHODS = ['proportional', 'even', 'fixed'] as const;
export type AllocationMethod = (typeof ALLOCATION_METHODS)[number];

export interface AllocationRule {
  /** The grouping (stored dimension: `tag:<normalised key>`, project, region, kind, flavor, state). */
  readonly dimension: string;
  /** The source group (normalised like the collected values). */
  readonly source: string;
  readonly method: AllocationMethod;
  /** fixed only: group -> percent (exact decimal text), summing to exactly 100. */
  readonly shares: Readonly<Record<string, string>> | null;
}

const name = z.string().trim().min(1, { error: 'must not be empty' }).max(259, { error: 'must be at most 259 characters' });
const PERCENT = /^\d{1,3}(\.\d{1,6})?$/;
const percent = z
  .union([z.string(), z.number()])
  .transform((v) => String(v).trim())
  .refine((v) => PERCENT.test(v) && compareDecimal(v, '0') > 0 && compareDecimal(v, '100') <= 0, {
    error: 'must be a percentage above 0 and at most 100, as a plain decimal ("12.5")',
  });

export const AllocationRuleSchema = z.strictObject({
  from: z.strictObject({ by: name, value: name }),
  to: name,
  method: z.enum(ALLOCATION_METHODS, { error: `must be one of ${ALLOCATION_METHODS.join(', ')}` }),
  shares: z.record(name, percent).optional(),
});
export type RawAllocationRule = z.infer<typeof AllocationRuleSchema>;

export interface AllocationNormaliser {
  /** A grouping as written (`tag:Team`) to the stored dimension, or null when it is none. */
  dimension(by: string): string | null;
  /** A group value as written to the stored value of that dimension. */
  value(dimension: string, value: string): string;
}

/**
 * Validates and normalises the rules in order; every problem is reported with its path. A rule
 * whose source was already split, or a fixed share naming an earlier source (already emptied),
 * is refused: each source is split once.
 */
export function allocationRules(
  raw: readonly RawAllocationRule[],
  normalise: AllocationNormaliser,
  problems: Array<{ path: string; message: string }>,
): AllocationRule[] {
  const rules: AllocationRule[] = [];
  const split = new Map<string, number>();
  raw.forEach((rule, i) => {
    const at = `allocation[${i}]`;
    const dimension = normalise.dimension(rule.from.by);
    if (dimension === null) {
      problems.push({ path: `${at}.from.by`, message: 'must be one of project, region, kind, flavor, state or tag:<key>' });
      return;
    }
    if (normalise.dimension(rule.to) !== dimension) {
      problems.push({
        path: `${at}.to`,
        message: `must be the grouping of from.by ("${rule.from.by}"): costs are split across the groups of the same grouping (no cross-grouping allocation)`,
      });
      return;
    }
    const source = normalise.value(dimension, rule.from.value);
    const key = `${dimension}\u0000${source}`;
    const earlier = split.get(key);
    if (earlier !== undefined) {
      problems.push({ path: `${at}.from`, message: `"${source}" of ${dimension} is already split by allocation[${earlier}]: each source is split once` });
      return;
    }
    let shares: Record<string, string> | null = null;
    if (rule.method === 'fixed') {
      if (!rule.shares || Object.keys(rule.shares).length === 0) {
        problems.push({ path: `${at}.shares`, message: 'is required with method "fixed": {"group": percent, ...} summing to 100' });
        return;
      }
      shares = {};
      let sum = '0';
      for (const [group, pct] of Object.entries(rule.shares)) {
        const value = normalise.value(dimension, group);
        if (value === source) problems.push({ path: `${at}.shares.${group}`, message: 'is the source itself: a source cannot keep a share' });
        const emptied = split.get(`${dimension}\u0000${value}`);
        if (emptied !== undefined) problems.push({ path: `${at}.shares.${group}`, message: `was split by allocation[${emptied}] already and cannot receive costs` });
        if (Object.hasOwn(shares, value)) problems.push({ path: `${at}.shares.${group}`, message: `names the group "${value}" twice (after normalisation)` });
        shares[value] = pct;
        sum = addDecimal(sum, pct);
      }
      if (compareDecimal(sum, '100') !== 0) problems.push({ path: `${at}.shares`, message: `must sum to exactly 100 (got ${sum})` });
    } else if (rule.shares !== undefined) {
      problems.push({ path: `${at}.shares`, message: `is only for method "fixed" (this rule is "${rule.method}")` });
      return;
    }
    split.set(key, i);
    rules.push({ dimension, source, method: rule.method, shares });
  });
  return rules;
}

/** The demo's rule (simulator mode without a configuration file): untagged spend shared by the teams. */
export const DEMO_ALLOCATION: readonly RawAllocationRule[] = [{ from: { by: 'tag:team', value: '(untagged)' }, to: 'tag:team', method: 'proportional' }];

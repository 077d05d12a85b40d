/**
 * The shared-cost allocation rules (src/allocation-config.ts), their groupings and values normalised
 * like the collected tags. The only config module that needs the cost model's dimensions.
 */
import { z } from 'zod';
import { AllocationRuleSchema, allocationRules, DEMO_ALLOCATION, type AllocationNormaliser, type AllocationRule } from '../allocation-config.js';
import { FIXED_DIMENSIONS, TAG_DIMENSION_PREFIX } from '../costing/pricing.js';
import { normaliseTagKey, normaliseTagValue, type TagRules } from '../tags/normalise.js';
import type { ConfigProblem } from './problems.js';

export const AllocationRulesSchema = z.array(AllocationRuleSchema);

/** The file's rules; without any, the demo's rule when `demo` is set, else none. */
export function allocationSettings(raw: z.output<typeof AllocationRulesSchema> | undefined, demo: boolean, rules: TagRules, problems: ConfigProblem[]): AllocationRule[] {
  return allocationRules(raw ?? (demo ? DEMO_ALLOCATION : []), allocationNormaliser(rules), problems);
}

/** Groupings and group values of allocation rules, normalised like the collected tags. */
function allocationNormaliser(rules: TagRules): AllocationNormaliser {
  return {
    dimension: (by: string): string | null => {
      if ((FIXED_DIMENSIONS as readonly string[]).includes(by)) return by;
      const key = by.startsWith(TAG_DIMENSION_PREFIX) ? by.slice(TAG_DIMENSION_PREFIX.length).trim() : '';
      return key !== '' ? TAG_DIMENSION_PREFIX + normaliseTagKey(key, rules) : null;
    },
    value: (dimension: string, value: string): string =>
      dimension.startsWith(TAG_DIMENSION_PREFIX) ? normaliseTagValue(dimension.slice(TAG_DIMENSION_PREFIX.length), value, rules) : value.trim(),
  };
}

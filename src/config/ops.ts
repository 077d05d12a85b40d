/** Who may read /metrics, and the groupings of its cost gauges. */
import { z } from 'zod';
import { GROUPING_HELP, isGrouping } from '../costing/pricing.js';
import type { Env } from './env.js';
import type { ConfigProblem } from './problems.js';
import type { MetricsSettings } from './types.js';

export const METRICS_TOKEN_MIN_LENGTH = 16;

/** Groupings the cost gauges have unless the file says otherwise. */
export const DEFAULT_COST_GROUPINGS = ['tag:team', 'project'];

/**
 * `metrics` in the config file: the groupings of `cloudtally_cost_per_hour` (each one the cost
 * report accepts as `by`). Every group is a series, so they are few and named once each.
 */
export const MetricsFileSchema = z.strictObject({
  cost_groupings: z
    .array(z.string().refine(isGrouping, { error: `must be one of ${GROUPING_HELP}` }))
    .max(10)
    .refine((list) => new Set(list).size === list.length, { error: 'names a grouping twice' })
    .default(DEFAULT_COST_GROUPINGS),
});
type MetricsFile = z.infer<typeof MetricsFileSchema>;

/**
 * /metrics access. Default: 'token' when a token is given, else 'open' — the numbers carry no
 * secrets (the cost gauges do show spend per group), and Prometheus usually scrapes from inside the network; set 'token' or
 * 'off' when the port is reachable from where it should not be.
 */
export function metricsSettings(vars: Env, invalid: Set<string>, file: MetricsFile | undefined, problems: ConfigProblem[]): MetricsSettings {
  return { ...metricsAccess(vars, invalid, problems), costGroupings: file?.cost_groupings ?? DEFAULT_COST_GROUPINGS };
}

function metricsAccess(vars: Env, invalid: Set<string>, problems: ConfigProblem[]): Pick<MetricsSettings, 'access' | 'token'> {
  const token = vars.CLOUDTALLY_METRICS_TOKEN ?? null;
  const access = vars.CLOUDTALLY_METRICS_ACCESS ?? (token !== null ? 'token' : 'open');
  if (invalid.has('CLOUDTALLY_METRICS_ACCESS')) return { access: 'off', token: null };
  if (access === 'token') {
    if (token === null) {
      problems.push({ path: 'CLOUDTALLY_METRICS_TOKEN', message: 'is required when CLOUDTALLY_METRICS_ACCESS is token' });
    } else if (token.length < METRICS_TOKEN_MIN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
      problems.push({
        path: 'CLOUDTALLY_METRICS_TOKEN',
        message: `must be at least ${METRICS_TOKEN_MIN_LENGTH} printable ASCII characters without spaces`,
      });
    }
    return { access, token };
  }
  if (token !== null) {
    problems.push({
      path: 'CLOUDTALLY_METRICS_TOKEN',
      message: `is set but CLOUDTALLY_METRICS_ACCESS is ${access}: the token would be ignored (unset one of them)`,
    });
  }
  return { access, token: null };
}

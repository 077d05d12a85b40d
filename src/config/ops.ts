/** Who may read /metrics. */
import type { Env } from './env.js';
import type { ConfigProblem } from './problems.js';
import type { MetricsSettings } from './types.js';

export const METRICS_TOKEN_MIN_LENGTH = 16;

/**
 * /metrics access. Default: 'token' when a token is given, else 'open' — the numbers carry no
 * secrets and no money, and Prometheus usually scrapes from inside the network; set 'token' or
 * 'off' when the port is reachable from where it should not be.
 */
export function metricsSettings(vars: Env, invalid: Set<string>, problems: ConfigProblem[]): MetricsSettings {
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

/** Which cloud: the real API (CLOUDTALLY_API_URL and CLOUDTALLY_API_KEY) or the built-in simulator. */
import { join } from 'node:path';
import type { Env } from './env.js';
import type { ConfigProblem } from './problems.js';
import type { CloudConfig } from './types.js';

/**
 * Hours between the steps of the demo history that simulator mode backfills into an empty
 * database (the demo's gap cap, src/demo/config.ts, is an hour more, so it integrates without gaps).
 */
export const DEMO_HISTORY_STEP_HOURS = 6;

export function cloudConfig(vars: Env, invalid: Set<string>, problems: ConfigProblem[]): CloudConfig | null {
  if (invalid.has('CLOUDTALLY_API_URL') || invalid.has('CLOUDTALLY_API_KEY')) return null;
  const url = vars.CLOUDTALLY_API_URL;
  const key = vars.CLOUDTALLY_API_KEY;
  if (url && key) return { mode: 'remote', baseUrl: url, apiKey: key };
  if (!url && !key) return { mode: 'simulator' };
  const [missing, present] = url ? ['CLOUDTALLY_API_KEY', 'CLOUDTALLY_API_URL'] : ['CLOUDTALLY_API_URL', 'CLOUDTALLY_API_KEY'];
  problems.push({
    path: missing,
    message: `is required when ${present} is set (set both for a real cloud, neither for the built-in simulator)`,
  });
  return null;
}

export function demoStateFile(dataDir: string): string | null {
  return dataDir === 'memory://' || dataDir === '' ? null : join(dataDir, 'demo-simulator.json');
}

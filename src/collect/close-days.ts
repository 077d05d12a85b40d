/**
 * Closing complete days: after each collection run and at service start-up, every complete UTC
 * day gets its cost_daily rows (costing/derive/closed-days), so reports over periods read
 * daily aggregates instead of integrating hourly rollups for all but the last day or two. A
 * failure is logged and never fails the run: reports integrate unclosed days live, with the same
 * figures.
 */
import { closeCompleteDays } from '../costing/derive/closed-days.js';
import { gapCapsFor } from '../costing/gap-caps.js';
import type { CollectorDeps } from './types.js';

export async function closeDays(deps: Pick<CollectorDeps, 'db' | 'config' | 'logger'>, now: Date = new Date(), signal?: AbortSignal): Promise<string[]> {
  const started = performance.now();
  try {
    // The same gap caps as the reports, so a closed day equals what they would integrate live.
    const days = await closeCompleteDays(deps.db, { now, maxGapHours: gapCapsFor(deps.config), signal });
    if (days.length > 0) deps.logger.info({ days: days.length, first: days[0], last: days[days.length - 1], durationMs: Math.round(performance.now() - started) }, 'daily costs closed');
    return days;
  } catch (err) {
    deps.logger.error({ err }, 'closing complete days failed (reports integrate them live meanwhile)');
    return [];
  }
}

/**
 * The demo's own history (collections every 6 h under a 6 h cap, each snapshot taken a little
 * after its step's instant) is fully covered: no false data gaps on the anomalies page, and the
 * cost report calls the same days covered in full.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';

const NOW = new Date('2025-06-15T12:00:00Z');

describe('the demo history', () => {
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
  }, 60_000);

  it('has no false data gaps, and its complete days are fully covered', async () => {
    const config = loadConfig(
      { CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_CONFIG: 'demo.json' },
      { readFile: () => JSON.stringify({ collect_on_start: false }) },
    );
    service = await startService(config, silentLogger(), { demoHistoryDays: 3, now: () => NOW });
    await service.ready;
    const get = async (path: string) => (await (await fetch(`${service!.url}${path}`)).json()) as { rows: Array<Record<string, unknown>>; coverage: { covered_hours: number; period_hours: number } };
    const anomalies = await get('/api/reports/anomalies?by=tag%3Ateam&from=2025-06-13&to=2025-06-14');
    expect(anomalies.rows.filter((r) => r.kind === 'data gap')).toEqual([]);
    const cost = await get('/api/reports/cost?by=tag%3Ateam&from=2025-06-13&to=2025-06-14');
    expect(cost.coverage).toMatchObject({ covered_hours: 48, period_hours: 48 });
  }, 180_000);
});

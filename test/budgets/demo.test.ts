/**
 * The demo (simulator mode, no budgets configured) ships with three budgets (src/demo/budgets.ts).
 * Two days of demo history up to a fixed now, over real HTTP (the full history, with one budget at
 * risk, is test/main/demo-finance.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';

const NOW = new Date('2025-06-15T12:00:00Z');

describe('the demo budgets', () => {
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
  }, 60_000);

  it('shows one budget over and two on track (no forecast after two days)', async () => {
    const config = loadConfig(
      { CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_CONFIG: 'demo.json' },
      { readFile: () => JSON.stringify({ collect_on_start: false }) },
    );
    expect(config.budgets).toBeNull();
    service = await startService(config, silentLogger(), { demoHistoryDays: 2, now: () => NOW });
    await service.ready;
    const body = (await (await fetch(`${service.url}/api/reports/budgets`)).json()) as { rows: Array<Record<string, string>>; charts: unknown[] };
    // Team ml runs about EUR 506 an hour: two days pass EUR 5,000; the platform project's EUR
    // 99,538 a month is far from EUR 150,000 after two days.
    expect(body.rows.map((r) => [r.budget, r.covers, r.currency, r.amount, r.status])).toEqual([
      ['ML team (demo)', 'Tag team = ml', 'EUR', '5000', 'over'],
      ['Platform project (demo)', 'Project = 380102', 'EUR', '150000', 'on track'],
      // Sized halfway between the spend so far and the month's forecast (6,698.10 x (14.5 + 15.5 / 2)
      // = 149,032.73, rounded to 100); two days of history give no forecast yet, so on track.
      ['Inference project (demo)', 'Project = 380103', 'USD', '149000', 'on track'],
    ]);
    expect(body.charts).toHaveLength(3);
  }, 180_000);
});

import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';

/**
 * While `npm start` builds the demo history, every page says so and how far it is, instead of
 * showing figures that grow with no word. A slow simulator (SIM_LATENCY_MS) holds the backfill.
 */
describe('the demo history being built', () => {
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
  }, 60_000);

  it('shows "Building demo history: n of N collections" on every page until it is done', async () => {
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', SIM_LATENCY_MS: '150' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 1 }); // 4 steps of 6 h
    const banner = async (path: string) => {
      const html = await (await fetch(`${service!.url}${path}`)).text();
      return /Building demo history: (\d) of (\d) collections/.exec(html)?.slice(1).map(Number) ?? null;
    };

    const seen = new Set<number>();
    // Read pages while it runs; the backfill goes on regardless (no timing is asserted).
    for (let i = 0; seen.size < 2 && i < 2_000; i++) {
      const progress = await banner(i % 2 === 0 ? '/reports/overview' : '/reports/inventory?kind=instances');
      if (progress === null) break;
      expect(progress[1]).toBe(4);
      seen.add(progress[0]!);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen.size, 'the banner showed the backfill advancing').toBe(2);
    expect([...seen].every((done) => done >= 0 && done <= 4)).toBe(true);

    await service.ready;
    const after = await (await fetch(`${service.url}/reports/overview`)).text();
    expect(after).not.toContain('Building demo history');
    expect(after).not.toContain('Preparing the demo');
  }, 180_000);
});

/**
 * `npm start` and `npm run collect` build the client, the simulator, the scopes and the settings
 * of a run in one place (src/connect-cloud.ts): with the same configuration they collect the same
 * scopes, image ids and free features (each logs what it will collect, "collection scopes", which
 * is what the first test compares), and close days under the same gap caps (the second test runs
 * both on one database and compares cost_daily).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/commands/collect.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/logger.js';
import { openDatabase } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { startService } from '../../src/main.js';

const CONFIGURED_IMAGE = '3f0c9a52-6a3e-4c1f-9d55-2b7a1e0c4d11';

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const scopes = () =>
    lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'collection scopes')
      .map(({ scopes, securityGroups, imageIds, freeFeatureIds }) => ({ scopes, securityGroups, imageIds, freeFeatureIds }));
  return { logger: createLogger({ level: 'info', destination }), scopes };
}

describe('one wiring place for start and collect', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ct-wiring-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('collects the same scopes and image ids (configured ones kept beside the demo company\'s) in both', async () => {
    const file = join(dir, 'cloudtally.json');
    writeFileSync(file, JSON.stringify({ image_ids: [CONFIGURED_IMAGE], collect_on_start: false }));
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: join(dir, 'data'), CLOUDTALLY_CONFIG: file, PORT: '0', SIM_TASK_DELAY_MS: '20' });

    const byCollect = capturingLogger();
    await expect(collect(config, byCollect.logger)).resolves.toBe(0);

    const byStart = capturingLogger();
    const service = await startService(config, byStart.logger, { demoHistoryDays: 0 });
    await service.ready;
    await service.stop();

    const [collected] = byCollect.scopes();
    const [started] = byStart.scopes();
    expect(collected).toBeDefined();
    expect(started).toEqual(collected);
    expect((collected!.scopes as string[]).length).toBeGreaterThan(1);
    // The configured image beside the demo company's own.
    expect(collected!.imageIds).toContain(CONFIGURED_IMAGE);
    expect((collected!.imageIds as string[]).length).toBeGreaterThan(1);
  }, 240_000);

  it('closes the demo\'s days alike: `npm run collect` after `npm start` leaves cost_daily unchanged', async () => {
    const dataDir = join(dir, 'one-database');
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: dataDir, PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_CONFIG: 'demo.json' }, { readFile: () => JSON.stringify({ collect_on_start: false }) });
    // Two days of demo history, collected every 6 hours: the service closes the day before yesterday at least.
    const service = await startService(config, silentLogger(), { demoHistoryDays: 2 });
    await service.ready;
    await service.stop();
    const byService = await costDaily(dataDir);
    expect(byService.length).toBeGreaterThan(0);

    await expect(collect(config, silentLogger())).resolves.toBe(0);
    const afterCollect = await costDaily(dataDir);
    // Every day the service closed is still there with the same figures (the collect may close more).
    const days = new Set(byService.map((r) => r.day));
    expect(afterCollect.filter((r) => days.has(r.day))).toEqual(byService);
  }, 240_000);
});

async function costDaily(dataDir: string): Promise<Array<Record<string, string>>> {
  const db = await openDatabase({ driver: 'pglite', dataDir });
  try {
    return await db.query<Record<string, string>>(
      `select day::text, kind, scope_key, dimension, group_value, coalesce(currency, '') as currency, price_seconds::text, resource_seconds::text
       from cost_daily order by day, kind, scope_key, dimension, group_value, currency`,
    );
  } finally {
    await db.close();
  }
}

/**
 * A demo per database: PGlite in a folder and a Postgres database started with the same folder as
 * CLOUDTALLY_DATA_DIR each keep their own demo company (in their own database), so starting one
 * never advances the other's company or invents history for it (needs Postgres, TEST_DATABASE_URL:
 * two PGlite databases cannot share one folder). A company file an older version left in a PGlite
 * folder is read once into that database.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/commands/collect.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { fileStore, startSimulator } from '../../src/simulator/index.js';
import { freshPostgresDatabase } from '../helpers/databases.js';

const postgresUrl = process.env.TEST_DATABASE_URL;

interface Counted {
  summary: Array<{ label: string; value: unknown }>;
}

describe.skipIf(!postgresUrl)('two databases started from one folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ct-demo-per-db-'));
  let postgres: { url: string; drop(): Promise<void> } | undefined;
  let service: RunningService | undefined;

  afterAll(async () => {
    await service?.stop();
    await postgres?.drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Starts on PGlite in the folder, or on Postgres with the same folder; returns what the simulator logged. */
  async function start(on: 'pglite' | 'postgres', historyDays: number): Promise<string[]> {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const env = on === 'postgres' ? { DATABASE_URL: postgres!.url } : {};
    service = await startService(loadConfig({ CLOUDTALLY_DATA_DIR: dir, PORT: '0', SIM_TASK_DELAY_MS: '20', ...env }), logger, { demoHistoryDays: historyDays });
    await service.ready;
    await service.collection.idle();
    return lines.map((l) => (JSON.parse(l) as { msg: string }).msg).filter((m) => /demo company/.test(m));
  }
  async function stop(): Promise<void> {
    await service?.stop();
    service = undefined;
  }
  async function changesSince(since: Date, kind: string): Promise<unknown[]> {
    const res = await fetch(`${service!.url}/api/reports/changes?kind=${kind}&since=${encodeURIComponent(since.toISOString())}`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Counted;
    return ['Added', 'Removed', 'Changed'].map((label) => body.summary.find((s) => s.label === label)?.value);
  }

  it('never shares or advances the other\'s demo company', async () => {
    postgres = await freshPostgresDatabase(postgresUrl!);
    expect(await start('pglite', 1)).toEqual(['no saved demo company: a new one is generated and saved']);
    await stop();
    const pgliteStopped = new Date();

    // Postgres from the same folder: its own, new company, whose history (clusters added,
    // instances stopped, tags fixed) is built in its own database.
    expect(await start('postgres', 2)).toEqual(['no saved demo company: a new one is generated and saved']);
    await stop();
    expect(await collect(loadConfig({ CLOUDTALLY_DATA_DIR: dir, DATABASE_URL: postgres.url, LOG_LEVEL: 'silent' }), silentLogger())).toBe(0);

    // PGlite again: the company it left, unchanged by what ran on Postgres.
    expect(await start('pglite', 1)).toEqual(['demo company restored: the simulator continues where it stopped']);
    for (const kind of ['instances', 'clusters', 'servers']) expect(await changesSince(pgliteStopped, kind), kind).toEqual([0, 0, 0]);
  }, 300_000);
});

describe('a demo company an older version left in a PGlite folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ct-demo-legacy-'));
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('is read once into the folder\'s database, so the demo goes on where it was', async () => {
    // The file as older versions wrote it: the company with one instance stopped.
    const sim = await startSimulator({ port: 0 }, { store: fileStore(join(dir, 'demo-simulator.json')) });
    const [scope] = sim.state.scopes();
    const victim = sim.state.instances(scope!.project_id, scope!.region_id).find((i) => i.status === 'ACTIVE')!;
    sim.state.stopInstance(scope!.project_id, scope!.region_id, victim.id);
    await sim.close();

    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: dir, PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_CONFIG: 'demo.json' }, { readFile: () => '{}' });
    service = await startService(config, logger, { demoHistoryDays: 0 });
    await service.ready;
    await service.collection.idle();
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('demo company restored: the simulator continues where it stopped');
    const res = await fetch(`${service.url}/api/reports/inventory?kind=instances&q=${victim.id}`);
    const body = (await res.json()) as { rows: Array<{ resource_id: string; status: string }> };
    expect(body.rows.map((r) => [r.resource_id, r.status])).toEqual([[victim.id, 'SHUTOFF']]);
    const [saved] = await service.database.query<{ n: number }>('select count(*)::int as n from demo_company');
    expect(saved!.n).toBe(1);
  }, 180_000);
});

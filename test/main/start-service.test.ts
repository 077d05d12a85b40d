import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { spawnCli } from '../helpers/cli.js';
import { listenOnFreePort } from '../helpers/listen.js';

/**
 * `npm start` on embedded defaults, in-process: PGlite in memory, the built-in simulator with a
 * day of demo history, the first collection, the web app. What a newcomer sees must be there.
 */
describe('startService on embedded defaults', () => {
  let service: RunningService;

  beforeAll(async () => {
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 1 });
    await service.ready;
    await service.collection.idle();
  }, 180_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('says it runs on demo data and serves the overview with numbers from the collection', async () => {
    expect(service.demo).toBe(true);
    const page = await fetch(`${service.url}/reports/overview`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Demo data from the built-in simulator');
    expect(html).toContain('Local-only mode');
    const api = (await (await fetch(`${service.url}/api/reports/overview`)).json()) as { summary: Array<{ label: string; value: unknown }> };
    const runRate = api.summary.find((s) => /Run-rate per hour \(EUR\)/.test(s.label));
    expect(Number(runRate?.value)).toBeGreaterThan(0);
  });

  it('has history: a day of backfilled snapshots before the start-up collection', async () => {
    const rows = await service.database.query(
      "SELECT count(DISTINCT run_id)::int AS runs, min(taken_at) AS first FROM snapshots WHERE kind = 'instance' AND complete",
      [],
    );
    const { runs, first } = rows[0] as { runs: number; first: Date };
    expect(runs).toBeGreaterThanOrEqual(5); // 4 backfilled steps (6 h apart) + the start-up run
    expect(Date.now() - first.getTime()).toBeGreaterThan(18 * 3_600_000);
  });

  it('integrates the demo history over its whole span: its 6-hour steps are not capped as gaps', async () => {
    type Trend = { rows: Array<{ group: string; resource_hours: string | null }>; notes: string[] };
    const trend = (await (await fetch(`${service.url}/api/reports/trend?by=kind&measure=daily-cost&days=3&limit=1000`)).json()) as Trend;
    const hours = trend.rows.filter((r) => r.group === 'instance').reduce((n, r) => n + Number(r.resource_hours ?? 0), 0);
    const inventory = (await (await fetch(`${service.url}/api/reports/inventory?kind=instances&limit=1`)).json()) as { page: { total: number } };
    // The first backfilled snapshot is 24 h old: every instance counts ~24 resource hours since,
    // not the 8 that a 2-hour cap (twice the hourly schedule) would leave of 6-hour steps.
    expect(hours).toBeGreaterThan(0.9 * 24 * inventory.page.total);
    expect(trend.notes.join(' ')).toContain('gaps longer than 7 h are capped');
  });

  it('never shows a demo cluster created after it was first seen', async () => {
    type Inventory = { rows: Array<{ name: string; created_at: string | null; first_seen: string | null }> };
    const clusters = (await (await fetch(`${service.url}/api/reports/inventory?kind=clusters&limit=1000`)).json()) as Inventory;
    expect(clusters.rows.map((r) => r.name)).toContain('demo-training-1'); // added by the backfill's second step
    const younger = clusters.rows.filter((r) => r.created_at && r.first_seen && Date.parse(r.created_at) > Date.parse(r.first_seen));
    expect(younger).toEqual([]);
  });

  it('answers health and readiness, and its metrics count the runs and the API requests', async () => {
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${service.url}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
    expect(((await ready.json()) as { collection: string }).collection).toBe('ok');
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    const runs = /cloudtally_collection_runs_total\{status="succeeded"\} (\d+)/.exec(metrics);
    expect(Number(runs?.[1])).toBeGreaterThanOrEqual(5);
    expect(metrics).toMatch(/cloudtally_api_requests_total\{[^}]*endpoint="GET \/cloud\/v1\/keypairs\/\{project_id\}\/\{region_id\}"/);
    expect(metrics).toMatch(/cloudtally_rows_written_total\{kind="instance"\} [1-9]/);
    expect(metrics).toMatch(/^cloudtally_collection_failing_units 0$/m);
  });
});

describe('npm start on a port that is taken', () => {
  it('exits 73 with one line naming host and port, before opening the database', async () => {
    const taken = await listenOnFreePort(createServer());
    const { port } = taken;
    const parent = mkdtempSync(join(tmpdir(), 'ct-port-taken-'));
    const dataDir = join(parent, 'data');
    try {
      const start = spawnCli(['start'], { CLOUDTALLY_DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port) });
      // Before: an EADDRINUSE stack after opening (and migrating) the data folder, and no exit.
      const { code } = await start.exited;
      expect(code, start.stdout()).toBe(73);
      expect(start.stderr()).toBe(`cloudtally: cannot listen on 127.0.0.1:${port}: the port is already in use (is cloudtally or another program running there?); set PORT or HOST\n`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await taken.close();
      rmSync(parent, { recursive: true, force: true });
    }
  }, 120_000);
});

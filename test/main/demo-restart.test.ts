import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../src/commands/collect.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { Jar } from '../helpers/cookies.js';

/**
 * `npm start` twice on the same data directory: the demo company continues (its stops, its added
 * clusters, its prices), so the run-rate, the inventory and the history carry on across the restart.
 */

interface Summary {
  summary: Array<{ label: string; value: unknown }>;
}
interface InventoryRow {
  resource_id: string;
  name: string;
  project_id: number;
  region_id: number;
  status: string;
  running: boolean;
  currency: string | null;
  price_per_hour: string | null;
}

const HISTORY_DAYS = 1;

/** PGlite in the data directory (the default), and Postgres with the data directory beside it. */
const variants: Array<{ name: string; database: () => Promise<{ env: Record<string, string>; drop: () => Promise<void> }> }> = [
  { name: 'pglite', database: async () => ({ env: {}, drop: async () => undefined }) },
];
const postgresUrl = process.env.TEST_DATABASE_URL;
if (postgresUrl) variants.push({ name: 'postgres', database: () => freshPostgres(postgresUrl) });

describe.each(variants)('the demo after a restart on $name', ({ database }) => {
  let dir: string;
  let env: Record<string, string>;
  let drop: () => Promise<void>;
  let service: RunningService | undefined;

  const start = async () => {
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: dir, PORT: '0', SIM_TASK_DELAY_MS: '20', ...env });
    service = await startService(config, silentLogger(), { demoHistoryDays: HISTORY_DAYS });
    await service.ready;
    await service.collection.idle();
    return service;
  };
  const json = async <T,>(path: string): Promise<T> => {
    const res = await fetch(`${service!.url}${path}`);
    expect(res.status, path).toBe(200);
    return (await res.json()) as T;
  };
  const runRates = async () => {
    const overview = await json<Summary>('/api/reports/overview');
    return Object.fromEntries(overview.summary.filter((s) => s.label.startsWith('Run-rate per hour')).map((s) => [s.label, String(s.value)]));
  };
  const instances = async () => (await json<{ rows: InventoryRow[] }>('/api/reports/inventory?kind=instances&limit=1000')).rows;
  const backfilledRuns = async (before: Date) => {
    const rows = await service!.database.query<{ n: number }>('SELECT count(DISTINCT run_id)::int AS n FROM snapshots WHERE taken_at < $1', [before]);
    return rows[0]!.n;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ct-demo-restart-'));
    ({ env, drop } = await database());
  });
  afterAll(async () => {
    await service?.stop();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('keeps the run-rate, a stop done in the demo, and the inventory: nothing removed, no second backfill', async () => {
    const first = await start();
    const startedAt = new Date();

    // Stop a running, priced EUR instance through the web flow, as an operator would.
    const victim = (await instances()).find((r) => r.running && r.currency === 'EUR' && Number(r.price_per_hour) > 0);
    expect(victim, 'a running priced instance in the demo').toBeDefined();
    const ref = `${victim!.project_id}:${victim!.region_id}:${victim!.resource_id}`;
    const jar = new Jar();
    const confirm = await fetch(`${first.url}/actions/stop/confirm?instance=${encodeURIComponent(ref)}`);
    jar.take(confirm.headers.getSetCookie());
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await confirm.text())?.[1];
    expect(csrf).toBeDefined();
    const stop = await fetch(`${first.url}/actions/stop`, {
      method: 'POST',
      headers: { ...jar.header(), accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', origin: first.url },
      body: new URLSearchParams({ _csrf: csrf!, instance: ref, reason: 'demo restart test', confirm: 'yes' }).toString(),
    });
    const outcome = (await stop.json()) as { outcomes: Array<{ result: string }> };
    expect(stop.status, JSON.stringify(outcome)).toBe(200);
    expect(outcome.outcomes.map((o) => o.result)).toEqual(['stopped']);
    await first.collection.collectNow('manual');
    await first.collection.idle();

    const ratesBefore = await runRates();
    expect(Object.keys(ratesBefore).length).toBeGreaterThan(0);
    const inventoryBefore = await instances();
    expect(inventoryBefore.find((r) => r.resource_id === victim!.resource_id)?.status).toBe('SHUTOFF');
    const runsBefore = await backfilledRuns(startedAt);
    expect(runsBefore).toBeGreaterThanOrEqual(4); // the backfilled history
    await first.stop();
    service = undefined;
    // The company is kept in the database, not in a file of the folder.
    expect(readdirSync(dir)).not.toContain('demo-simulator.json');
    expect(await savedCompanies(env, dir)).toBe(1);
    const restartedAt = new Date();

    // `npm run collect` in between collects the same saved company.
    expect(await collect(loadConfig({ CLOUDTALLY_DATA_DIR: dir, LOG_LEVEL: 'silent', ...env }), silentLogger())).toBe(0);
    const collectedAt = new Date();

    const second = await start();
    expect(await runRates()).toEqual(ratesBefore);
    const inventoryAfter = await instances();
    expect(inventoryAfter.find((r) => r.resource_id === victim!.resource_id)?.status).toBe('SHUTOFF');
    const statuses = (rows: InventoryRow[]) => rows.map((r) => `${r.resource_id} ${r.status}`).sort();
    expect(statuses(inventoryAfter)).toEqual(statuses(inventoryBefore));
    // Latest vs before the restart, and latest vs what `npm run collect` saw: the same company.
    for (const since of [restartedAt, collectedAt]) {
      for (const kind of ['instances', 'clusters', 'servers', 'flavors']) {
        const changes = await json<Summary & { rows: unknown[] }>(`/api/reports/changes?kind=${kind}&since=${encodeURIComponent(since.toISOString())}`);
        const count = (label: string) => changes.summary.find((s) => s.label === label)?.value;
        expect([count('Added'), count('Removed'), count('Changed')], `${kind} since ${since.toISOString()} ${JSON.stringify(changes.rows)}`).toEqual([0, 0, 0]);
      }
    }
    // The history was not built a second time: no new backdated run.
    expect(await backfilledRuns(startedAt)).toBe(runsBefore);
    expect(second.demo).toBe(true);

    // And as a person sees it after the restart: the stopped instance stopped, the overview drawn.
    if (!skipBrowserTests) {
      const browser = await launchChromium();
      try {
        const { page, problems } = await watchedPage(browser);
        await page.goto(`${second.url}/reports/inventory?kind=instances&q=${victim!.resource_id}`);
        const row = page.locator('table.report-table tbody tr').first();
        await expect(row.textContent()).resolves.toContain('SHUTOFF');
        await expect(page.locator('table.report-table tbody tr').count()).resolves.toBe(1);
        await page.goto(`${second.url}/reports/overview`);
        await expect(page.locator('.card').first().textContent()).resolves.toMatch(/Run-rate/);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    }
  }, 300_000);

  it('starts a fresh company when the saved one is corrupt, with a warning in the log', async () => {
    await service?.stop();
    service = undefined;
    const config0 = loadConfig({ CLOUDTALLY_DATA_DIR: dir, ...env });
    const db = await openDatabase(config0.database);
    await db.execute(`update demo_company set state = $1`, ['{"format":"cloudtally-demo-simulator","version":1,"seed":42,"size":"sixty"']);
    await db.close();
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: dir, PORT: '0', SIM_TASK_DELAY_MS: '20', ...env });
    service = await startService(config, logger, { demoHistoryDays: HISTORY_DAYS });
    await service.ready;
    const warning = lines.map((l) => JSON.parse(l) as { level: number; msg: string; file?: string; problem?: string }).find((l) => l.msg === 'saved demo company unusable: a new one replaces it');
    expect(warning).toMatchObject({ level: 40, where: 'the database (table demo_company)' });
    expect(warning?.problem).toMatch(/^not JSON/);
    expect((await fetch(`${service.url}/reports/overview`)).status).toBe(200);
  }, 180_000);
});

/** Rows of demo_company in the database of this folder and environment. */
async function savedCompanies(env: Record<string, string>, dir: string): Promise<number> {
  const db = await openDatabase(loadConfig({ CLOUDTALLY_DATA_DIR: dir, ...env }).database);
  try {
    const [row] = await db.query<{ n: number }>('select count(*)::int as n from demo_company');
    return row!.n;
  } finally {
    await db.close();
  }
}

async function freshPostgres(baseUrl: string): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const name = `ct_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const maintenance = async (sql: string) => {
    const url = new URL(baseUrl);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await maintenance(`CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString() }, drop: () => maintenance(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

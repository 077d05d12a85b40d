/**
 * A shutdown while a collection is writing leaves a consistent database: no run left "running",
 * no half-written snapshot visible or left behind, and every complete snapshot holds exactly the
 * rows it claims. In-process: the SIGTERM handler's work (shutdownService with the real collection
 * service) is called directly; the signal wiring itself is the start command's. Then `npm run
 * collect` as a real process, stopped by SIGTERM and killed with SIGKILL mid-run.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCloudClient } from '../../src/cloud/index.js';
import { Writable } from 'node:stream';
import { createCollectionService, runCollectCommand, runLockName } from '../../src/collect/index.js';
import { loadConfig } from '../../src/config/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { shutdownService } from '../../src/ops/lifecycle.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { spawnCli } from '../helpers/cli.js';
import { freshPostgresDatabase, testDatabases } from '../helpers/databases.js';
import { memoryLogger } from './helpers.js';

/** Where the rows of each snapshot kind live (a cluster snapshot's own rows are its clusters). */
const ROWS_OF_KIND: Record<string, string> = {
  cluster: 'gpu_clusters',
  instance: 'instances',
  port: 'instance_ports',
  keypair: 'keypairs',
  flavor: 'gpu_flavors',
  k8s_price: 'k8s_cluster_prices',
  storage_key: 'storage_ssh_keys',
  image_tag: 'image_tags',
  free_feature: 'free_features',
};

describe.each(testDatabases())('shutdown during a collection ($name)', ({ open }) => {
  let sim: Simulator;
  let database: Database;
  beforeAll(async () => {
    // Latency makes the run long enough to be caught in the middle.
    sim = await startSimulator({ seed: 5, size: 16, latencyMs: 25, taskDelayMs: 10 });
    database = await open();
  });
  afterAll(async () => {
    await database?.close();
    await sim?.close();
  });

  it('stops the run cleanly: nothing running, nothing half-written, complete snapshots whole', async () => {
    const manifest = sim.manifest();
    const config = loadConfig(
      { CLOUDTALLY_API_URL: sim.url, CLOUDTALLY_API_KEY: sim.apiKey, CLOUDTALLY_CONFIG: '/virtual.json' },
      { readFile: () => JSON.stringify({ scopes: manifest.scopes, image_ids: manifest.image_ids, free_feature_ids: manifest.free_feature_ids, collect_on_start: false }) },
    );
    const { logger } = memoryLogger('info');
    const client = createCloudClient({ baseUrl: sim.url, apiKey: sim.apiKey, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    const service = createCollectionService({ db: database, client, config, scopes: config.scopes, logger }, { stopTimeoutMs: 10_000, heartbeatMs: 200 });
    await service.start();
    const { runId } = await service.collectNow('manual');

    // Wait until the run has finished some snapshots and is still going.
    await vi.waitFor(
      async () => {
        const [row] = await database.query<{ n: string }>('SELECT count(*) AS n FROM snapshots WHERE run_id = $1 AND complete', [runId]);
        if (Number(row!.n) === 0) throw new Error('the collection wrote no snapshot');
      },
      { timeout: 20_000, interval: 10 },
    );
    expect((await service.status()).running).toBe(true);

    const report = await shutdownService({ collection: service, client }, { logger, deadlineMs: 20_000 });
    expect(report.steps.map((s) => [s.step, s.ok])).toEqual([
      ['collection', true],
      ['client', true],
    ]);

    const runs = await database.query<{ id: number; status: string; finished_at: Date | null }>('SELECT id, status, finished_at FROM collection_runs');
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    const run = runs.find((r) => r.id === runId);
    expect(run?.finished_at).not.toBeNull();
    // It really was cut short (a run that finished first would prove nothing here).
    expect(['partial', 'failed']).toContain(run?.status);

    const incomplete = await database.query('SELECT id, kind, scope_key FROM snapshots WHERE NOT complete');
    expect(incomplete).toEqual([]);

    const complete = await database.query<{ id: number; kind: string; row_count: number }>('SELECT id, kind, row_count FROM snapshots WHERE complete');
    expect(complete.length).toBeGreaterThan(0);
    for (const snapshot of complete) {
      const table = ROWS_OF_KIND[snapshot.kind];
      expect(table, snapshot.kind).toBeDefined();
      const [row] = await database.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE snapshot_id = $1`, [snapshot.id]);
      expect(Number(row!.n), `${snapshot.kind} snapshot ${snapshot.id}`).toBe(snapshot.row_count);
    }
  });

  it('collect command: a run that does not stop in time after the signal is marked failed (exit 1), nothing half-written', async () => {
    const manifest = sim.manifest();
    const config = loadConfig(
      { CLOUDTALLY_API_URL: sim.url, CLOUDTALLY_API_KEY: sim.apiKey, CLOUDTALLY_CONFIG: '/virtual.json' },
      { readFile: () => JSON.stringify({ scopes: manifest.scopes, image_ids: manifest.image_ids, free_feature_ids: manifest.free_feature_ids, collect_on_start: false }) },
    );
    const { logger } = memoryLogger('info');
    const client = createCloudClient({ baseUrl: sim.url, apiKey: sim.apiKey, retry: { baseDelayMs: 1, maxDelayMs: 5 } });
    // Every flavors request hangs for a while: the run is inside one when it is told to stop.
    sim.injectFaults({ match: { path: /\/ai\/flavors\// }, kind: 'delay', ms: 3_000, count: 100 });
    const stop = new AbortController();
    let lines = '';
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines += chunk.toString();
        if (/^run #\d+:/m.test(lines) && !stop.signal.aborted) setTimeout(() => stop.abort(), 100);
        done();
      },
    });
    try {
      const code = await runCollectCommand(
        { db: database, client, config, scopes: config.scopes, logger },
        { out, collectors: ['flavors'], signal: stop.signal, stopTimeoutMs: 50 },
      );
      expect(code, lines).toBe(1);
      const runId = Number(/run #(\d+):/.exec(lines)?.[1]);
      expect(lines).toContain(`run #${runId} did not stop within 50 ms: marked failed, its unfinished snapshots deleted`);
      const [run] = await database.query<{ status: string; errors: Array<{ message: string }> }>('SELECT status, errors FROM collection_runs WHERE id = $1', [runId]);
      expect(run!.status).toBe('failed');
      expect(run!.errors.at(-1)!.message).toMatch(/did not stop within 50 ms/);
      expect(await database.query('SELECT id FROM snapshots WHERE NOT complete AND run_id = $1', [runId])).toEqual([]);

      // The late run ends by itself (its lock is let go) without changing what was recorded.
      await vi.waitFor(
        async () => {
          if (!(await database.withAdvisoryLock(runLockName(runId), async () => true, { wait: false })).acquired) throw new Error('the stopped run never ended');
        },
        { timeout: 40_000, interval: 50 },
      );
      const [after] = await database.query<{ status: string }>('SELECT status FROM collection_runs WHERE id = $1', [runId]);
      expect(after!.status).toBe('failed');
      expect(await database.query('SELECT id FROM snapshots WHERE NOT complete AND run_id = $1', [runId])).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

/** Every complete snapshot holds exactly the rows it claims. */
async function expectCompleteSnapshotsWhole(database: Database, runId: number): Promise<number> {
  const complete = await database.query<{ id: number; kind: string; row_count: number }>(
    'SELECT id, kind, row_count FROM snapshots WHERE complete AND run_id = $1',
    [runId],
  );
  for (const snapshot of complete) {
    const [row] = await database.query<{ n: string }>(`SELECT count(*) AS n FROM ${ROWS_OF_KIND[snapshot.kind]} WHERE snapshot_id = $1`, [snapshot.id]);
    expect(Number(row!.n), `${snapshot.kind} snapshot ${snapshot.id}`).toBe(snapshot.row_count);
  }
  return complete.length;
}

interface CollectTarget {
  name: string;
  /** The child's database settings, a way to look at the database afterwards, and the clean-up. */
  setup(): Promise<{ env: Record<string, string>; open(): Promise<Database>; cleanup(): Promise<void>; dataDir?: string }>;
}

const collectTargets: CollectTarget[] = [
  {
    name: 'pglite',
    setup: async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'ct-collect-signals-'));
      return {
        env: { CLOUDTALLY_DATA_DIR: dataDir },
        dataDir,
        open: () => openDatabase({ driver: 'pglite', dataDir }),
        cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
      };
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  const baseUrl = process.env.TEST_DATABASE_URL;
  collectTargets.push({
    name: 'postgres',
    setup: async () => {
      const { url, drop } = await freshPostgresDatabase(baseUrl);
      return { env: { DATABASE_URL: url }, open: () => openDatabase({ driver: 'pg', url }, { poolSize: 2 }), cleanup: drop };
    },
  });
}

/** The built-in simulator, small; latency makes a run long enough to be stopped in the middle. */
const simulatorEnv = (latencyMs: number) => ({ SIM_SEED: '5', SIM_SIZE: '4', SIM_TASK_DELAY_MS: '10', SIM_LATENCY_MS: String(latencyMs) });
const SLOW_MS = 400;

describe.each(collectTargets)('npm run collect as a process, stopped mid-run ($name)', (target) => {
  let env: Record<string, string>;
  let open: () => Promise<Database>;
  let cleanup: () => Promise<void>;
  let dataDir: string | undefined;
  beforeAll(async () => {
    ({ env, open, cleanup, dataDir } = await target.setup());
  });
  afterAll(async () => {
    await cleanup?.();
  });

  const runs = async () => {
    const database = await open();
    try {
      return {
        runs: await database.query<{ id: number; status: string; errors: Array<{ message: string }> }>('SELECT id, status, errors FROM collection_runs ORDER BY id'),
        incomplete: await database.query('SELECT id, run_id, kind, scope_key FROM snapshots WHERE NOT complete'),
        database,
      };
    } catch (err) {
      await database.close();
      throw err;
    }
  };

  it('after kill -9 the next collect starts at once, ends the dead run and deletes its unfinished snapshots', async () => {
    const killed = spawnCli(['collect'], { ...env, ...simulatorEnv(SLOW_MS) });
    await killed.waitForOutput(/^ {2}ok /m); // a snapshot is complete, the run goes on
    killed.child.kill('SIGKILL');
    expect(await killed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const killedRunId = Number(/run #(\d+):/.exec(killed.stdout())?.[1]);
    expect(killedRunId).toBeGreaterThan(0);
    if (dataDir) {
      // The dead process's folder lock is left behind, and is taken over.
      expect(JSON.parse(readFileSync(join(dataDir, 'cloudtally.lock'), 'utf8'))).toMatchObject({ pid: killed.pid });
    }

    // Before: exit 3 ("already running") until the dead run's heartbeat was 3 minutes old.
    const next = spawnCli(['collect'], { ...env, ...simulatorEnv(0) });
    const { code } = await next.exited;
    expect(code, `${next.stdout()}\n${next.stderr()}`).toBe(0);
    expect(next.stdout()).toMatch(/SUCCEEDED/);
    if (dataDir) expect(existsSync(join(dataDir, 'cloudtally.lock'))).toBe(false);

    const { runs: all, incomplete, database } = await runs();
    try {
      const dead = all.find((r) => r.id === killedRunId)!;
      expect(dead.status).toBe('failed');
      expect(dead.errors.at(-1)!.message).toMatch(/run died: its process \(runner .*\) ended without finishing it/);
      expect(all.at(-1)!.status).toBe('succeeded');
      expect(all.filter((r) => r.status === 'running')).toEqual([]);
      expect(incomplete).toEqual([]);
      expect(await expectCompleteSnapshotsWhole(database, killedRunId)).toBeGreaterThan(0);
    } finally {
      await database.close();
    }
  }, 240_000);

  it('SIGTERM stops the run cleanly: exit 143, run partial or failed, no unfinished snapshot, lock released', async () => {
    const stopped = spawnCli(['collect'], { ...env, ...simulatorEnv(SLOW_MS) });
    await stopped.waitForOutput(/^ {2}ok /m);
    stopped.child.kill('SIGTERM');
    const { code } = await stopped.exited;
    expect(code, `${stopped.stdout()}\n${stopped.stderr()}`).toBe(143);
    expect(stopped.stdout()).toMatch(/stopped by SIGTERM: finished snapshots kept, unfinished ones deleted; exit 143/);
    const runId = Number(/run #(\d+):/.exec(stopped.stdout())?.[1]);
    if (dataDir) expect(existsSync(join(dataDir, 'cloudtally.lock'))).toBe(false);

    const { runs: all, incomplete, database } = await runs();
    try {
      const run = all.find((r) => r.id === runId)!;
      expect(['partial', 'failed']).toContain(run.status);
      expect(run.errors.some((e) => /asked to stop/.test(e.message))).toBe(true);
      expect(all.filter((r) => r.status === 'running')).toEqual([]);
      expect(incomplete).toEqual([]);
      await expectCompleteSnapshotsWhole(database, runId);
    } finally {
      await database.close();
    }
  }, 240_000);
});

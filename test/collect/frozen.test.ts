/**
 * A frozen collector (a paused VM, `kill -STOP`, a network partition) must not stall every later
 * collection: once its heartbeat is stale the next collection ends its run, terminating whatever
 * its sessions hold, and proceeds; the frozen process, when it wakes, writes nothing more.
 * Postgres only: PGlite is one process (its data folder lock keeps a second one out).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { createCollectionService, runLockName, runnerSessionName, runSessionName, type CollectionService } from '../../src/collect/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import type { Simulator } from '../../src/simulator/index.js';
import { spawnCli } from '../helpers/cli.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

const baseUrl = process.env.TEST_DATABASE_URL;

type RunRow = { id: number; status: string; finished_at: Date | null; errors: Array<{ message: string }> };

describe.skipIf(!baseUrl)('a frozen collector (postgres)', () => {
  let target: { url: string; drop(): Promise<void> };
  let db: Database;
  let dataDir: string;

  beforeAll(async () => {
    target = await freshPostgresDatabase(baseUrl!);
    db = await openDatabase({ driver: 'pg', url: target.url }, { poolSize: 2 });
    await migrateDatabase(db);
    dataDir = mkdtempSync(join(tmpdir(), 'ct-frozen-'));
  });
  afterAll(async () => {
    await db?.close();
    await target?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const run = async (id: number) => (await db.query<RunRow>('SELECT id, status, finished_at, errors FROM collection_runs WHERE id = $1', [id]))[0]!;
  const snapshotsOf = (runId: number) =>
    db.query<{ id: number; complete: boolean }>('SELECT id, complete FROM snapshots WHERE run_id = $1 ORDER BY id', [runId]);

  /** The built-in simulator, slow enough for a run to be caught in the middle; short heartbeats. */
  const env = (latencyMs: number) => ({
    DATABASE_URL: target.url,
    CLOUDTALLY_DATA_DIR: dataDir,
    SIM_SEED: '5',
    SIM_SIZE: '4',
    SIM_TASK_DELAY_MS: '10',
    SIM_LATENCY_MS: String(latencyMs),
    CLOUDTALLY_RUN_HEARTBEAT_SECONDS: '1',
    CLOUDTALLY_RUN_STALE_SECONDS: '5',
  });

  it('SIGSTOP: a later collection succeeds within a minute; SIGCONT: the frozen one exits without writing', async () => {
    const frozen = spawnCli(['collect'], env(400));
    await frozen.waitForOutput(/^ {2}ok /m); // a snapshot is complete, the run goes on
    const frozenRunId = Number(/run #(\d+):/.exec(frozen.stdout())?.[1]);
    expect(frozenRunId).toBeGreaterThan(0);

    process.kill(frozen.pid, 'SIGSTOP');
    const frozenAt = Date.now();
    let ended: RunRow;
    let snapshotsAtEnd: Awaited<ReturnType<typeof snapshotsOf>>;
    try {
      // "Already running" (exit 3) while the frozen run's heartbeat is fresh, then one that runs.
      const codes: Array<number | null> = [];
      let next: ReturnType<typeof spawnCli>;
      for (;;) {
        next = spawnCli(['collect'], env(0));
        const { code } = await next.exited;
        codes.push(code);
        if (code !== 3 || Date.now() - frozenAt > 60_000) break;
      }
      expect(codes.at(-1), `${next.stdout()}\n${next.stderr()}`).toBe(0);
      expect(Date.now() - frozenAt).toBeLessThan(60_000);
      expect(next.stdout()).toMatch(/SUCCEEDED/);

      ended = await run(frozenRunId);
      expect(ended.status).toBe('failed');
      expect(ended.finished_at).not.toBeNull();
      expect(ended.errors.at(-1)!.message).toMatch(
        new RegExp(`^run died: no heartbeat since \\S+ from runner \\S+:${frozen.pid} \\(process gone: silent for over 5 s\\); [1-9]\\d* database session\\(s\\) of it terminated, \\d+ unfinished snapshot\\(s\\) deleted$`),
      );
      // Nothing of the frozen process is left on the server: its locks went with its sessions.
      const left = await db.query('SELECT pid FROM pg_stat_activity WHERE application_name = ANY($1::text[])', [
        [runnerSessionName(`${hostname()}:${frozen.pid}`), runSessionName(frozenRunId, `${hostname()}:${frozen.pid}`)],
      ]);
      expect(left).toEqual([]);
      snapshotsAtEnd = await snapshotsOf(frozenRunId);
      expect(snapshotsAtEnd.every((s) => s.complete)).toBe(true);
    } finally {
      process.kill(frozen.pid, 'SIGCONT');
    }

    const { code } = await frozen.exited;
    expect(code, `${frozen.stdout()}\n${frozen.stderr()}`).toBe(1);
    expect(frozen.stdout()).toContain(
      `run #${frozenRunId} was ended by another process while this one was not heard from (recorded as failed); nothing more was written`,
    );
    // It wrote nothing after waking: the same snapshots, none completed since, the record unchanged.
    expect(await snapshotsOf(frozenRunId)).toEqual(snapshotsAtEnd);
    expect(await run(frozenRunId)).toEqual(ended);
    expect(await db.query(`SELECT id FROM collection_runs WHERE status = 'running'`)).toEqual([]);
  }, 120_000);

  describe('a frozen session holding what the clean-up must delete', () => {
    let sim: Simulator;
    let client: CloudClient;
    let service: CollectionService;
    const frozenClients: pg.Client[] = [];

    beforeAll(async () => {
        sim = await startTestSimulator({ seed: 3, size: 6 });
      const config = testConfig();
      client = testClient(sim, config);
      service = createCollectionService(testDeps(db, sim, client, config), { coalesceMs: 50, heartbeatMs: 1_000, deadAfterMs: 5_000 });
    });
    afterAll(async () => {
      await service?.stop();
      await service?.idle();
      for (const c of frozenClients) await c.end().catch(() => undefined);
      await client?.close();
      await sim?.close();
    });

    /** A session of the frozen process, as pg_stat_activity names it; it never says anything again. */
    const frozenSession = async (applicationName: string) => {
      const c = new pg.Client({ connectionString: target.url, application_name: applicationName });
      const errors: Error[] = [];
      c.on('error', (err) => errors.push(err));
      await c.connect();
      frozenClients.push(c);
      return { client: c, errors };
    };

    it('is terminated, so the next collection starts at once and the dead run is ended', async () => {
      const runner = 'frozen-host:4242';
      const [dead] = await db.query<{ id: number }>(
        `INSERT INTO collection_runs (trigger, collectors, runner_id, started_at, heartbeat_at)
         VALUES ('schedule', '{instances}', $1, now() - interval '2 minutes', now() - interval '1 minute') RETURNING id`,
        [runner],
      );
      const [half] = await db.query<{ id: number }>(
        `INSERT INTO snapshots (run_id, kind, scope_key, complete) VALUES ($1, 'instance', 'p1-r1', false) RETURNING id`,
        [dead!.id],
      );
      // The frozen process holds its run lock, and sits in a transaction that has locked the
      // snapshot's row (its finalising transaction, say), with no idle timeout of its own.
      const lock = await frozenSession(runSessionName(dead!.id, runner));
      await lock.client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [runLockName(dead!.id)]);
      const tx = await frozenSession(runnerSessionName(runner));
      await tx.client.query('BEGIN');
      await tx.client.query('UPDATE snapshots SET row_count = 1 WHERE id = $1', [half!.id]);

      const started = await Promise.race([
        service.collectNow(),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the collection did not start within 20 s')), 20_000)),
      ]);
      expect(started.alreadyRunning).toBe(false);
      expect(started.runId).not.toBe(dead!.id);

      const ended = await run(dead!.id);
      expect(ended.status).toBe('failed');
      expect(ended.errors.at(-1)!.message).toMatch(
        /^run died: no heartbeat since \S+ from runner frozen-host:4242 \(process gone: silent for over 5 s\); 2 database session\(s\) of it terminated, 1 unfinished snapshot\(s\) deleted$/,
      );
      expect(await db.query('SELECT id FROM snapshots WHERE id = $1', [half!.id])).toEqual([]);
      expect(lock.errors.map((e) => (e as { code?: string }).code)).toContain('57P01');
      expect(tx.errors.map((e) => (e as { code?: string }).code)).toContain('57P01');

      await service.idle();
      expect((await run(started.runId)).status).toBe('succeeded');
    }, 60_000);

    it('is ended by a running service within a heartbeat or two, with no collection asked for', async () => {
      const yearly = Object.fromEntries(['clusters', 'instances', 'ports', 'keypairs', 'flavors', 'k8s_prices', 'storage_keys', 'image_tags', 'free_features'].map((n) => [n, '0 0 1 1 *']));
      const config = testConfig({ schedules: yearly });
      const watching = createCollectionService(testDeps(db, sim, client, config), { heartbeatMs: 1_000, deadAfterMs: 5_000, pruneSchedule: '0 0 1 1 *' });
      try {
        await watching.start();
        const runner = 'frozen-host:5151';
        const [dead] = await db.query<{ id: number }>(
          `INSERT INTO collection_runs (trigger, collectors, runner_id, heartbeat_at) VALUES ('manual', '{instances}', $1, now()) RETURNING id`,
          [runner],
        );
        const lock = await frozenSession(runSessionName(dead!.id, runner));
        await lock.client.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [runLockName(dead!.id)]);
        // Its heartbeat stops now: stale after 5 s, ended at the service's next heartbeat.
        const frozenAt = Date.now();
        for (;;) {
          if ((await run(dead!.id)).status !== 'running') break;
          if (Date.now() - frozenAt > 20_000) throw new Error('the running service did not end the silent run within 20 s');
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(4_500);
        expect((await run(dead!.id)).errors.at(-1)!.message).toMatch(/^run died: no heartbeat since \S+ from runner frozen-host:5151 \(process gone: silent for over 5 s\); 1 database session\(s\) of it terminated/);
        expect(lock.errors.map((e) => (e as { code?: string }).code)).toContain('57P01');
      } finally {
        await watching.stop();
        await watching.idle();
      }
    }, 60_000);
  });
});

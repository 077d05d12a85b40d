/**
 * A run whose database session dies while its process lives (Postgres restarted, the session
 * terminated, the network dropped it) is recorded as "session lost", not as a dead process, and
 * its own process closes it as soon as the database answers again. Postgres only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { createCollectionService, failingUnits, runLockName, runnerSessionName, runSessionName } from '../../src/collect/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import type { Simulator } from '../../src/simulator/index.js';
import { spawnCli } from '../helpers/cli.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { memoryLogger } from '../ops/helpers.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

const baseUrl = process.env.TEST_DATABASE_URL;

type RunRow = { id: number; status: string; finished_at: Date | null; runner_id: string; errors: Array<{ message: string }> };

async function until<T>(check: () => Promise<T | null | undefined | false>, what: string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A TCP proxy in front of Postgres that can play an outage: cut() drops every connection and
 * refuses new ones (what clients see of a server restarting); restore() accepts again.
 */
async function outageProxy(upstream: URL): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((downstream) => {
        const up = connect(Number(upstream.port || 5432), upstream.hostname);
        for (const s of [downstream, up]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        downstream.pipe(up).pipe(downstream);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const url = new URL(upstream);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const stop = async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  };
  return { url: url.toString(), cut: stop, restore: listen, close: stop };
}

describe.skipIf(!baseUrl)('a run whose database session is lost (postgres)', () => {
  let target: { url: string; drop(): Promise<void> };
  let db: Database;
  let dataDir: string;

  beforeAll(async () => {
    target = await freshPostgresDatabase(baseUrl!);
    db = await openDatabase({ driver: 'pg', url: target.url }, { poolSize: 2 });
    await migrateDatabase(db);
    dataDir = mkdtempSync(join(tmpdir(), 'ct-session-lost-'));
  });
  afterAll(async () => {
    await db?.close();
    await target?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const run = async (id: number) =>
    (await db.query<RunRow>('SELECT id, status, finished_at, runner_id, errors FROM collection_runs WHERE id = $1', [id]))[0]!;

  it('npm run collect: the run lock session terminated, the process records "session lost" and closes the run itself', async () => {
    const collect = spawnCli(['collect'], {
      DATABASE_URL: target.url,
      CLOUDTALLY_DATA_DIR: dataDir,
      SIM_SEED: '5',
      SIM_SIZE: '4',
      SIM_TASK_DELAY_MS: '10',
      SIM_LATENCY_MS: '300',
      CLOUDTALLY_RUN_HEARTBEAT_SECONDS: '1',
      CLOUDTALLY_RUN_STALE_SECONDS: '5',
    });
    await collect.waitForOutput(/^ {2}ok /m);
    const runId = Number(/run #(\d+):/.exec(collect.stdout())?.[1]);
    const runner = `${hostname()}:${collect.pid}`;
    // The session holding the run's advisory lock (a bigint key: classid high, objid low half).
    const [holder] = await db.query<{ pid: number; application_name: string }>(
      `SELECT l.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended($1, 0)`,
      [runLockName(runId)],
    );
    expect(holder).toBeDefined();
    const [terminated] = await db.query<{ ok: boolean }>('SELECT pg_terminate_backend($1, 5000) AS ok', [holder!.pid]);
    expect(terminated!.ok).toBe(true);

    const { code } = await collect.exited;
    expect([1, 2], `${collect.stdout()}\n${collect.stderr()}`).toContain(code);
    const record = await run(runId);
    expect(['partial', 'failed']).toContain(record.status);
    expect(record.finished_at).not.toBeNull();
    expect(record.runner_id).toBe(runner);
    const messages = record.errors.map((e) => e.message);
    expect(messages.some((m) => /^session lost: the database session holding the run's lock ended at \S+ \(terminating connection due to administrator command\) while its process \(runner \S+\) was alive; the run stopped and was closed by that process$/.test(m))).toBe(true);
    expect(messages.some((m) => /run died|process gone/.test(m))).toBe(false);
    expect(await db.query('SELECT id FROM snapshots WHERE run_id = $1 AND NOT complete', [runId])).toEqual([]);
    // The banner and /readyz say why the scopes failed: not a shutdown.
    const reasons = (await failingUnits(db)).map((f) => f.reason);
    expect(reasons.some((r) => /its database session was lost/.test(r)), reasons.join('\n')).toBe(true);
    expect(reasons.some((r) => /shutting down/.test(r))).toBe(false);
    // The lock's session named the run and its process (pg_stat_activity).
    expect(holder!.application_name).toBe(runSessionName(runId, runner));
  }, 120_000);

  describe('through an outage', () => {
    let sim: Simulator;
    let client: CloudClient;
    let proxy: Awaited<ReturnType<typeof outageProxy>>;
    let viaProxy: Database;

    beforeAll(async () => {
      sim = await startTestSimulator({ seed: 3, size: 10, latencyMs: 100 });
      proxy = await outageProxy(new URL(target.url));
      viaProxy = await openDatabase({ driver: 'pg', url: proxy.url }, { poolSize: 4, applicationName: runnerSessionName('outage-runner'), onPoolError: () => undefined });
    });
    afterAll(async () => {
      await viaProxy?.close().catch(() => undefined);
      await proxy?.close();
      await client?.close();
      await sim?.close();
    });

    it('stops the run and closes it within seconds of the database answering again', async () => {
      const config = testConfig();
      client = testClient(sim, config);
      const { logger, entries } = memoryLogger('info');
      const service = createCollectionService(testDeps(viaProxy, sim, client, config, { runnerId: 'outage-runner', logger }), { heartbeatMs: 1_000, deadAfterMs: 5_000 });
      const { runId } = await service.collectNow();
      await until(async () => (await db.query('SELECT 1 FROM snapshots WHERE run_id = $1 AND complete', [runId])).length > 0, 'a complete snapshot', 30_000);

      await proxy.cut();
      // Down for a while: the run cannot be closed meanwhile, and stays running.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect((await run(runId)).status).toBe('running');
      await proxy.restore();
      const back = Date.now();

      const record = await until(async () => {
        const r = await run(runId);
        return r.status !== 'running' ? r : null;
      }, 'the run to be closed', 30_000);
      expect(Date.now() - back).toBeLessThan(15_000);
      expect(['partial', 'failed']).toContain(record.status);
      const messages = record.errors.map((e) => e.message);
      expect(messages.some((m) => /^session lost: the database session holding the run's lock ended at \S+ \(.+\) while its process \(runner outage-runner\) was alive; the run stopped and was closed by that process$/.test(m))).toBe(true);
      expect(messages.some((m) => /run died|process gone/.test(m))).toBe(false);
      // It was closed by retrying: the first attempt met the outage.
      const logged = entries().map((e) => e.msg);
      expect(logged).toContain('could not record the end of the run: the database cannot be reached; trying again until it answers');
      expect(logged).toContain('the run is closed: the database answers again');
      await service.idle();
      await service.stop();
      expect(await db.query('SELECT id FROM snapshots WHERE run_id = $1 AND NOT complete', [runId])).toEqual([]);
    }, 90_000);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import type { Database } from '../../src/db/connection.js';
import { createCollectionService, createPgRunCoordinator, runLockName, type CollectionService, type CollectorDeps } from '../../src/collect/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 25 },
  );
}

describe.each(testDatabases())('the collection service ($name)', ({ open }) => {
  let sim: Simulator;
  let client: CloudClient;
  let db: Database;
  let deps: CollectorDeps;
  const services: CollectionService[] = [];
  const service = (extra: Partial<CollectorDeps> = {}, options: Parameters<typeof createCollectionService>[1] = {}) => {
    const s = createCollectionService({ ...deps, ...extra }, { coalesceMs: 50, ...options });
    services.push(s);
    return s;
  };
  const runs = () =>
    db.query<{ id: number; status: string; trigger: string; runner_id: string; errors: Array<{ message: string }> }>(
      'SELECT id, status, trigger, runner_id, errors FROM collection_runs ORDER BY id',
    );

  beforeAll(async () => {
    sim = await startTestSimulator({ seed: 3, size: 10 });
    const config = testConfig();
    client = testClient(sim, config);
    db = await open();
    deps = testDeps(db, sim, client, config);
  });
  afterEach(async () => {
    for (const s of services.splice(0)) {
      await s.stop();
      await s.idle();
    }
    sim.setOptions({ latencyMs: 0 });
    await db.execute(`UPDATE collection_runs SET status = 'failed' WHERE status = 'running'`);
  });
  afterAll(async () => {
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  it('starts one run for two concurrent triggers, in one service and across two', async () => {
    const a = service();
    const b = service({ runnerId: 'replica-b' });
    const before = (await runs()).length;
    const results = await Promise.all([a.collectNow(), a.collectNow(), b.collectNow('manual')]);
    expect(new Set(results.map((r) => r.runId)).size).toBe(1);
    expect(results.filter((r) => !r.alreadyRunning)).toHaveLength(1);
    expect((await a.status()).running).toBe(true);
    // Either service may have won the start: wait for both.
    await Promise.all([a.idle(), b.idle()]);
    const after = await runs();
    expect(after).toHaveLength(before + 1);
    expect(after.at(-1)).toMatchObject({ id: results[0]!.runId, status: 'succeeded', trigger: 'manual' });
    const status = await b.status();
    expect(status.running).toBe(false);
    expect(status.lastGoodAt).toBeInstanceOf(Date);
    expect(status.staleScopes).toEqual([]);
  });

  it('elects exactly one replica per scheduled slot (Postgres run coordinator)', async () => {
    const a = createPgRunCoordinator(db, 'replica-a#1');
    const b = createPgRunCoordinator(db, 'replica-b#2');
    for (let minute = 0; minute < 5; minute++) {
      const slot = new Date(Date.UTC(2030, 0, 1, 0, minute)).toISOString();
      const answers = await Promise.all([a.shouldRun(`collect.0:${slot}`, 30_000), b.shouldRun(`collect.0:${slot}`, 30_000)]);
      expect(answers.filter(Boolean)).toHaveLength(1);
      const winner = answers[0] ? a : b;
      const loser = answers[0] ? b : a;
      // The winner's other tasks of the same slot join its run; the loser's do not.
      expect(await winner.shouldRun(`collect.1:${slot}`, 30_000)).toBe(true);
      expect(await loser.shouldRun(`collect.1:${slot}`, 30_000)).toBe(false);
      // Pruning is claimed on its own.
      expect(await loser.shouldRun(`prune:${slot}`, 30_000)).toBe(true);
    }
  });

  it('runs each scheduled slot once when two replicas share the database', async () => {
    const everySecond = testConfig({ schedules: { free_features: '* * * * * *' } });
    const a = service({ config: everySecond, runnerId: 'replica-a' });
    const b = service({ config: everySecond, runnerId: 'replica-b' });
    const before = (await runs()).length;
    await Promise.all([a.start(), b.start()]);
    await until(async () => (await runs()).slice(before).filter((r) => r.trigger === 'schedule' && r.status !== 'running').length >= 2, 'two scheduled runs');
    await Promise.all([a.stop(), b.stop()]);
    const scheduled = (await runs()).slice(before).filter((r) => r.trigger === 'schedule');
    const claims = await db.query<{ key: string; claimed_by: string }>(`SELECT key, claimed_by FROM schedule_claims WHERE key LIKE 'collect@%'`);
    expect(scheduled.length).toBeLessThanOrEqual(claims.length);
    for (const run of scheduled) {
      expect(run.status).toBe('succeeded');
      expect(claims.some((c) => c.claimed_by.startsWith(`${run.runner_id}#`))).toBe(true);
    }
    expect(claims.every((c) => /^replica-[ab]#/.test(c.claimed_by))).toBe(true);
  });

  it('marks a dead run failed at start and deletes its unfinished snapshots', async () => {
    const [dead] = await db.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id, started_at, heartbeat_at)
       VALUES ('schedule', '{instances}', 'crashed-host:4242', now() - interval '20 minutes', now() - interval '10 minutes') RETURNING id`,
    );
    const [half] = await db.query<{ id: number }>(
      `INSERT INTO snapshots (run_id, kind, scope_key, complete) VALUES ($1, 'instance', 'p1-r1', false) RETURNING id`,
      [dead!.id],
    );
    await db.execute(`INSERT INTO instances (snapshot_id, instance_id, raw) VALUES ($1, 'i-1', '{}'), ($1, 'i-2', '{}')`, [half!.id]);
    const [done] = await db.query<{ id: number }>(
      `INSERT INTO snapshots (run_id, kind, scope_key, complete, row_count) VALUES ($1, 'keypair', 'p1-r1', true, 0) RETURNING id`,
      [dead!.id],
    );
    const [alive] = await db.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('manual', '{keypairs}', 'live-host:1') RETURNING id`,
    );
    // A live runner holds its run's lock (here on a connection of this test).
    const aliveLock = await db.holdAdvisoryLock(runLockName(alive!.id));
    expect(aliveLock).not.toBeNull();

    try {
      await service().start();
    } finally {
      await aliveLock!.release();
    }

    const all = await runs();
    const deadRun = all.find((r) => r.id === dead!.id)!;
    expect(deadRun.status).toBe('failed');
    expect(deadRun.errors.at(-1)!.message).toMatch(/run died: no heartbeat since .* from runner crashed-host:4242/);
    expect(all.find((r) => r.id === alive!.id)!.status).toBe('running');
    expect(await db.query('SELECT id FROM snapshots WHERE id = $1', [half!.id])).toEqual([]);
    expect(await db.query('SELECT 1 FROM instances WHERE snapshot_id = $1', [half!.id])).toEqual([]);
    expect(await db.query('SELECT id FROM snapshots WHERE id = $1', [done!.id])).toHaveLength(1);
  });

  it('ends at once a run whose process is gone (its run lock is free), though its heartbeat is fresh', async () => {
    // What a `kill -9` of `npm run collect` leaves: a running run with a fresh heartbeat, no lock holder.
    const [orphan] = await db.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('manual', '{instances}', 'killed-host:99') RETURNING id`,
    );
    const [half] = await db.query<{ id: number }>(
      `INSERT INTO snapshots (run_id, kind, scope_key, complete) VALUES ($1, 'instance', 'p1-r1', false) RETURNING id`,
      [orphan!.id],
    );
    const s = service();
    const started = await s.collectNow();
    expect(started.alreadyRunning).toBe(false);
    expect(started.runId).not.toBe(orphan!.id);
    await s.idle();
    const all = await runs();
    const dead = all.find((r) => r.id === orphan!.id)!;
    expect(dead.status).toBe('failed');
    expect(dead.errors.at(-1)!.message).toMatch(/run died: its process \(runner killed-host:99\) ended without finishing it/);
    expect(all.find((r) => r.id === started.runId)!.status).toBe('succeeded');
    expect(await db.query('SELECT id FROM snapshots WHERE id = $1', [half!.id])).toEqual([]);
  });

  it('still refuses to start while a live process holds the running run', async () => {
    const [other] = await db.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('manual', '{instances}', 'replica-c:7') RETURNING id`,
    );
    const lock = await db.holdAdvisoryLock(runLockName(other!.id));
    try {
      const started = await service().collectNow();
      expect(started).toMatchObject({ runId: other!.id, alreadyRunning: true });
      expect((await runs()).find((r) => r.id === other!.id)!.status).toBe('running');
    } finally {
      await lock!.release();
    }
  });

  it('stop() during a run rolls back the snapshots in progress and ends the run', async () => {
    sim.setOptions({ latencyMs: 15 });
    const s = service();
    await s.start();
    const { runId } = await s.collectNow();
    await until(
      async () => (await db.query(`SELECT 1 FROM snapshots WHERE run_id = $1 AND complete AND kind = 'instance'`, [runId])).length > 0,
      'a complete instance snapshot',
    );
    await s.stop();
    const run = (await runs()).find((r) => r.id === runId)!;
    expect(['partial', 'failed']).toContain(run.status);
    expect(run.errors.some((e) => /stopped/.test(e.message))).toBe(true);
    expect(await db.query(`SELECT id FROM collection_runs WHERE status = 'running'`)).toEqual([]);
    expect(await db.query('SELECT id FROM snapshots WHERE NOT complete')).toEqual([]);
    expect((await db.query('SELECT id FROM snapshots WHERE run_id = $1 AND complete', [runId])).length).toBeGreaterThan(0);
    await expect(s.collectNow()).rejects.toThrow(/stopped/);
  });

  it('stop() fails a run that does not stop in time, and what it writes later stays invisible', async () => {
    // One scope's flavors answer late: the run is inside that request when stop() is called.
    sim.injectFaults({ match: { path: /\/ai\/flavors\/380103\/120/ }, kind: 'delay', ms: 1_000, count: 5 });
    const s = service({}, { stopTimeoutMs: 50 });
    const { runId } = await s.collectNow();
    const visible = () => db.query<{ id: number }>('SELECT id FROM snapshots WHERE run_id = $1 AND complete ORDER BY id', [runId]);
    await until(async () => (await visible()).length >= 4, 'the other flavor snapshots');
    await s.stop();
    const run = (await runs()).find((r) => r.id === runId)!;
    expect(run.status).toBe('failed');
    expect(run.errors.at(-1)!.message).toMatch(/did not stop within 50 ms/);
    const before = await visible();
    await s.idle();
    expect((await runs()).find((r) => r.id === runId)!.status).toBe('failed');
    expect(await visible()).toEqual(before);
    // Other kinds of that scope may have completed before stop(); the delayed flavor snapshot never does.
    expect(
      await db.query(`SELECT id FROM snapshots WHERE run_id = $1 AND kind = 'flavor' AND scope_key = 'p380103-r120'`, [runId]),
    ).toEqual([]);
    expect(await db.query('SELECT id FROM snapshots WHERE NOT complete')).toEqual([]);
  });
});

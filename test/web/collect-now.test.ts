/**
 * "Collect now" against the real collection service and database answers at once: 202 with the
 * run it started, 409 naming the run already under way (in this process or another), and also
 * when the start must first end a dead run whose frozen session holds what the clean-up deletes.
 * Each request must complete before a 2 s abort signal (a timing goal's measurement belongs in a
 * bench; this only guards against waiting on the database).
 */
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { createCollectionService, runLockName, runnerSessionName, runSessionName, type CollectionService } from '../../src/collect/index.js';
import type { Database, HeldLock } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { Jar } from '../helpers/cookies.js';
import { testDatabases } from '../helpers/databases.js';
import { startTestServer, type TestServer } from './fixtures.js';

type Answer = { status: number; body: Record<string, unknown> };

describe.each(testDatabases())('collect now with the real collection service ($name)', ({ name, open }) => {
  let sim: Simulator;
  let client: CloudClient;
  let db: Database;
  let service: CollectionService;
  let server: TestServer;
  const jar = new Jar();
  let token = '';

  beforeAll(async () => {
    // Latency keeps a run going while the next request comes.
    sim = await startTestSimulator({ seed: 3, size: 6, latencyMs: 50 });
    const config = testConfig();
    client = testClient(sim, config);
    db = await open();
    service = createCollectionService(testDeps(db, sim, client, config), { coalesceMs: 50, heartbeatMs: 1_000, deadAfterMs: 5_000 });
    server = await startTestServer({ collectNow: () => service.collectNow('manual') });
    const page = await request(`${server.url}/`);
    jar.take(page.headers['set-cookie']);
    token = /name="_csrf" value="([^"]+)"/.exec(await page.body.text())![1]!;
  });
  afterAll(async () => {
    await server?.close();
    await service?.stop();
    await service?.idle();
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  /** POST /actions/collect as a JSON client; fails when no answer came within 2 s. */
  const collectNow = async (): Promise<Answer> => {
    const res = await request(`${server.url}/actions/collect`, {
      method: 'POST',
      headers: { ...jar.header(), 'x-csrf-token': token, accept: 'application/json' },
      signal: AbortSignal.timeout(2_000),
    });
    return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
  };

  it('202 with the run it started, then 409 naming that run while it runs', async () => {
    const started = await collectNow();
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ run_id: expect.any(Number), status: 'running', started_at: expect.any(String) });

    const again = await collectNow();
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      error: `a collection is already running (run ${started.body.run_id as number}, started ${started.body.started_at as string})`,
      run_id: started.body.run_id,
      status: 'running',
      started_at: started.body.started_at,
    });
    await service.idle();
  });

  it('409 naming the run of another process that holds its run lock', async () => {
    await service.idle();
    const [other] = await db.query<{ id: number; started_at: Date }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('schedule', '{instances}', 'replica-b:7') RETURNING id, started_at`,
    );
    const lock: HeldLock | null = await db.holdAdvisoryLock(runLockName(other!.id));
    try {
      const answer = await collectNow();
      expect(answer.status).toBe(409);
      expect(answer.body).toMatchObject({ run_id: other!.id, status: 'running', started_at: other!.started_at.toISOString() });
    } finally {
      await lock?.release();
      await db.execute(`UPDATE collection_runs SET status = 'failed' WHERE id = $1`, [other!.id]);
    }
  });

  it.skipIf(name !== 'postgres')('202 when a dead run must be ended first, though its frozen session holds the rows to delete', async () => {
    await service.idle();
    const runner = 'frozen-host:99';
    const [dead] = await db.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id, heartbeat_at) VALUES ('schedule', '{instances}', $1, now() - interval '10 minutes') RETURNING id`,
      [runner],
    );
    const [half] = await db.query<{ id: number }>(`INSERT INTO snapshots (run_id, kind, scope_key, complete) VALUES ($1, 'instance', 'p1-r1', false) RETURNING id`, [
      dead!.id,
    ]);
    const [{ database } = { database: '' }] = await db.query<{ database: string }>('SELECT current_database() AS database');
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${database}`;
    // The frozen process's sessions: its run lock, and a transaction that locked the snapshot's row.
    const frozen = [runSessionName(dead!.id, runner), runnerSessionName(runner)].map((applicationName) => {
      const c = new pg.Client({ connectionString: url.toString(), application_name: applicationName });
      c.on('error', () => undefined); // it is terminated
      return c;
    });
    try {
      await Promise.all(frozen.map((c) => c.connect()));
      await frozen[0]!.query('SELECT pg_advisory_lock(hashtextextended($1, 0))', [runLockName(dead!.id)]);
      await frozen[1]!.query('BEGIN');
      await frozen[1]!.query('UPDATE snapshots SET row_count = 1 WHERE id = $1', [half!.id]);

      const answer = await collectNow();
      expect(answer.status).toBe(202);
      expect(answer.body.run_id).not.toBe(dead!.id);
      const [record] = await db.query<{ status: string }>('SELECT status FROM collection_runs WHERE id = $1', [dead!.id]);
      expect(record!.status).toBe('failed');
      await service.idle();
    } finally {
      for (const c of frozen) await c.end().catch(() => undefined);
    }
  });
});


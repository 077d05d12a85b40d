/**
 * /readyz of the whole service (main.ts's wiring) says "not ready" while a run makes no progress
 * (running, its heartbeat stale: its process is frozen or cut off), naming the run, and is ready
 * again once the run is ended.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { freshPostgresDatabase } from '../helpers/databases.js';

const targets: Array<{ name: string; env(): Promise<{ env: Record<string, string>; cleanup(): Promise<void> }> }> = [
  { name: 'pglite', env: async () => ({ env: { CLOUDTALLY_DATA_DIR: 'memory://' }, cleanup: async () => undefined }) },
];
if (process.env.TEST_DATABASE_URL) {
  const baseUrl = process.env.TEST_DATABASE_URL;
  targets.push({
    name: 'postgres',
    env: async () => {
      const { url, drop } = await freshPostgresDatabase(baseUrl);
      return { env: { DATABASE_URL: url, CLOUDTALLY_DATA_DIR: 'memory://' }, cleanup: drop };
    },
  });
}

describe.each(targets)('/readyz and a stalled collection run ($name)', (target) => {
  let service: RunningService;
  let cleanup: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const prepared = await target.env();
    cleanup = prepared.cleanup;
    // A long heartbeat: the service's own check for dead runs does not come within the test.
    const config = loadConfig({ ...prepared.env, PORT: '0', SIM_SIZE: '4', SIM_TASK_DELAY_MS: '10', CLOUDTALLY_RUN_HEARTBEAT_SECONDS: '120' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 0 });
    await service.ready;
    await service.collection.idle();
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await cleanup();
  });

  const readyz = async () => {
    const res = await fetch(`${service.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; collection: string; checks: { collection: Record<string, unknown> } } };
  };

  it('is not ready while a run has no heartbeat, naming it; ready once it is ended', async () => {
    expect((await readyz()).status).toBe(200);
    const [stalled] = await service.database.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id, started_at, heartbeat_at)
       VALUES ('schedule', '{instances}', 'frozen-host:1', now() - interval '20 minutes', now() - interval '10 minutes') RETURNING id`,
    );

    const during = await readyz();
    expect(during.status).toBe(503);
    expect(during.body.status).toBe('not_ready');
    expect(during.body.collection).toBe('stalled');
    expect(during.body.checks.collection).toMatchObject({
      ok: false,
      state: 'stalled',
      stalled: [{ run_id: stalled!.id, runner: 'frozen-host:1', heartbeat_at: expect.any(String), silent_s: expect.any(Number) }],
      error: expect.stringMatching(new RegExp(`^collection run #${stalled!.id} \\(runner frozen-host:1\\) makes no progress: no heartbeat for (5\\d\\d|6\\d\\d) s;`)),
    });

    // The next start ends it.
    const next = await service.collection.collectNow('manual');
    expect(next.alreadyRunning).toBe(false);
    await service.collection.idle();
    const after = await readyz();
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.collection).toBe('ok');
  }, 120_000);
});

/**
 * A shutdown while a collection is writing leaves a consistent database: no run left "running",
 * no half-written snapshot visible or left behind, and every complete snapshot holds exactly the
 * rows it claims. In-process: the SIGTERM handler's work (shutdownService with the real collection
 * service) is called directly; the signal wiring itself is the start command's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudClient } from '../../src/cloud/index.js';
import { createCollectionService } from '../../src/collect/index.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connection.js';
import { shutdownService } from '../../src/ops/lifecycle.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
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
    for (let i = 0; ; i++) {
      const [row] = await database.query<{ n: string }>('SELECT count(*) AS n FROM snapshots WHERE run_id = $1 AND complete', [runId]);
      if (Number(row!.n) > 0) break;
      if (i > 1000) throw new Error('the collection wrote no snapshot');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
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
});

/** Shared set-up of the collection tests: a simulator, a client on it, a configuration, deps. */
import { createCloudClient, type CloudClient } from '../../src/cloud/index.js';
import { loadConfig, scopesFromManifest, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import type { CollectorDeps } from '../../src/collect/index.js';

/** A small company, tasks that finish at once, a fixed clock so created_at values are stable. */
export async function startTestSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  return startSimulator({ seed: 7, size: 24, taskDelayMs: 10, now: new Date('2025-06-01T12:00:00Z'), ...options });
}

/** Configuration as loaded from a JSON file (tag aliases so `Team` and `équipe` group as `team`). */
export function testConfig(file: Record<string, unknown> = {}): Config {
  return loadConfig(
    { CLOUDTALLY_CONFIG: 'test-config.json' },
    {
      readFile: () =>
        JSON.stringify({
          tag_aliases: { 'équipe': 'team' },
          collect_on_start: false,
          client: { timeout_ms: 10_000, max_concurrency: 6, max_retries: 3 },
          ...file,
        }),
    },
  );
}

export function testClient(sim: Simulator, config: Config): CloudClient {
  return createCloudClient({
    baseUrl: sim.url,
    apiKey: sim.apiKey,
    timeoutMs: config.client.timeoutMs,
    maxConcurrency: config.client.maxConcurrency,
    retry: { maxAttempts: config.client.maxRetries + 1, baseDelayMs: 5, maxDelayMs: 40 },
  });
}

export function testDeps(db: Database, sim: Simulator, client: CloudClient, config: Config, extra: Partial<CollectorDeps> = {}): CollectorDeps {
  const manifest = scopesFromManifest(sim.manifest());
  return {
    db,
    client,
    config,
    scopes: manifest.scopes,
    imageIds: manifest.imageIds,
    freeFeatureIds: manifest.freeFeatureIds,
    logger: silentLogger(),
    runnerId: 'test-runner',
    ...extra,
  };
}

/** Latest complete snapshot id per (kind, scope_key). */
export async function latestSnapshots(db: Database): Promise<Map<string, number>> {
  const rows = await db.query<{ kind: string; scope_key: string; id: number }>(
    `SELECT DISTINCT ON (kind, scope_key) kind, scope_key, id FROM snapshots WHERE complete
      ORDER BY kind, scope_key, taken_at DESC, id DESC`,
  );
  return new Map(rows.map((r) => [`${r.kind}/${r.scope_key}`, r.id]));
}

export function scopeKey(projectId: number, regionId: number): string {
  return `p${projectId}-r${regionId}`;
}

/**
 * The one place that turns the configuration into what runs and talks to the cloud: the settings
 * a run uses (runtimeConfig: in simulator mode the demo's gap caps and budgets), the API client,
 * the built-in simulator when no credentials are configured, and the scopes to collect.
 * `npm start` (main.ts) and `npm run collect` (commands/collect.ts) both use it, so they always
 * collect the same scopes, image ids and free features, and close days under the same gap caps.
 */
import { createCloudClient, type CloudClient, type CloudClientOptions } from './cloud/index.js';
import type { CollectorDeps } from './collect/index.js';
import { scopesFromManifest, type Config } from './config/index.js';
import { demoConfig, withDemoK8sTags } from './demo/config.js';
import { demoPersistence } from './demo/persistence.js';
import type { Queryable } from './db/connection.js';
import type { Logger } from './logger.js';
import { startSimulator, type Simulator } from './simulator/index.js';

export type CollectionScopes = Pick<CollectorDeps, 'scopes' | 'imageIds' | 'freeFeatureIds'>;

export interface CloudConnection {
  client: CloudClient;
  /** The built-in simulator (demo data) when no cloud credentials are configured. */
  simulator?: Simulator;
  scopes: CollectionScopes;
  /** Closes the client, then the simulator. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** The database the collections write to: the demo company is kept there (src/demo/persistence.ts). */
  database: Queryable;
  /** Told of every API request (metrics). */
  onRequest?: CloudClientOptions['onRequest'];
}

/**
 * The settings every run and report of this process uses: the loaded ones, with the demo's where
 * the simulator stands in (`now`: when the process starts, which sizes one demo budget).
 */
export function runtimeConfig(loaded: Config, now: Date): Config {
  return loaded.cloud.mode === 'simulator' ? demoConfig(loaded, now) : loaded;
}

/**
 * What to collect with the simulator: the configured scopes when there are any, else the demo
 * company's (its Kubernetes clusters tagged by the demo's configuration); configured image ids plus the demo's (the demo's images carry tags worth showing);
 * configured free features, else the demo's.
 */
export function simulatorScopes(config: Config, manifest: CollectionScopes): CollectionScopes {
  return {
    scopes: config.scopes.length > 0 ? config.scopes : withDemoK8sTags(manifest.scopes),
    imageIds: [...new Set([...config.imageIds, ...(manifest.imageIds ?? [])])],
    freeFeatureIds: config.freeFeatureIds.length > 0 ? config.freeFeatureIds : manifest.freeFeatureIds,
  };
}

/** The real cloud when configured, else the built-in simulator with its demo company. */
export async function connectCloud(config: Config, logger: Logger, options: ConnectOptions): Promise<CloudConnection> {
  const clientOptions = {
    timeoutMs: config.client.timeoutMs,
    maxPageBytes: config.client.maxPageBytes,
    maxRecordBytes: config.client.maxRecordBytes,
    maxConcurrency: config.client.maxConcurrency,
    retry: { maxAttempts: config.client.maxRetries + 1 },
    logger: logger.child({ component: 'cloud' }),
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
  };
  if (config.cloud.mode === 'remote') {
    const client = createCloudClient({ ...clientOptions, baseUrl: config.cloud.baseUrl, apiKey: config.cloud.apiKey });
    const scopes = { scopes: config.scopes, imageIds: config.imageIds, freeFeatureIds: config.freeFeatureIds };
    logScopes(logger, scopes);
    return { client, scopes, close: () => client.close() };
  }
  // Embedded: on a free port (SIM_PORT is for `npm run sim`), never reachable from elsewhere.
  const simulator = await startSimulator({ ...config.simulator, host: '127.0.0.1', port: 0 }, demoPersistence(config, logger, options.database));
  logger.info({ url: simulator.url }, 'no cloud credentials: using the built-in simulator with demo data');
  const client = createCloudClient({ ...clientOptions, baseUrl: simulator.url, apiKey: simulator.apiKey });
  const scopes = simulatorScopes(config, scopesFromManifest(simulator.manifest()));
  logScopes(logger, scopes);
  return {
    client,
    simulator,
    scopes,
    async close() {
      try {
        await client.close();
      } finally {
        await simulator.close();
      }
    },
  };
}

/** What will be collected, once at start: the first thing to check when a scope seems missing. */
function logScopes(logger: Logger, scopes: CollectionScopes): void {
  logger.info(
    {
      scopes: scopes.scopes.map((s) => `${s.projectId}:${s.regionId}`),
      securityGroups: scopes.scopes.reduce((n, s) => n + s.securityGroups.length, 0),
      imageIds: scopes.imageIds ?? [],
      freeFeatureIds: scopes.freeFeatureIds ?? [],
    },
    'collection scopes',
  );
}

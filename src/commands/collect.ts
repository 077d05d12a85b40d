import { createCloudClient } from '../cloud/index.js';
import { runCollectCommand } from '../collect/index.js';
import { scopesFromManifest, type Config } from '../config.js';
import { demoPersistence } from '../demo/persistence.js';
import type { Logger } from '../logger.js';
import { openMigratedDatabase } from '../ops/startup.js';
import { startSimulator, type Simulator } from '../simulator/index.js';

/** `npm run collect`: one collection now, progress and a summary on the terminal. */
export async function collect(config: Config, logger: Logger): Promise<number> {
  const database = await openMigratedDatabase(config.database, { logger, attempts: 5, delayMs: 2_000 });
  let simulator: Simulator | undefined;
  try {
    let baseUrl: string;
    let apiKey: string;
    let scopes = { scopes: config.scopes, imageIds: config.imageIds, freeFeatureIds: config.freeFeatureIds };
    if (config.cloud.mode === 'remote') {
      ({ baseUrl, apiKey } = config.cloud);
    } else {
      simulator = await startSimulator({ ...config.simulator, host: '127.0.0.1', port: 0 }, demoPersistence(config, logger));
      ({ url: baseUrl, apiKey } = simulator);
      const manifest = scopesFromManifest(simulator.manifest());
      if (config.scopes.length === 0) scopes = manifest;
      process.stdout.write('No cloud credentials: collecting the built-in simulator (demo data).\n');
    }
    const client = createCloudClient({
      baseUrl,
      apiKey,
      timeoutMs: config.client.timeoutMs,
      maxConcurrency: config.client.maxConcurrency,
      retry: { maxAttempts: config.client.maxRetries + 1 },
      logger: logger.child({ component: 'cloud' }),
    });
    try {
      return await runCollectCommand({ db: database, client, config, logger, ...scopes }, { out: process.stdout });
    } finally {
      await client.close();
    }
  } finally {
    await simulator?.close();
    await database.close();
  }
}

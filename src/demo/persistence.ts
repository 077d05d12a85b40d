import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import type { PersistenceOptions } from '../simulator/index.js';

/**
 * Where the built-in simulator of `npm start` and `npm run collect` keeps the demo company, so a
 * restart continues the same company (and its history in the database stays true); undefined
 * (memory only) when the data directory is `memory://`.
 */
export function demoPersistence(config: Config, logger: Logger): PersistenceOptions | undefined {
  if (config.demoStateFile === null) return undefined;
  return { file: config.demoStateFile, log: logger.child({ component: 'simulator' }) };
}

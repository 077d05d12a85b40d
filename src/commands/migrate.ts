import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import { defaultRunnerId, runnerSessionName } from '../collect/index.js';
import { openMigratedDatabase, sessionOptions } from '../ops/startup.js';

/** `cloudtally migrate`: apply the migrations (under an advisory lock) and exit. */
export async function migrate(config: Config, logger: Logger): Promise<number> {
  const open = sessionOptions(config.databaseSessions, runnerSessionName(defaultRunnerId()));
  const database = await openMigratedDatabase(config.database, { logger, attempts: 3, delayMs: 1_000, open });
  await database.close();
  return 0;
}

import { DEFAULT_STOP_TIMEOUT_MS, defaultRunnerId, runCollectCommand, runnerSessionName } from '../collect/index.js';
import type { Config } from '../config/index.js';
import { workAfterRun } from '../notify/after-run.js';
import { connectCloud, runtimeConfig } from '../connect-cloud.js';
import type { Logger } from '../logger.js';
import { openMigratedDatabase, sessionOptions } from '../ops/startup.js';
import { ensurePartitionKeys } from '../costing/derive/partition-keys.js';
import { configuredScopeKeys } from '../auth/configured-scopes.js';
import { abortOnSignal, signalExitCode } from './signals.js';

/** Time after a stop signal for the run to stop (DEFAULT_STOP_TIMEOUT_MS) plus closing everything. */
const STOP_GRACE_MS = DEFAULT_STOP_TIMEOUT_MS + 10_000;

/**
 * `npm run collect`: one collection now, progress and a summary on the terminal. SIGINT/SIGTERM
 * stop the run at its next page or item (finished snapshots stay, unfinished ones are deleted,
 * the run is recorded as partial or failed) and the command exits 130/143; a second signal exits
 * at once.
 */
export async function collect(loaded: Config, logger: Logger): Promise<number> {
  // The same settings as the service (the demo's gap caps in simulator mode), so both close days alike.
  const config = runtimeConfig(loaded, new Date());
  const stop = abortOnSignal(logger, STOP_GRACE_MS);
  try {
    const code = await collectUntilStopped(config, logger, stop.signal);
    const signal = stop.received();
    if (!signal) return code;
    process.stdout.write(`stopped by ${signal}: finished snapshots kept, unfinished ones deleted; exit ${signalExitCode(signal)}\n`);
    return signalExitCode(signal);
  } finally {
    stop.dispose();
  }
}

async function collectUntilStopped(config: Config, logger: Logger, signal: AbortSignal): Promise<number> {
  const runnerId = defaultRunnerId();
  const database = await openMigratedDatabase(config.database, {
    logger,
    attempts: 5,
    delayMs: 2_000,
    open: sessionOptions(config.databaseSessions, runnerSessionName(runnerId)),
  });
  try {
    await ensurePartitionKeys(database, configuredScopeKeys(config), logger);
    const cloud = await connectCloud(config, logger, { database });
    try {
      if (cloud.simulator) process.stdout.write('No cloud credentials: collecting the built-in simulator (demo data).\n');
      if (signal.aborted) {
        process.stdout.write('stopped before the collection started\n');
        return 1;
      }
      return await runCollectCommand(
        {
          db: database,
          client: cloud.client,
          config,
          logger,
          runnerId,
          ...cloud.scopes,
          afterRun: workAfterRun({ db: database, config, logger }),
        },
        { out: process.stdout, signal },
      );
    } finally {
      await cloud.close();
    }
  } finally {
    await database.close();
  }
}

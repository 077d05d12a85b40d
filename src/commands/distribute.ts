import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import { openDatabase } from '../db/connection.js';
import { citusVersion, distributeTables, NotCitusError, PlacementError } from '../db/citus-distribute.js';
import { migrateDatabase } from '../db/migrate.js';
import { databaseTargetOf, sessionOptions } from '../ops/startup.js';

/** Exit codes of `distribute` (also in docs/scaling.md). */
export const DISTRIBUTE_EXIT = { ok: 0, failed: 1, notCitus: 2 } as const;

/**
 * `npm run cli -- distribute`: on a Citus coordinator (DATABASE_URL), the migrations, then every
 * table placed as src/db/distribution.ts says and the identity sequences set past their rows.
 * Refuses plain Postgres and PGlite before changing anything.
 */
export async function distribute(config: Config, logger: Logger): Promise<number> {
  const target = databaseTargetOf(config.database);
  if (config.database.driver !== 'pg') {
    process.stderr.write(`distribute needs DATABASE_URL naming a Citus coordinator; ${target} is PGlite, which cannot be distributed. Nothing was changed.\n`);
    return DISTRIBUTE_EXIT.notCitus;
  }
  const database = await openDatabase(config.database, sessionOptions(config.databaseSessions, 'cloudtally distribute'));
  try {
    if (!(await citusVersion(database))) {
      process.stderr.write(`${new NotCitusError(target).message}\n`);
      return DISTRIBUTE_EXIT.notCitus;
    }
    await migrateDatabase(database);
    const summary = await distributeTables(database, {
      onTable: (outcome) => logger.info({ ...outcome }, `distribute: ${outcome.table} ${outcome.action}`),
    });
    for (const fix of summary.sequences) {
      logger.info({ ...fix }, `distribute: sequence ${fix.sequence} moved past the rows of ${fix.table}`);
    }
    const placed = summary.tables.filter((t) => t.action === 'distributed').length;
    const out = process.stdout;
    if (!summary.changed) {
      out.write(`Nothing to change on ${target} (citus ${summary.citusVersion}): every table is placed as planned and every sequence is past its rows.\n`);
    } else {
      out.write(`Placed ${placed} tables on ${target} (citus ${summary.citusVersion}); ${summary.sequences.length} sequences moved past their rows.\n`);
    }
    return DISTRIBUTE_EXIT.ok;
  } catch (err) {
    if (err instanceof PlacementError) {
      logger.error({ err, database: target }, 'distribute failed');
      process.stderr.write(`distribute: ${err.message}\n`);
      return DISTRIBUTE_EXIT.failed;
    }
    throw err;
  } finally {
    await database.close();
  }
}

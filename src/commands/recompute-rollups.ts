import { defaultRunnerId, runnerSessionName } from '../collect/index.js';
import { recomputeRollups } from '../collect/recompute.js';
import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import { openMigratedDatabase, sessionOptions } from '../ops/startup.js';
import { ensurePartitionKeys } from '../costing/derive/partition-keys.js';
import { configuredScopeKeys } from '../auth/configured-scopes.js';

/** Exit codes of `recompute-rollups` (also in docs/tags.md). */
export const RECOMPUTE_EXIT = {
  ok: 0,
  /** Some snapshots failed (the others are done); running the command again is safe. */
  someFailed: 1,
  /** A collection is running: its new snapshots would race the recomputation. Try again later. */
  collectionRunning: 75,
} as const;

/**
 * `npm run cli -- recompute-rollups`: the current tag rules applied to every kept priced
 * snapshot's stored tags and cost rollups, and to the tag values of sealed days' daily costs.
 */
export async function recomputeRollupsCommand(config: Config, logger: Logger): Promise<number> {
  const open = sessionOptions(config.databaseSessions, runnerSessionName(defaultRunnerId()));
  const database = await openMigratedDatabase(config.database, { logger, attempts: 3, delayMs: 1_000, open });
  try {
    const running = await database.query<{ id: number }>(
      `select id from collection_runs where status = 'running' and heartbeat_at > now() - ($1::double precision * interval '1 millisecond') order by id limit 1`,
      [config.collectionRuns.staleAfterMs],
    );
    if (running.length > 0) {
      process.stderr.write(`A collection is running (run ${running[0]!.id}); try again when it has finished.\n`);
      return RECOMPUTE_EXIT.collectionRunning;
    }
    // A scope key configured since the last start gets its partitions here too (and is then complete).
    await ensurePartitionKeys(database, configuredScopeKeys(config), logger);
    let lastPercent = -1;
    const summary = await recomputeRollups(database, config, {
      lockTimeoutMs: config.databaseSessions.lockTimeoutMs,
      onSnapshot: (done, total) => {
        const percent = Math.floor((done / total) * 10) * 10;
        if (percent !== lastPercent && process.stderr.isTTY) process.stderr.write(`  ${done} of ${total} snapshots\n`);
        lastPercent = percent;
      },
    });
    const out = process.stdout;
    out.write(`Recomputed the cost rollups of ${summary.snapshots} snapshots with the current tag rules.\n`);
    out.write(`Resource rows re-tagged from their tags as received: ${summary.retaggedRows}.\n`);
    out.write(`Daily cost rows of sealed days merged into their canonical tag value: ${summary.mergedDailyRows}.\n`);
    for (const f of summary.failures.slice(0, 20)) out.write(`  snapshot ${f.snapshotId} failed: ${f.message}\n`);
    if (summary.failures.length > 20) out.write(`  ... and ${summary.failures.length - 20} more\n`);
    if (summary.failures.length > 0) {
      out.write(`${summary.failures.length} snapshots failed and keep their previous rollups; run the command again.\n`);
      logger.error({ failures: summary.failures.length }, 'recompute-rollups: some snapshots failed');
      return RECOMPUTE_EXIT.someFailed;
    }
    out.write('Restart the service so that cached reports are computed afresh.\n');
    return RECOMPUTE_EXIT.ok;
  } finally {
    await database.close();
  }
}

/**
 * Report reads on a read replica (DATABASE_READ_URL). The data version is always read on the
 * primary (it is what the report cache keys on); a report then runs on the replica only when the
 * replica shows that very version, so a lagging replica never makes a report show older data than
 * its version claims: after a short wait for it to catch up, the read goes to the primary.
 */
import type { Database } from '../../db/connection.js';
import type { Logger } from '../../logger.js';
import type { ReadRouter } from '../report.js';
import { dataVersion } from './cache.js';

export type ReadTarget = 'replica' | 'primary';
/** Why a read went where it went. */
export type ReadReason = 'current' | 'behind' | 'error';

export interface ReadRoutingOptions {
  logger: Logger;
  /** How long a report waits for a lagging replica before it reads the primary. Default 500 ms. */
  catchUpMs?: number;
  /** Pause between two looks at the replica's version. Default 50 ms. */
  pollMs?: number;
  /** Every routing decision (for the metrics). */
  onRoute?: (target: ReadTarget, reason: ReadReason) => void;
}

export function createReadRouting(replica: Database, options: ReadRoutingOptions): ReadRouter<Database> {
  const catchUpMs = options.catchUpMs ?? 500;
  const pollMs = options.pollMs ?? 50;
  const route = (target: ReadTarget, reason: ReadReason, db: Database): Database => {
    options.onRoute?.(target, reason);
    return db;
  };
  return {
    async readerAt(primary, version, versionOptions = {}) {
      const deadline = Date.now() + catchUpMs;
      let seen: string;
      for (;;) {
        try {
          seen = await dataVersion(replica, versionOptions);
        } catch (err) {
          options.logger.warn({ err: { message: (err as Error).message } }, 'read replica failed; reading the primary');
          return route('primary', 'error', primary);
        }
        if (seen === version) return route('replica', 'current', replica);
        if (Date.now() + pollMs > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
      }
      options.logger.info({ primary_version: version, replica_version: seen }, 'read replica behind the primary; reading the primary');
      return route('primary', 'behind', primary);
    },
  };
}

/**
 * Report reads on a read replica (DATABASE_READ_URL). The data version is always read on the
 * primary (it is what the report cache keys on); a report then runs on the replica only when the
 * replica shows that very version, so a lagging replica never makes a report show older data than
 * its version claims.
 *
 * The replica's position is looked at once per data version, not per request: the first request
 * of a version waits for that one look (one short query, shared by every request arriving
 * meanwhile); once the replica has shown a version it serves every later request of it without
 * another look (a replica never goes back). While it is behind or failing, requests read the
 * primary at once and the replica is looked at again in the background at most every `recheckMs`,
 * so a replica that catches up (replay resumed, server back) takes the reads back without any
 * request waiting for it.
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
  /** How often a replica found behind or failing is looked at again (in the background). Default 1000 ms. */
  recheckMs?: number;
  /** Every routing decision (for the metrics). */
  onRoute?: (target: ReadTarget, reason: ReadReason) => void;
  /** Every look at the replica's position (for the metrics). */
  onLook?: () => void;
  /** How long the first request of a version waits for the look before it reads the primary (a replica that does not answer). Default 2000 ms. */
  lookTimeoutMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

interface Position {
  /** The data version this position was looked at for. */
  version: string;
  reason: ReadReason;
  checkedAt: number;
  /** The look under way, if any. */
  looking: Promise<ReadReason> | null;
}

export function createReadRouting(replica: Database, options: ReadRoutingOptions): ReadRouter<Database> {
  const recheckMs = options.recheckMs ?? 1000;
  const now = options.now ?? Date.now;
  const lookTimeoutMs = options.lookTimeoutMs ?? 2000;
  // One position per kind of data version (with or without the actions), of its newest version.
  const positions = new Map<boolean, Position>();

  const look = (version: string, actions: boolean): Promise<ReadReason> => {
    const known = positions.get(actions);
    const current: Position = known?.version === version ? known : { version, reason: 'behind', checkedAt: 0, looking: null };
    positions.set(actions, current);
    if (current.looking) return current.looking;
    options.onLook?.();
    current.looking = dataVersion(replica, { actions })
      .then(
        (seen): ReadReason => {
          if (seen === version) return 'current';
          if (current.reason !== 'behind' || current.checkedAt === 0) {
            options.logger.info({ primary_version: version, replica_version: seen }, 'read replica behind the primary; reading the primary until it catches up');
          }
          return 'behind';
        },
        (err: unknown): ReadReason => {
          if (current.reason !== 'error' || current.checkedAt === 0) {
            options.logger.warn({ err: { message: (err as Error).message } }, 'read replica failed; reading the primary until it answers');
          }
          return 'error';
        },
      )
      .then((reason) => {
        current.reason = reason;
        current.checkedAt = now();
        current.looking = null;
        return reason;
      });
    return current.looking;
  };

  const route = (reason: ReadReason, primary: Database): Database => {
    const target: ReadTarget = reason === 'current' ? 'replica' : 'primary';
    options.onRoute?.(target, reason);
    return target === 'replica' ? replica : primary;
  };

  return {
    unavailable(err) {
      options.logger.warn({ err: { message: (err as Error).message } }, 'read replica unreachable during a report; reading the primary until it answers');
      for (const position of positions.values()) {
        position.reason = 'error';
        position.checkedAt = now();
      }
      options.onRoute?.('primary', 'error');
    },
    async readerAt(primary, version, versionOptions = {}) {
      const actions = versionOptions.actions ?? false;
      const position = positions.get(actions);
      const known = position?.version === version && position.checkedAt > 0 ? position : null;
      if (!known) {
        let timer: NodeJS.Timeout | undefined;
        const unanswered = new Promise<ReadReason>((resolve) => {
          timer = setTimeout(() => resolve('error'), lookTimeoutMs);
        });
        try {
          return route(await Promise.race([look(version, actions), unanswered]), primary);
        } finally {
          clearTimeout(timer);
        }
      }
      if (known.reason !== 'current' && now() - known.checkedAt >= recheckMs) void look(version, actions);
      return route(known.reason, primary);
    },
  };
}

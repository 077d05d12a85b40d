/**
 * node-cron's RunCoordinator on Postgres: several replicas on one database run each scheduled
 * slot once. node-cron asks `shouldRun('<task name>:<slot ISO time>', ttl)` on every replica when
 * a slot fires; the first replica to insert the slot's claim row runs it, the others skip it.
 *
 * The claim key is `<group>@<slot time>`, where the group is the task name up to its first `.`:
 * the service names its collection tasks `collect.<n>` (one per distinct cron expression), so all
 * collectors due at the same time are claimed together by ONE replica, which runs them as one run
 * in dependency order; `prune` has its own claims. A replica asking again for a slot it already
 * holds gets true (its second task of the same slot joins the run it claimed).
 */
import type { RunCoordinator } from 'node-cron';
import type { Queryable } from '../db/connection.js';

export interface PgRunCoordinator extends RunCoordinator {
  shouldRun(key: string, ttlMs: number): Promise<boolean>;
  /** The claim key of a node-cron coordination key: `collect.2:2025-...Z` -> `collect@2025-...Z`. */
  claimKeyOf(key: string): string;
}

/** Minimum lifetime of a claim; old claims are deleted by pruneHistory. */
const MIN_CLAIM_TTL_MS = 24 * 60 * 60 * 1000;

export function createPgRunCoordinator(db: Queryable, claimant: string): PgRunCoordinator {
  const claimKeyOf = (key: string): string => {
    const colon = key.indexOf(':');
    const name = colon < 0 ? key : key.slice(0, colon);
    const slot = colon < 0 ? '' : key.slice(colon + 1);
    const dot = name.indexOf('.');
    return `${dot < 0 ? name : name.slice(0, dot)}@${slot}`;
  };
  return {
    claimKeyOf,
    async shouldRun(key, ttlMs) {
      const claimKey = claimKeyOf(key);
      const ttl = Math.max(ttlMs, MIN_CLAIM_TTL_MS);
      const rows = await db.query<{ claimed_by: string }>(
        `WITH inserted AS (
           INSERT INTO schedule_claims (key, claimed_by, claimed_at, expires_at)
           VALUES ($1, $2, now(), now() + ($3::double precision * interval '1 millisecond'))
           ON CONFLICT (key) DO NOTHING
           RETURNING claimed_by)
         SELECT claimed_by FROM inserted
         UNION ALL
         SELECT claimed_by FROM schedule_claims WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`,
        [claimKey, claimant, ttl],
      );
      return rows[0]?.claimed_by === claimant;
    },
  };
}

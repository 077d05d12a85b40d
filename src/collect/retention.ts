/**
 * Retention: snapshots older than `retentionDays` are deleted; older than `retentionHourlyDays`
 * they are thinned to one complete snapshot per (kind, scope, UTC day), the day's last one.
 *
 * What reports need beyond that survives: before any priced snapshot (instance, cluster,
 * k8s_price) of a UTC day is deleted for the first time, cost_daily is recomputed for that day
 * from its full detail (refreshCostDaily) and the day is sealed (cost_daily_sealed_days), so it is
 * never recomputed from the thinned remains. resource_presence has no snapshot foreign key and
 * is kept.
 *
 * Deletes go in small batches of snapshots, each its own statement, so that a report never
 * waits long behind them (on Postgres readers are not blocked at all; PGlite runs one statement
 * at a time). Each step waits at most lockTimeoutMs for a lock (a session that holds one and does
 * not move must not stall pruning), and is tried again twice before pruning gives up until the
 * next day.
 */
import { refreshCostDaily, writeDailyTotals } from '../costing/derive/closed-days.js';
import { gapCapsFor, type GapCaps } from '../costing/gap-caps.js';
import type { Database, Queryable } from '../db/connection.js';
import { isLockTimeout } from '../db/errors.js';
import { deleteSnapshots } from '../db/delete-snapshots.js';
import { withLockTimeout } from '../db/local-settings.js';
import { deleteOrphanStagedRows, pruneVersions } from '../db/versions.js';
import { CollectionStoppedError } from './errors.js';
import { PRICED_KINDS } from './snapshot-writer.js';
import type { CollectorDeps } from './types.js';

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_PRUNE_BATCH_SIZE = 10;

export interface PruneOptions {
  /** The reference time (tests and demo history); default now. */
  now?: Date;
  /** Snapshots deleted per statement (default 10). */
  batchSize?: number;
  /** Aborting stops between batches. */
  signal?: AbortSignal;
  /** lock_timeout of each step (default: the configuration's databaseSessions.lockTimeoutMs). */
  lockTimeoutMs?: number;
}

export interface PruneResult {
  snapshotsDeleted: number;
  /** UTC days whose cost_daily was computed and sealed before their detail was deleted. */
  daysSealed: string[];
  runsDeleted: number;
}

type Candidate = {
  id: number;
  kind: string;
  day: string;
};

export async function pruneHistory(
  deps: Pick<CollectorDeps, 'db' | 'config' | 'logger'>,
  opts: PruneOptions = {},
): Promise<PruneResult> {
  const { db, config, logger } = deps;
  const now = opts.now ?? new Date();
  const batchSize = opts.batchSize ?? DEFAULT_PRUNE_BATCH_SIZE;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${batchSize}`);
  const cutoff = new Date(now.getTime() - config.retentionDays * DAY_MS);
  // Thinning works on whole UTC days, so a day is never thinned twice from two different cut points.
  const hourlyCutoff = startOfUtcDay(new Date(now.getTime() - config.retentionHourlyDays * DAY_MS));

  const step = boundedStep(db, opts.lockTimeoutMs ?? config.databaseSessions.lockTimeoutMs);

  const candidates = await findCandidates(db, cutoff, hourlyCutoff);
  // Seal with the same gap caps the reports use, so a sealed day equals what the reports showed.
  const daysSealed = await sealDays(db, step, candidates, now, gapCapsFor(config));

  let snapshotsDeleted = 0;
  for (let i = 0; i < candidates.length; i += batchSize) {
    if (opts.signal?.aborted) throw new CollectionStoppedError('pruning stopped (service shutting down)');
    const ids = candidates.slice(i, i + batchSize).map((c) => c.id);
    snapshotsDeleted += await step((tx) => deleteSnapshots(tx, 's.id = ANY($1::int[])', [ids]));
  }

  // Versions no remaining snapshot sees (a deleted snapshot's versions stay while a kept one needs them).
  const thinnedAt = candidates.length > 0 ? thinnedRange(candidates) : undefined;
  const versionsDeleted = snapshotsDeleted > 0 ? await step((tx) => pruneVersions(tx, cutoff, thinnedAt)) : 0;
  const orphansDeleted = await step((tx) => deleteOrphanStagedRows(tx));

  const runsDeleted = (
    await step((tx) =>
      tx.execute(
        `DELETE FROM collection_runs r
          WHERE r.status <> 'running' AND r.started_at < $1
            AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.run_id = r.id)`,
        [cutoff],
      ),
    )
  ).rowCount;
  await step((tx) => tx.execute('DELETE FROM schedule_claims WHERE expires_at < now()'));
  // Explanations of days whose snapshots are gone (the day is read from its sealed figures now).
  const explanationsDeleted = (
    await step((tx) => tx.execute(`DELETE FROM anomaly_explanations WHERE day < ($1::timestamptz at time zone 'UTC')::date`, [cutoff]))
  ).rowCount;

  if (snapshotsDeleted > 0 || runsDeleted > 0 || orphansDeleted > 0 || explanationsDeleted > 0) {
    logger.info({ snapshotsDeleted, versionsDeleted, orphansDeleted, explanationsDeleted, daysSealed, runsDeleted, cutoff, hourlyCutoff }, 'history pruned');
  }
  return { snapshotsDeleted, daysSealed, runsDeleted };
}

type Step = <T>(fn: (tx: Queryable) => Promise<T>) => Promise<T>;

const STEP_ATTEMPTS = 3;

/** A step of pruning: its own transaction with bounded lock waits, tried again when it met a lock held elsewhere. */
function boundedStep(db: Database, lockTimeoutMs: number): Step {
  return async (fn) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await withLockTimeout(db, lockTimeoutMs, fn);
      } catch (err) {
        if (!isLockTimeout(err) || attempt >= STEP_ATTEMPTS) throw err;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  };
}

/** The span of the days whose snapshots were just deleted (versions ending in it may now be unseen). */
function thinnedRange(candidates: readonly Candidate[]): { from: Date; to: Date } {
  const days = candidates.map((c) => c.day).sort();
  return { from: new Date(`${days[0]}T00:00:00Z`), to: new Date(Date.parse(`${days[days.length - 1]}T00:00:00Z`) + 2 * DAY_MS) };
}

function startOfUtcDay(date: Date): Date {
  return new Date(Math.floor(date.getTime() / DAY_MS) * DAY_MS);
}

/** Expired snapshots, then the extra complete snapshots of each thinned (kind, scope, day). */
async function findCandidates(db: Database, cutoff: Date, hourlyCutoff: Date): Promise<Candidate[]> {
  const expired = await db.query<Candidate>(
    `SELECT s.id, s.kind, to_char(s.taken_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
       FROM snapshots s
      WHERE s.taken_at < $1
        AND (s.complete OR NOT EXISTS (SELECT 1 FROM collection_runs r WHERE r.id = s.run_id AND r.status = 'running'))
      ORDER BY s.taken_at, s.id`,
    [cutoff],
  );
  const thinned = await db.query<Candidate>(
    `SELECT id, kind, day FROM (
       SELECT s.id, s.kind, s.taken_at, to_char(s.taken_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              row_number() OVER (PARTITION BY s.kind, s.scope_key, (s.taken_at AT TIME ZONE 'UTC')::date
                                 ORDER BY s.taken_at DESC, s.id DESC) AS rn
         FROM snapshots s
        WHERE s.complete AND s.taken_at >= $1 AND s.taken_at < $2) t
      WHERE rn > 1
      ORDER BY taken_at, id`,
    [cutoff, hourlyCutoff],
  );
  return [...expired, ...thinned];
}

/**
 * Computes cost_daily for every not-yet-sealed UTC day that is about to lose priced detail, and
 * seals those days, in one transaction per contiguous range of days.
 */
async function sealDays(db: Database, step: Step, candidates: readonly Candidate[], now: Date, maxGapHours: number | GapCaps): Promise<string[]> {
  const days = [...new Set(candidates.filter((c) => PRICED_KINDS.has(c.kind as never)).map((c) => c.day))].sort();
  if (days.length === 0) return [];
  const sealed = new Set(
    (await db.query<{ day: string }>('SELECT day FROM cost_daily_sealed_days WHERE day = ANY($1::date[])', [days])).map((r) => r.day),
  );
  const toSeal = days.filter((d) => !sealed.has(d));
  for (const range of contiguousRanges(toSeal)) {
    await step(async (tx) => {
      await refreshCostDaily(tx, { fromDay: range[0]!, toDay: range[range.length - 1]! }, { now, maxGapHours });
      await tx.execute('INSERT INTO cost_daily_sealed_days (day) SELECT unnest($1::date[]) ON CONFLICT DO NOTHING', [range]);
      // A sealed day counts as covered whole: its per-scope coverage (kept while it was closed) is not read again.
      await tx.execute('DELETE FROM cost_daily_coverage WHERE day = ANY($1::date[])', [range]);
      await writeDailyTotals(tx, range);
    });
  }
  return toSeal;
}

/** Sorted 'YYYY-MM-DD' days split into runs of consecutive days. */
function contiguousRanges(days: readonly string[]): string[][] {
  const ranges: string[][] = [];
  for (const day of days) {
    const last = ranges[ranges.length - 1];
    const previous = last?.[last.length - 1];
    if (last && previous && Date.parse(`${day}T00:00:00Z`) - Date.parse(`${previous}T00:00:00Z`) === DAY_MS) last.push(day);
    else ranges.push([day]);
  }
  return ranges;
}

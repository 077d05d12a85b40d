/**
 * The collection_runs row of a run: guarded start (one running run at a time across every
 * process on the database), heartbeat, finish, and the clean-up of runs whose process died.
 *
 * A running run holds its own advisory lock (runLockName) for its whole life, on a connection of
 * its own: when its process dies, Postgres drops the connection and the lock with it, so the next
 * start sees at once that the run is dead (no waiting for its heartbeat to go stale). On PGlite
 * the lock is in-process, and the data folder lock guarantees there is no other process: a
 * running run that no one here holds is dead. A run whose process lives but hangs (lock held,
 * heartbeat stale) is still ended by its heartbeat.
 */
import type { Database, HeldLock, Queryable } from '../db/connection.js';
import type { RunError, RunStatus, RunTrigger } from '../db/schema.js';
import type { CollectorName, RowCounts } from './types.js';

/** Advisory lock taken only around the check-and-insert of a new run (never held during the run). */
const START_LOCK = 'cloudtally:collection-start';

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A running run whose heartbeat is older than this is dead (12 missed heartbeats). */
export const DEFAULT_DEAD_AFTER_MS = 180_000;

export interface RunningRun {
  runId: number;
  trigger: RunTrigger;
  runnerId: string;
  startedAt: Date;
}

export type BeginResult = { started: true; runId: number; lock: HeldLock } | { started: false; running: RunningRun };

/** The advisory lock a running run holds until it has ended. */
export function runLockName(runId: number): string {
  return `cloudtally:collection-run:${runId}`;
}

/**
 * Inserts a `running` run unless one is already running (anywhere): then answers with that run.
 * The check and the insert happen under an advisory lock (Postgres: cluster-wide; PGlite: in
 * process), so two concurrent triggers give one run. Dead runs found on the way are marked failed.
 */
export async function beginRun(
  db: Database,
  input: { trigger: RunTrigger; collectors: readonly CollectorName[]; runnerId: string; startedAt: Date; deadAfterMs: number },
): Promise<BeginResult> {
  const locked = await db.withAdvisoryLock(START_LOCK, async (session): Promise<BeginResult> => {
    await failDeadRunsLocked(db, session, input.deadAfterMs);
    const running = await session.query<{ id: number; trigger: RunTrigger; runner_id: string; started_at: Date }>(
      `SELECT id, trigger, runner_id, started_at FROM collection_runs WHERE status = 'running' ORDER BY id LIMIT 1`,
    );
    const current = running[0];
    if (current) {
      return {
        started: false,
        running: { runId: current.id, trigger: current.trigger, runnerId: current.runner_id, startedAt: current.started_at },
      };
    }
    const inserted = await session.query<{ id: number }>(
      `INSERT INTO collection_runs (trigger, collectors, runner_id, started_at, heartbeat_at, status)
       VALUES ($1, $2, $3, $4, now(), 'running') RETURNING id`,
      [input.trigger, input.collectors, input.runnerId, input.startedAt],
    );
    const runId = inserted[0]!.id;
    // Taken before the start lock is let go, so no other start can see the run without its lock.
    const lock = await db.holdAdvisoryLock(runLockName(runId)).catch((err: unknown) => err as Error);
    if (!lock || lock instanceof Error) {
      const reason = lock instanceof Error ? lock.message : 'held elsewhere';
      await session.execute(
        `UPDATE collection_runs SET status = 'failed', finished_at = now(),
                errors = jsonb_build_array(jsonb_build_object('collector', '*', 'scope', '*', 'endpoint', '', 'status', NULL, 'message', $2::text))
          WHERE id = $1`,
        [runId, `could not take the run lock: ${reason}`],
      );
      throw new Error(`could not take the lock of collection run #${runId}: ${reason}`);
    }
    return { started: true, runId, lock };
  });
  if (!locked.acquired) throw new Error('could not take the collection start lock');
  return locked.value;
}

/** Touches the run's heartbeat (only while it is running). */
export async function heartbeat(db: Queryable, runId: number): Promise<void> {
  await db.execute(`UPDATE collection_runs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`, [runId]);
}

/**
 * Records the end of a run and deletes any incomplete snapshot it left behind. Does not overwrite
 * a run that was already ended elsewhere (marked dead, or force-stopped); returns the final status.
 */
export async function finishRun(
  db: Database,
  runId: number,
  result: { status: RunStatus; finishedAt: Date; counts: RowCounts; errors: RunError[] },
): Promise<RunStatus> {
  return db.transaction(async (tx) => {
    await tx.execute('DELETE FROM snapshots WHERE run_id = $1 AND NOT complete', [runId]);
    const updated = await tx.query<{ status: RunStatus }>(
      `UPDATE collection_runs SET status = $2, finished_at = $3, counts = $4::jsonb, errors = $5::jsonb
        WHERE id = $1 AND status = 'running' RETURNING status`,
      [runId, result.status, result.finishedAt, JSON.stringify(result.counts), JSON.stringify(result.errors)],
    );
    if (updated[0]) return updated[0].status;
    const current = await tx.query<{ status: RunStatus }>('SELECT status FROM collection_runs WHERE id = $1', [runId]);
    return current[0]?.status ?? 'failed';
  });
}

/** Ends a run as failed from outside it (dead runner, stop timeout) and rolls back its incomplete snapshots. */
export async function failRun(db: Database, runId: number, message: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const error: RunError = { collector: '*', scope: '*', endpoint: '', status: null, message };
    const updated = await tx.execute(
      `UPDATE collection_runs SET status = 'failed', finished_at = now(), errors = errors || $2::jsonb
        WHERE id = $1 AND status = 'running'`,
      [runId, JSON.stringify([error])],
    );
    await tx.execute('DELETE FROM snapshots WHERE run_id = $1 AND NOT complete', [runId]);
    return updated.rowCount === 1;
  });
}

/**
 * Marks failed every running run whose process is gone (its run lock is free) or hangs (its
 * heartbeat is older than deadAfterMs), then deletes every incomplete snapshot that no running run
 * owns. Runs under the start lock, so a run being started is never taken for a dead one. Returns
 * the dead run ids.
 */
export async function failDeadRuns(db: Database, deadAfterMs: number): Promise<number[]> {
  const locked = await db.withAdvisoryLock(START_LOCK, (session) => failDeadRunsLocked(db, session, deadAfterMs));
  if (!locked.acquired) throw new Error('could not take the collection start lock');
  return locked.value;
}

async function failDeadRunsLocked(db: Database, session: Queryable, deadAfterMs: number): Promise<number[]> {
  const silent = await session.query<{ id: number }>(
    `UPDATE collection_runs
        SET status = 'failed', finished_at = now(),
            errors = errors || jsonb_build_array(jsonb_build_object(
              'collector', '*', 'scope', '*', 'endpoint', '', 'status', NULL,
              'message', 'run died: no heartbeat since ' || to_char(heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                         || ' from runner ' || runner_id || '; its unfinished snapshots were deleted'))
      WHERE status = 'running' AND heartbeat_at < now() - ($1::double precision * interval '1 millisecond')
      RETURNING id`,
    [deadAfterMs],
  );
  const running = await session.query<{ id: number }>(`SELECT id FROM collection_runs WHERE status = 'running' ORDER BY id`);
  const abandoned: number[] = [];
  for (const { id } of running) {
    // Free means no live process holds it: the run's process ended without ending the run.
    const probe = await db.withAdvisoryLock(runLockName(id), async () => undefined, { wait: false });
    if (probe.acquired) abandoned.push(id);
  }
  const ended =
    abandoned.length === 0
      ? []
      : await session.query<{ id: number }>(
          `UPDATE collection_runs
              SET status = 'failed', finished_at = now(),
                  errors = errors || jsonb_build_array(jsonb_build_object(
                    'collector', '*', 'scope', '*', 'endpoint', '', 'status', NULL,
                    'message', 'run died: its process (runner ' || runner_id || ') ended without finishing it; its unfinished snapshots were deleted'))
            WHERE status = 'running' AND id = ANY($1::int[])
            RETURNING id`,
          [abandoned],
        );
  await session.execute(
    `DELETE FROM snapshots s
      WHERE NOT s.complete
        AND NOT EXISTS (SELECT 1 FROM collection_runs r WHERE r.id = s.run_id AND r.status = 'running')`,
  );
  return [...silent, ...ended].map((r) => r.id);
}

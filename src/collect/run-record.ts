/**
 * The collection_runs row of a run: guarded start (one running run at a time across every
 * process on the database), heartbeat, finish, and the end of runs whose process did not end them.
 *
 * A running run holds its own advisory lock (runLockName) for its whole life, on a connection of
 * its own that also writes its heartbeat (run.ts). Every session of a process is named after its
 * runner (runnerSessionName; the lock's session runSessionName), so another process can find them.
 *
 * How a run ends when its own process does not end it, and what its record then says:
 * - "no heartbeat since ... (process gone ...)": the heartbeat is older than the stale threshold
 *   (the process is frozen, hung, or cut off from the database). The next start terminates every
 *   session the process still has (an open transaction, a COPY, the run lock: whatever it holds
 *   is released) and ends the run.
 * - "its process ... ended without finishing it (process gone ...)": its run lock is free and its
 *   process has no session left (killed, crashed): ended at once.
 * - "session lost": its process lives but the session holding the lock died (Postgres restarted,
 *   the session was terminated, the network dropped it). The process stops the run and closes it
 *   itself once the database answers (run.ts). Others leave such a run alone while its heartbeat
 *   is fresh and its process has sessions on the database.
 * Ending a run deletes its unfinished snapshots and marks it failed in one transaction whose lock
 * waits are bounded (lock_timeout), so the message is there only once the delete is done.
 *
 * On PGlite the lock is in-process and the data folder lock guarantees there is no other process:
 * a running run that no one here holds is dead.
 */
import { createHash } from 'node:crypto';
import type { Database, HeldLock, Queryable } from '../db/connection.js';
import { isLockTimeout } from '../db/errors.js';
import { deleteSnapshots } from '../db/delete-snapshots.js';
import { withLockTimeout } from '../db/local-settings.js';
import type { RunError, RunStatus, RunTrigger } from '../db/schema.js';
import { countSessions, terminateSessions } from '../db/sessions.js';
import type { Logger } from '../logger.js';
import type { CollectorName, RowCounts } from './types.js';

/** Advisory lock taken only around the check-and-insert of a new run (never held during the run). */
const START_LOCK = 'cloudtally:collection-start';
/** How long a start waits for another process's start (which may be ending a dead run). */
const START_LOCK_WAIT_MS = 30_000;
/** Attempts at ending a dead run whose clean-up met a lock held elsewhere. */
const END_ATTEMPTS = 3;

export const DEFAULT_HEARTBEAT_MS = 15_000;
/** A running run whose heartbeat is older than this is dead (3 missed heartbeats). */
export const DEFAULT_DEAD_AFTER_MS = 45_000;
/** lock_timeout of the clean-up of a dead run. */
export const DEFAULT_CLEANUP_LOCK_TIMEOUT_MS = 5_000;

export interface RunningRun {
  runId: number;
  trigger: RunTrigger;
  runnerId: string;
  startedAt: Date;
}

export type BeginResult = { started: true; runId: number; lock: HeldLock } | { started: false; running: RunningRun };

/** When a silent run is dead, and how long its clean-up may wait for a lock. */
export interface DeadRunRules {
  deadAfterMs: number;
  lockTimeoutMs: number;
  /** Told when the clean-up of leftovers could not finish (it is tried again at the next start). */
  logger?: Pick<Logger, 'warn'>;
  /** Runs never judged here: the caller's own (it ends them itself). */
  ownRunIds?: readonly number[];
}

/** The advisory lock a running run holds until it has ended. */
export function runLockName(runId: number): string {
  return `cloudtally:collection-run:${runId}`;
}

/** Postgres keeps 63 bytes of an application_name: the runner part is kept short and unique. */
const RUNNER_NAME_MAX = 36;

function compactRunner(runnerId: string): string {
  const printable = runnerId.replace(/[^\x20-\x7e]/g, '?');
  if (printable.length <= RUNNER_NAME_MAX) return printable;
  const digest = createHash('sha256').update(runnerId).digest('hex').slice(0, 8);
  return `${printable.slice(0, RUNNER_NAME_MAX - 9)}~${digest}`;
}

/** The application_name of every database session of the process `runnerId`. */
export function runnerSessionName(runnerId: string): string {
  return `cloudtally ${compactRunner(runnerId)}`;
}

/** The application_name of the session holding run `runId`'s lock (and writing its heartbeat). */
export function runSessionName(runId: number, runnerId: string): string {
  return `cloudtally run ${runId} ${compactRunner(runnerId)}`;
}

/**
 * Inserts a `running` run unless one is already running (anywhere): then answers with that run.
 * The check and the insert happen under an advisory lock (Postgres: cluster-wide; PGlite: in
 * process), so two concurrent triggers give one run. Dead runs found on the way are ended.
 */
export async function beginRun(
  db: Database,
  input: { trigger: RunTrigger; collectors: readonly CollectorName[]; runnerId: string; startedAt: Date } & DeadRunRules,
): Promise<BeginResult> {
  const locked = await db.withAdvisoryLock(
    START_LOCK,
    async (session): Promise<BeginResult> => {
      await endDeadRunsLocked(db, input);
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
      const lock = await db
        .holdAdvisoryLock(runLockName(runId), { applicationName: runSessionName(runId, input.runnerId) })
        .catch((err: unknown) => err as Error);
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
    },
    { timeoutMs: START_LOCK_WAIT_MS },
  );
  if (!locked.acquired) throw startLockError();
  return locked.value;
}

function startLockError(): Error {
  return new Error(
    `could not take the collection start lock within ${START_LOCK_WAIT_MS / 1000} s: another process is starting a collection or ending a dead one; try again`,
  );
}

/**
 * Touches the run's heartbeat, on the session holding the run's lock. False when the run is no
 * longer running (another process ended it): its process must stop writing.
 */
export async function heartbeat(session: Queryable, runId: number): Promise<boolean> {
  const result = await session.execute(`UPDATE collection_runs SET heartbeat_at = now() WHERE id = $1 AND status = 'running'`, [runId]);
  return result.rowCount === 1;
}

export interface FinishResult {
  status: RunStatus;
  /** The run had already been ended by someone else (marked dead, or failed by a stop timeout): nothing was written. */
  endedElsewhere: boolean;
}

/**
 * Records the end of a run and deletes any incomplete snapshot it left behind, in one
 * transaction. A run already ended elsewhere is left exactly as it is (checked first, under the
 * row's lock), and its final status is returned.
 */
export async function finishRun(
  db: Database,
  runId: number,
  result: { status: RunStatus; finishedAt: Date; counts: RowCounts; errors: RunError[] },
): Promise<FinishResult> {
  return db.transaction(async (tx) => {
    const [run] = await tx.query<{ status: RunStatus }>('SELECT status FROM collection_runs WHERE id = $1 FOR UPDATE', [runId]);
    if (!run || run.status !== 'running') return { status: run?.status ?? 'failed', endedElsewhere: true };
    await deleteSnapshots(tx, 's.run_id = $1 AND NOT s.complete', [runId]);
    await tx.execute(
      `UPDATE collection_runs SET status = $2, finished_at = $3, counts = $4::jsonb, errors = $5::jsonb WHERE id = $1`,
      [runId, result.status, result.finishedAt, JSON.stringify(result.counts), JSON.stringify(result.errors)],
    );
    return { status: result.status, endedElsewhere: false };
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
    await deleteSnapshots(tx, 's.run_id = $1 AND NOT s.complete', [runId]);
    return updated.rowCount === 1;
  });
}

/**
 * Ends every running run whose process is gone (see the module comment), then deletes every
 * incomplete snapshot that no running run owns. Runs under the start lock, so a run being
 * started is never taken for a dead one. Returns the ids of the runs it ended.
 */
export async function failDeadRuns(db: Database, rules: DeadRunRules): Promise<number[]> {
  const locked = await db.withAdvisoryLock(START_LOCK, () => endDeadRunsLocked(db, rules), { timeoutMs: START_LOCK_WAIT_MS });
  if (!locked.acquired) throw startLockError();
  return locked.value;
}

export interface StalledRun {
  runId: number;
  runnerId: string;
  startedAt: Date;
  heartbeatAt: Date;
  /** How long ago its last heartbeat was. */
  silentMs: number;
}

/** Running runs that make no progress: their heartbeat is older than deadAfterMs (until the next start ends them). */
export async function stalledRuns(db: Queryable, deadAfterMs: number): Promise<StalledRun[]> {
  const rows = await db.query<{ id: number; runner_id: string; started_at: Date; heartbeat_at: Date; silent_ms: number }>(
    `SELECT id, runner_id, started_at, heartbeat_at, (extract(epoch FROM now() - heartbeat_at) * 1000)::float8 AS silent_ms
       FROM collection_runs
      WHERE status = 'running' AND heartbeat_at < now() - ($1::double precision * interval '1 millisecond')
      ORDER BY id`,
    [deadAfterMs],
  );
  return rows.map((r) => ({ runId: r.id, runnerId: r.runner_id, startedAt: r.started_at, heartbeatAt: r.heartbeat_at, silentMs: Math.round(r.silent_ms) }));
}

type Verdict = { kind: 'silent'; heartbeatAt: Date } | { kind: 'released' };

type RunningRow = {
  id: number;
  runner_id: string;
  heartbeat_at: Date;
  stale: boolean;
};

async function endDeadRunsLocked(db: Database, rules: DeadRunRules): Promise<number[]> {
  const running = await db.query<RunningRow>(
    `SELECT id, runner_id, heartbeat_at, heartbeat_at < now() - ($1::double precision * interval '1 millisecond') AS stale
       FROM collection_runs WHERE status = 'running' ORDER BY id`,
    [rules.deadAfterMs],
  );
  const ended: number[] = [];
  for (const run of running) {
    if (rules.ownRunIds?.includes(run.id)) continue;
    let verdict: Verdict;
    if (run.stale) {
      verdict = { kind: 'silent', heartbeatAt: run.heartbeat_at };
    } else {
      const probe = await db.withAdvisoryLock(runLockName(run.id), async () => undefined, { wait: false });
      if (!probe.acquired) continue; // a live process holds it
      // Free: its process ended, or it lost only the session holding the lock (it then ends the
      // run itself, and meanwhile still has sessions here).
      if ((await countSessions(db, [runnerSessionName(run.runner_id)])) > 0) continue;
      verdict = { kind: 'released' };
    }
    if (await endDeadRun(db, run, verdict, rules)) ended.push(run.id);
  }
  try {
    await withLockTimeout(db, rules.lockTimeoutMs, (tx) =>
      deleteSnapshots(tx, `NOT s.complete AND NOT EXISTS (SELECT 1 FROM collection_runs r WHERE r.id = s.run_id AND r.status = 'running')`),
    );
  } catch (err) {
    if (!isLockTimeout(err)) throw err;
    // Invisible to readers anyway; the next start tries again.
    rules.logger?.warn({ err }, 'unfinished snapshots of ended runs could not be deleted yet (a lock is held elsewhere)');
  }
  return ended;
}

/**
 * Ends one dead run: first its process's sessions are terminated (whatever they hold is let go),
 * then, in one transaction with bounded lock waits, the run is marked failed, its unfinished
 * snapshots deleted and the message saying so written. False when the run had ended meanwhile.
 */
async function endDeadRun(db: Database, run: RunningRow, verdict: Verdict, rules: DeadRunRules): Promise<boolean> {
  const sessions = [runnerSessionName(run.runner_id), runSessionName(run.id, run.runner_id)];
  let terminated = 0;
  for (let attempt = 1; ; attempt++) {
    terminated += await terminateSessions(db, sessions);
    try {
      return await withLockTimeout(db, rules.lockTimeoutMs, async (tx) => {
        const marked = await tx.execute(
          `UPDATE collection_runs SET status = 'failed', finished_at = now() WHERE id = $1 AND status = 'running'`,
          [run.id],
        );
        if (marked.rowCount !== 1) return false;
        const deleted = await deleteSnapshots(tx, 's.run_id = $1 AND NOT s.complete', [run.id]);
        const error: RunError = { collector: '*', scope: '*', endpoint: '', status: null, message: deadRunMessage(run, verdict, rules, terminated, deleted) };
        await tx.execute('UPDATE collection_runs SET errors = errors || $2::jsonb WHERE id = $1', [run.id, JSON.stringify([error])]);
        return true;
      });
    } catch (err) {
      if (!isLockTimeout(err) || attempt >= END_ATTEMPTS) {
        throw new Error(`could not end dead collection run #${run.id} (runner ${run.runner_id}): ${(err as Error).message}`, { cause: err });
      }
    }
  }
}

function deadRunMessage(run: RunningRow, verdict: Verdict, rules: DeadRunRules, terminated: number, deleted: number): string {
  const cleanUp = `${terminated} database session(s) of it terminated, ${deleted} unfinished snapshot(s) deleted`;
  if (verdict.kind === 'silent') {
    const at = verdict.heartbeatAt.toISOString().replace(/\.\d{3}Z$/, 'Z');
    return `run died: no heartbeat since ${at} from runner ${run.runner_id} (process gone: silent for over ${Math.round(rules.deadAfterMs / 1000)} s); ${cleanUp}`;
  }
  return `run died: its process (runner ${run.runner_id}) ended without finishing it (process gone: its run lock was released and it has no database session left); ${cleanUp}`;
}

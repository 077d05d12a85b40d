/**
 * The collection service: node-cron schedules (one task per distinct cron expression, plus a
 * daily prune), a first run at start-up, "collect now" for the web app, status for the banner,
 * and a bounded stop.
 *
 * - One run at a time across every replica: runs start through beginRun's guarded insert.
 * - Each scheduled slot runs once across replicas: node-cron's distributed mode asks the
 *   Postgres coordinator (coordinator.ts), which also hands all collectors due at the same time
 *   to the same replica; that replica merges them into one run (in dependency order) by waiting
 *   `coalesceMs` for the other tasks of the slot.
 * - A dead run (running, heartbeat older than deadAfterMs, or its process gone: run-record.ts) is
 *   ended at start and then checked for every heartbeat interval while another process's run is
 *   running: its sessions terminated, its incomplete snapshots deleted, so a frozen collector
 *   blocks collections for about deadAfterMs, not until the next schedule.
 * - stop(): no new runs; the running one is asked to stop at its next page or item (its open
 *   snapshots are rolled back, finished ones stay); if it has not ended within stopTimeoutMs it
 *   is marked failed and its incomplete snapshots deleted, so no run stays "running".
 */
import { randomBytes } from 'node:crypto';
import cron, { type ScheduledTask } from 'node-cron';
import { COLLECTOR_NAMES } from '../config/index.js';
import type { Queryable } from '../db/connection.js';
import { createPgRunCoordinator } from './coordinator.js';
import { closeDays } from './close-days.js';
import { pruneHistory } from './retention.js';
import { failDeadRuns, failRun } from './run-record.js';
import { defaultRunnerId, startCollection } from './run.js';
import { staleScopes } from './staleness.js';
import { failingUnits, groupFailures, type FailureGroup } from './failures.js';
import type { ProgressEvent, CollectorDeps, CollectorName, RunSummary, RunTrigger } from './types.js';

export interface CollectionServiceOptions {
  /** Default: the configuration's collectionRuns.heartbeatMs. */
  heartbeatMs?: number;
  /** Default: the configuration's collectionRuns.staleAfterMs. */
  deadAfterMs?: number;
  /** How long stop() waits for the running collection before failing it (default 15 s). */
  stopTimeoutMs?: number;
  /** How long the tasks of one slot wait for each other to form one run (default 1 s). */
  coalesceMs?: number;
  /** When pruneHistory runs (default daily at 03:30). */
  pruneSchedule?: string;
  /** node-cron time zone of the schedules (default: the process's). */
  timezone?: string;
  /** Told of every run's progress (metrics). */
  onProgress?: (event: ProgressEvent) => void;
}

export interface CollectNowResult {
  runId: number;
  status: string;
  alreadyRunning: boolean;
  /** When that run started. */
  startedAt: Date;
}

export interface CollectionStatus {
  /** End of the latest succeeded or partial run; null before the first one. */
  lastGoodAt: Date | null;
  /** Scopes whose latest good inventory snapshot is missing or older than twice its schedule. */
  staleScopes: string[];
  running: boolean;
  /** Units whose latest run failed, grouped by reason (see failures.ts); empty when none. */
  failing: FailureGroup[];
}

export interface CollectionService {
  start(): Promise<void>;
  collectNow(trigger?: RunTrigger): Promise<CollectNowResult>;
  status(): Promise<CollectionStatus>;
  stop(): Promise<void>;
  /** Resolves when no collection or prune of this service is in progress (tests, shutdown). */
  idle(): Promise<void>;
}

interface ActiveRun {
  runId: number;
  startedAt: Date;
  abort: AbortController;
  done: Promise<RunSummary | null>;
}

export const DEFAULT_PRUNE_SCHEDULE = '30 3 * * *';

/** When the latest successful (or partial) collection run finished; null before the first. */
export async function lastGoodCollectionAt(db: Queryable): Promise<Date | null> {
  const rows = await db.query<{ last_good_at: Date | null }>(
    `SELECT max(finished_at) AS last_good_at FROM collection_runs WHERE status IN ('succeeded', 'partial')`,
  );
  return rows[0]?.last_good_at ?? null;
}

export function createCollectionService(deps: CollectorDeps, options: CollectionServiceOptions = {}): CollectionService {
  const log = deps.logger.child({ component: 'collect' });
  const runnerId = deps.runnerId ?? defaultRunnerId();
  // Unique per service object, so two services of one process (tests) are two claimants.
  const claimant = `${runnerId}#${randomBytes(4).toString('hex')}`;
  const coordinator = createPgRunCoordinator(deps.db, claimant);
  const heartbeatMs = options.heartbeatMs ?? deps.config.collectionRuns.heartbeatMs;
  const deadAfterMs = options.deadAfterMs ?? deps.config.collectionRuns.staleAfterMs;
  const deadRunRules = { deadAfterMs, lockTimeoutMs: deps.config.databaseSessions.lockTimeoutMs, logger: log };
  const stopTimeoutMs = options.stopTimeoutMs ?? 15_000;
  const coalesceMs = options.coalesceMs ?? 1_000;

  let stopped = false;
  let tasks: ScheduledTask[] = [];
  let reaper: NodeJS.Timeout | undefined;
  let reaping: Promise<void> | null = null;
  let current: ActiveRun | null = null;
  let pruning: { abort: AbortController; done: Promise<void> } | null = null;
  let starting: Promise<void> | null = null;
  let closing: Promise<void> | null = null;
  const closeAbort = new AbortController();
  const slots = new Map<string, { names: Set<CollectorName>; timer: NodeJS.Timeout; done: Promise<void>; release: () => void }>();

  async function begin(trigger: RunTrigger, collectors: readonly CollectorName[]): Promise<CollectNowResult> {
    if (stopped) throw new Error('the collection service is stopped');
    if (current) return { runId: current.runId, status: 'running', alreadyRunning: true, startedAt: current.startedAt };
    const abort = new AbortController();
    const started = await startCollection(
      { ...deps, runnerId },
      { trigger, collectors, signal: abort.signal, heartbeatMs, deadAfterMs, onProgress: options.onProgress },
    );
    if (!started.alreadyRunning) {
      const run: ActiveRun = {
        runId: started.runId,
        startedAt: started.startedAt,
        abort,
        done: started.done
          .catch((err: unknown) => {
            log.error({ err, runId: started.runId }, 'collection run could not be recorded');
            return null;
          })
          .finally(() => {
            if (current === run) current = null;
          }),
      };
      current = run;
    }
    return { runId: started.runId, status: 'running', alreadyRunning: started.alreadyRunning, startedAt: started.startedAt };
  }

  /** A scheduled task fired for `slot`: join (or open) the slot's run, then wait for it. */
  function onSlot(names: readonly CollectorName[], slot: Date): Promise<void> {
    const key = slot.toISOString();
    let entry = slots.get(key);
    if (!entry) {
      let release!: () => void;
      const done = new Promise<void>((resolve) => (release = resolve));
      const created = { names: new Set<CollectorName>(), timer: undefined as unknown as NodeJS.Timeout, done, release };
      created.timer = setTimeout(() => {
        slots.delete(key);
        void runSlot([...created.names]).finally(release);
      }, coalesceMs);
      slots.set(key, created);
      entry = created;
    }
    for (const name of names) entry.names.add(name);
    return entry.done;
  }

  async function runSlot(names: CollectorName[]): Promise<void> {
    if (stopped) return;
    try {
      const started = await begin('schedule', names);
      if (started.alreadyRunning) {
        log.warn({ runId: started.runId }, 'scheduled collection skipped: another collection is still running');
        return;
      }
      await current?.done;
    } catch (err) {
      log.error({ err }, 'scheduled collection could not start');
    }
  }

  /**
   * Ends another process's run soon after its heartbeat went stale (not only at the next start,
   * which may be an hour away): the cheap check runs every heartbeat, failDeadRuns only when it
   * finds one. This service's own run is never judged here (it ends it itself).
   */
  function reapDeadRuns(): Promise<void> {
    if (stopped || reaping) return reaping ?? Promise.resolve();
    const own = current ? [current.runId] : [];
    reaping = (async () => {
      const silent = await deps.db.query<{ id: number }>(
        `SELECT id FROM collection_runs
          WHERE status = 'running' AND NOT (id = ANY($1::int[])) AND heartbeat_at < now() - ($2::double precision * interval '1 millisecond')
          LIMIT 1`,
        [own, deadAfterMs],
      );
      if (silent.length === 0 || stopped) return;
      const dead = await failDeadRuns(deps.db, { ...deadRunRules, ownRunIds: own });
      if (dead.length > 0) log.warn({ runs: dead }, 'collection runs of a dead or silent process were ended');
    })()
      .catch((err: unknown) => log.warn({ err }, 'could not check for dead collection runs (tried again at the next heartbeat)'))
      .finally(() => {
        reaping = null;
      });
    return reaping;
  }

  function runPrune(): Promise<void> {
    if (stopped || pruning) return pruning?.done ?? Promise.resolve();
    const abort = new AbortController();
    const done = pruneHistory(deps, { signal: abort.signal })
      .then(() => undefined)
      .catch((err: unknown) => log.error({ err }, 'pruning history failed'))
      .finally(() => {
        pruning = null;
      });
    pruning = { abort, done };
    return done;
  }

  function schedule(expression: string, name: string, fn: (slot: Date) => Promise<void>): ScheduledTask {
    return cron.schedule(expression, (context) => fn(context.date), {
      name,
      noOverlap: true,
      distributed: true,
      runCoordinator: coordinator,
      timezone: options.timezone,
    });
  }

  return {
    async start() {
      if (stopped) throw new Error('the collection service is stopped');
      if (tasks.length > 0) return;
      const dead = await failDeadRuns(deps.db, deadRunRules);
      if (dead.length > 0) log.warn({ runs: dead }, 'collection runs left running by a dead process were marked failed');
      reaper = setInterval(() => void reapDeadRuns(), heartbeatMs);
      reaper.unref();

      const byExpression = new Map<string, CollectorName[]>();
      for (const name of COLLECTOR_NAMES) {
        const expression = deps.config.schedules[name];
        byExpression.set(expression, [...(byExpression.get(expression) ?? []), name]);
      }
      let n = 0;
      for (const [expression, names] of byExpression) {
        tasks.push(schedule(expression, `collect.${n++}`, (slot) => onSlot(names, slot)));
      }
      tasks.push(schedule(options.pruneSchedule ?? DEFAULT_PRUNE_SCHEDULE, 'prune', () => runPrune()));
      log.info({ schedules: Object.fromEntries(byExpression), claimant }, 'collection schedules started');

      // Days completed while the service was down (or collected by another process) get their daily costs.
      closing = closeDays(deps, new Date(), closeAbort.signal).then(() => {
        closing = null;
      });

      if (deps.config.collectOnStart) {
        // Tracked until the run is registered, so idle() never misses the start-up run.
        starting = begin('startup', COLLECTOR_NAMES)
          .then(
            (r) => log.info({ runId: r.runId, alreadyRunning: r.alreadyRunning }, 'start-up collection'),
            (err: unknown) => log.error({ err }, 'start-up collection could not start'),
          )
          .finally(() => {
            starting = null;
          });
      }
    },

    collectNow: (trigger = 'manual') => begin(trigger, COLLECTOR_NAMES),

    async status() {
      // Every page's banner asks: the reads go out together.
      const [lastGoodAt, rows, stale, failures] = await Promise.all([
        lastGoodCollectionAt(deps.db),
        deps.db.query<{ running: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM collection_runs
                           WHERE status = 'running' AND heartbeat_at >= now() - ($1::double precision * interval '1 millisecond')) AS running`,
          [deadAfterMs],
        ),
        staleScopes(deps.db, deps.scopes, deps.config.schedules),
        failingUnits(deps.db),
      ]);
      return {
        lastGoodAt,
        staleScopes: stale,
        running: current !== null || rows[0]?.running === true,
        failing: groupFailures(failures),
      };
    },

    async stop() {
      stopped = true;
      clearInterval(reaper);
      for (const task of tasks) await task.destroy();
      tasks = [];
      for (const entry of slots.values()) {
        clearTimeout(entry.timer);
        entry.release();
      }
      slots.clear();
      pruning?.abort.abort();
      const run = current;
      if (run) {
        run.abort.abort();
        let timer: NodeJS.Timeout | undefined;
        const ended = await Promise.race([
          run.done.then(() => true),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), stopTimeoutMs))),
        ]);
        clearTimeout(timer);
        if (!ended) {
          const failed = await failRun(
            deps.db,
            run.runId,
            `collection did not stop within ${stopTimeoutMs} ms of shutdown; marked failed and its unfinished snapshots deleted`,
          );
          log.warn({ runId: run.runId, failed }, 'running collection did not stop in time');
        }
      }
      closeAbort.abort();
      await pruning?.done;
      await closing;
      await reaping;
    },

    async idle() {
      for (;;) {
        const waits = [starting, closing, current?.done, pruning?.done, reaping, ...[...slots.values()].map((s) => s.done)].filter(Boolean);
        if (waits.length === 0) return;
        await Promise.all(waits);
      }
    },
  };
}

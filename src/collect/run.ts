/**
 * One collection run: the run record, the collectors in dependency order (prices, then
 * inventory, then what derives from inventory), every scope of a collector concurrently within
 * the client's concurrency limit, one snapshot per collector and scope, errors and counts.
 *
 * Status: `succeeded` when nothing went wrong (warnings allowed: a completed snapshot that kept
 * the last known values of a few items it could not read, e.g. the ports of some instances);
 * `partial` when some scopes (or single configured items) failed but others completed; `failed`
 * when every scope failed or the run itself broke.
 */
import { hostname } from 'node:os';
import { COLLECTOR_NAMES } from '../config/index.js';
import { collectorPhases, orderedCollectorNames, type Collector } from './collectors/index.js';
import type { RunContext, SkippedUnit, Unit } from './collectors/collector.js';
import { Limiter } from './concurrency.js';
import { CollectionStoppedError, toRunError } from './errors.js';
import { closeDays } from './close-days.js';
import type { HeldLock } from '../db/connection.js';
import { isConnectionLost } from '../db/errors.js';
import { beginRun, finishRun, heartbeat, type FinishResult } from './run-record.js';
import { openSnapshot, type SnapshotWriter } from './snapshot-writer.js';
import { reclaimStagingSpace } from '../db/versions.js';
import type { SnapshotKind } from '../db/schema.js';
import type {
  CollectorDeps,
  CollectorName,
  CollectorSummary,
  ProgressEvent,
  RowCounts,
  RunCollectionOptions,
  RunError,
  RunStatus,
  RunSummary,
  RunTrigger,
} from './types.js';

export function defaultRunnerId(): string {
  return `${hostname()}:${process.pid}`;
}

/** The run's clock: the real time, or (backdated runs) `now` plus the time elapsed since the start. */
function runClock(now: Date | undefined): () => Date {
  if (!now) return () => new Date();
  const base = now.getTime();
  const started = Date.now();
  return () => new Date(base + (Date.now() - started));
}

export interface StartedCollection {
  runId: number;
  alreadyRunning: boolean;
  /** When the run started (the one found running, when alreadyRunning). */
  startedAt: Date;
  /** Resolves with the summary when the run has ended (at once when alreadyRunning). */
  done: Promise<RunSummary>;
}

/**
 * Starts a run and returns as soon as its record exists (or another run is found running). The
 * service uses this to answer "collect now" with the run id; runCollection awaits `done`.
 */
export async function startCollection(deps: CollectorDeps, opts: RunCollectionOptions = {}): Promise<StartedCollection> {
  const collectors = orderedCollectorNames(opts.collectors ?? COLLECTOR_NAMES);
  const trigger = opts.trigger ?? 'manual';
  const clock = runClock(opts.now);
  const startedAt = clock();
  const runnerId = deps.runnerId ?? defaultRunnerId();
  const heartbeatMs = opts.heartbeatMs ?? deps.config.collectionRuns.heartbeatMs;
  const deadAfterMs = opts.deadAfterMs ?? deps.config.collectionRuns.staleAfterMs;
  const begun = await beginRun(deps.db, {
    trigger,
    collectors,
    runnerId,
    startedAt,
    deadAfterMs,
    lockTimeoutMs: deps.config.databaseSessions.lockTimeoutMs,
    logger: deps.logger,
  });
  if (!begun.started) {
    const { running } = begun;
    deps.logger.info({ runId: running.runId, runner: running.runnerId }, 'a collection is already running; not starting another');
    const summary: RunSummary = {
      runId: running.runId,
      status: 'running',
      alreadyRunning: true,
      trigger: running.trigger,
      collectors,
      startedAt: running.startedAt,
      finishedAt: null,
      durationMs: 0,
      counts: {},
      errors: [],
      perCollector: [],
    };
    return { runId: running.runId, alreadyRunning: true, startedAt: running.startedAt, done: Promise.resolve(summary) };
  }
  const { lock } = begun;
  const input = { ...opts, runId: begun.runId, runnerId, trigger, collectors, clock, startedAt, lock, heartbeatMs, deadAfterMs };
  const done = executeRun(deps, input).finally(() =>
    // Only once the run's end is recorded: a free lock tells other processes the run is dead.
    lock.release().catch((err: unknown) => deps.logger.warn({ err, runId: begun.runId }, 'could not release the run lock')),
  );
  return { runId: begun.runId, alreadyRunning: false, startedAt, done };
}

/** Runs a whole collection and resolves with its summary (see the module comment for the status). */
export async function runCollection(deps: CollectorDeps, opts: RunCollectionOptions = {}): Promise<RunSummary> {
  return (await startCollection(deps, opts)).done;
}

interface ExecuteInput extends RunCollectionOptions {
  runId: number;
  runnerId: string;
  lock: HeldLock;
  heartbeatMs: number;
  deadAfterMs: number;
  trigger: RunTrigger;
  collectors: CollectorName[];
  clock: () => Date;
  startedAt: Date;
}

class CollectorStats {
  ok = 0;
  failed = 0;
  skipped = 0;
  rows = 0;
  private first = Infinity;
  private last = -Infinity;

  constructor(readonly name: CollectorName) {}

  span(start: number, end: number): void {
    this.first = Math.min(this.first, start);
    this.last = Math.max(this.last, end);
  }

  summary(): CollectorSummary {
    return {
      collector: this.name,
      scopesOk: this.ok,
      scopesFailed: this.failed,
      scopesSkipped: this.skipped,
      rows: this.rows,
      durationMs: this.last >= this.first ? Math.round(this.last - this.first) : 0,
    };
  }
}

async function executeRun(deps: CollectorDeps, input: ExecuteInput): Promise<RunSummary> {
  const { db, logger } = deps;
  const { runId, lock } = input;
  const log = logger.child({ runId });
  const emit = (event: ProgressEvent) => {
    try {
      input.onProgress?.(event);
    } catch (err) {
      log.warn({ err }, 'progress listener failed');
    }
  };

  // The run also stops by itself: when the session holding its lock is lost, or when another
  // process has ended it (it was taken for dead); it must not write on after either.
  const halt = new AbortController();
  const signal = input.signal ? AbortSignal.any([input.signal, halt.signal]) : halt.signal;
  let stopReason = 'asked to stop: shutdown or signal';
  let sessionLost: { error: Error; at: Date } | null = null;

  const limiter = new Limiter(deps.config.client.maxConcurrency);
  const pageLimiter = new Limiter(Math.min(2, deps.config.client.maxConcurrency));
  const checkpoint = () => {
    if (signal.aborted) throw new CollectionStoppedError(`collection stopped before this scope finished (${stopReason})`);
  };
  const ctx: RunContext = {
    db,
    client: deps.client,
    config: deps.config,
    logger: log,
    scopes: deps.scopes,
    imageIds: deps.imageIds ?? deps.config.imageIds,
    freeFeatureIds: deps.freeFeatureIds ?? deps.config.freeFeatureIds,
    limiter,
    pageLimiter,
    bigPage: (fn) => pageLimiter.run(() => limiter.run(fn)),
    checkpoint,
  };

  let ended = false;
  void lock.lost.then((error) => {
    if (ended || sessionLost) return;
    sessionLost = { error, at: new Date() };
    stopReason = 'its database session was lost';
    clearInterval(beat);
    log.warn({ err: error }, 'the database session holding the run lock was lost: stopping the run; it is closed once the database answers');
    halt.abort();
  });
  // The heartbeat goes through the lock's own session, so it proves that session alive. A beat
  // that gets no answer well before others would take the run for dead gives the session up.
  const beatTimeoutMs = Math.max(input.heartbeatMs, input.deadAfterMs - input.heartbeatMs);
  let beating = false;
  const beat = setInterval(() => {
    if (beating || halt.signal.aborted) return;
    beating = true;
    answersWithin(heartbeat(lock.session, runId), beatTimeoutMs)
      .then((running) => {
        if (ended) return; // a beat that crossed this process's own end of the run
        if (running === 'late') {
          void lock.abandon(new Error(`the run's heartbeat got no answer within ${beatTimeoutMs} ms`));
        } else if (!running && !halt.signal.aborted) {
          stopReason = 'the run was ended by another process';
          log.warn('the run was ended by another process (taken for dead): stopping without writing more');
          halt.abort();
        }
      })
      .catch((err: unknown) => {
        if (ended) return;
        if (isConnectionLost(err)) void lock.abandon(err as Error);
        else log.warn({ err }, 'could not write the run heartbeat');
      })
      .finally(() => (beating = false));
  }, input.heartbeatMs);
  beat.unref();

  const errors: RunError[] = [];
  const counts: RowCounts = {};
  const stats = new Map(input.collectors.map((name) => [name, new CollectorStats(name)]));
  let notStarted = 0;
  let unitsStarted = 0;
  let fatal = false;
  const t0 = performance.now();

  const runUnit = async (collector: Collector, unit: Unit | SkippedUnit): Promise<void> => {
    const stat = stats.get(collector.name)!;
    if ('skipped' in unit) {
      stat.skipped++;
      emit({ type: 'unit-skipped', collector: collector.name, scope: unit.scopeKey, reason: unit.skipped });
      return;
    }
    if (signal.aborted) {
      notStarted++;
      stat.failed++;
      return;
    }
    const started = performance.now();
    const pagePriority = (collector.pageOrder ?? 1_000) * 1_000_000 + unitsStarted++;
    const unitCtx: RunContext = { ...ctx, bigPage: (fn) => pageLimiter.run(() => limiter.run(fn), pagePriority) };
    emit({ type: 'unit-started', collector: collector.name, scope: unit.scopeKey });
    let writer: SnapshotWriter | null = null;
    try {
      writer = await openSnapshot(db, {
        runId,
        kind: collector.kind,
        scopeKey: unit.scopeKey,
        projectId: unit.projectId,
        regionId: unit.regionId,
        takenAt: input.clock(),
      }, { checkpoint });
      const result = await collector.collect(writer, unit, unitCtx);
      checkpoint();
      const written = await writer.finalise();
      const itemErrors = result?.itemErrors ?? [];
      errors.push(...itemErrors);
      for (const [kind, n] of Object.entries(written)) {
        counts[kind] = (counts[kind] ?? 0) + n;
        stat.rows += n;
      }
      stat.ok++;
      const ended = performance.now();
      stat.span(started, ended);
      emit({
        type: 'unit-done',
        collector: collector.name,
        scope: unit.scopeKey,
        rows: writer.rowCount,
        durationMs: Math.round(ended - started),
        itemErrors: itemErrors.length,
      });
    } catch (err) {
      if (writer) {
        await writer.discard().catch((discardErr: unknown) =>
          // The run's end (finishRun) deletes it again; a dead run's clean-up as a last resort.
          log.error({ err: discardErr, snapshotId: writer?.id }, 'could not delete an unfinished snapshot'),
        );
      }
      const runError = toRunError(err, collector.name, unit.scopeKey);
      errors.push(runError);
      stat.failed++;
      const ended = performance.now();
      stat.span(started, ended);
      if (err instanceof CollectionStoppedError) log.info({ collector: collector.name, scope: unit.scopeKey }, runError.message);
      else log.warn({ error: runError }, 'collection of a scope failed');
      emit({ type: 'unit-failed', collector: collector.name, scope: unit.scopeKey, durationMs: Math.round(ended - started), error: runError });
    }
  };

  // Once a collector's scopes are all finalised, its staging tables are empty: their space goes
  // back at once (not at the next vacuum). Not the run's failure when it cannot: logged, retried
  // after the next collection.
  const reclaimStaging = async (kind: SnapshotKind): Promise<void> => {
    try {
      const truncated = await reclaimStagingSpace(db, kind);
      log.debug({ kind, truncated }, 'staging space reclaimed');
    } catch (err) {
      log.warn({ err, kind }, 'could not reclaim the space of the staging tables');
    }
  };

  try {
    emit({ type: 'run-started', runId, collectors: input.collectors, scopes: deps.scopes.length });
    log.info({ collectors: input.collectors, scopes: deps.scopes.length, trigger: input.trigger }, 'collection started');
    for (const phase of collectorPhases(input.collectors)) {
      await Promise.all(
        phase.map(async (collector) => {
          await Promise.all(collector.units(ctx).map((unit) => runUnit(collector, unit)));
          await reclaimStaging(collector.kind);
        }),
      );
    }
  } catch (err) {
    fatal = true;
    errors.push(toRunError(err, '*', '*'));
    log.error({ err }, 'collection run failed');
  }

  if (notStarted > 0) {
    errors.push({
      collector: '*',
      scope: '*',
      endpoint: '',
      status: null,
      message: `run stopped before ${notStarted} scope collection(s) started (${stopReason})`,
    });
  }
  const lost = sessionLost as { error: Error; at: Date } | null;
  if (lost) {
    errors.push({
      collector: '*',
      scope: '*',
      endpoint: '',
      status: null,
      message: `session lost: the database session holding the run's lock ended at ${lost.at.toISOString()} (${lost.error.message}) while its process (runner ${input.runnerId}) was alive; the run stopped and was closed by that process`,
    });
  }
  const all = [...stats.values()];
  const ok = all.reduce((n, s) => n + s.ok, 0);
  const failed = all.reduce((n, s) => n + s.failed, 0);
  // Warnings (items of a completed snapshot that could not be read, kept at their last known
  // values) are recorded with the errors but do not make the run partial.
  const realErrors = errors.filter((e) => e.severity !== 'warning').length;
  const status: RunStatus = fatal || (ok === 0 && failed > 0) ? 'failed' : realErrors > 0 ? 'partial' : 'succeeded';
  const finishedAt = input.clock();
  ended = true;
  clearInterval(beat);
  const finish = await finishWithRetry(db, runId, { status, finishedAt, counts, errors }, log);
  if (finish.endedElsewhere) {
    // What the other process recorded stands, and this one writes nothing more.
    log.warn({ status: finish.status }, 'the run had been ended by another process; nothing more written');
  } else {
    await closeDays({ db, config: deps.config, logger: log }, finishedAt);
    // Not when asked to stop (shutdown): the next run's evaluation covers it.
    if (deps.afterRun && !signal.aborted) await deps.afterRun(finishedAt).catch((err: unknown) => log.error({ err }, 'work after the collection failed (budget alerts are evaluated again after the next run)'));
  }
  const finalStatus = finish.status;
  const summary: RunSummary = {
    runId,
    status: finalStatus,
    alreadyRunning: false,
    trigger: input.trigger,
    collectors: input.collectors,
    startedAt: input.startedAt,
    finishedAt,
    durationMs: Math.round(performance.now() - t0),
    counts,
    errors,
    perCollector: all.map((s) => s.summary()),
    ...(finish.endedElsewhere ? { endedElsewhere: true } : {}),
  };
  log.info({ status: finalStatus, counts, errors: errors.length, durationMs: summary.durationMs }, 'collection finished');
  emit({ type: 'run-finished', summary });
  return summary;
}

/** How long closing a run keeps trying while the database cannot be reached. */
const FINISH_RETRY_FOR_MS = 10 * 60_000;
const FINISH_RETRY_MAX_DELAY_MS = 5_000;

/**
 * finishRun, tried again while the database cannot be reached (a restart, a network outage), with
 * a growing pause of at most 5 s: a run interrupted by an outage is closed by its own process
 * within seconds of the database's return. Other errors, or an outage of more than 10 minutes,
 * are thrown (a later start then ends the run as dead).
 */
async function finishWithRetry(db: CollectorDeps['db'], runId: number, result: Parameters<typeof finishRun>[2], log: CollectorDeps['logger']): Promise<FinishResult> {
  const giveUpAt = Date.now() + FINISH_RETRY_FOR_MS;
  for (let attempt = 1, delay = 250; ; attempt++, delay = Math.min(delay * 2, FINISH_RETRY_MAX_DELAY_MS)) {
    try {
      const finished = await finishRun(db, runId, result);
      if (attempt > 1) log.info({ attempts: attempt }, 'the run is closed: the database answers again');
      return finished;
    } catch (err) {
      if (!isConnectionLost(err) || Date.now() + delay > giveUpAt) throw err;
      if (attempt === 1) log.warn({ err }, 'could not record the end of the run: the database cannot be reached; trying again until it answers');
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** The value, or 'late' when the promise has not settled within ms (it is not cancelled). */
function answersWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

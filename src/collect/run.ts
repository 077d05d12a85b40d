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
import { beginRun, DEFAULT_DEAD_AFTER_MS, DEFAULT_HEARTBEAT_MS, finishRun, heartbeat } from './run-record.js';
import { openSnapshot, type SnapshotWriter } from './snapshot-writer.js';
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
  const begun = await beginRun(deps.db, {
    trigger,
    collectors,
    runnerId: deps.runnerId ?? defaultRunnerId(),
    startedAt,
    deadAfterMs: opts.deadAfterMs ?? DEFAULT_DEAD_AFTER_MS,
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
    return { runId: running.runId, alreadyRunning: true, done: Promise.resolve(summary) };
  }
  const { lock } = begun;
  const done = executeRun(deps, { ...opts, runId: begun.runId, trigger, collectors, clock, startedAt }).finally(() =>
    // Only once the run's end is recorded: a free lock tells other processes the run is dead.
    lock.release().catch((err: unknown) => deps.logger.warn({ err, runId: begun.runId }, 'could not release the run lock')),
  );
  return { runId: begun.runId, alreadyRunning: false, done };
}

/** Runs a whole collection and resolves with its summary (see the module comment for the status). */
export async function runCollection(deps: CollectorDeps, opts: RunCollectionOptions = {}): Promise<RunSummary> {
  return (await startCollection(deps, opts)).done;
}

interface ExecuteInput extends RunCollectionOptions {
  runId: number;
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
  const { runId, signal } = input;
  const log = logger.child({ runId });
  const emit = (event: ProgressEvent) => {
    try {
      input.onProgress?.(event);
    } catch (err) {
      log.warn({ err }, 'progress listener failed');
    }
  };

  const limiter = new Limiter(deps.config.client.maxConcurrency);
  const pageLimiter = new Limiter(Math.min(2, deps.config.client.maxConcurrency));
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
    checkpoint: () => {
      if (signal?.aborted) throw new CollectionStoppedError();
    },
  };

  const beat = setInterval(() => {
    heartbeat(db, runId).catch((err: unknown) => log.warn({ err }, 'could not write the run heartbeat'));
  }, input.heartbeatMs ?? DEFAULT_HEARTBEAT_MS);
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
    if (signal?.aborted) {
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
      });
      const result = await collector.collect(writer, unit, unitCtx);
      ctx.checkpoint();
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

  try {
    emit({ type: 'run-started', runId, collectors: input.collectors, scopes: deps.scopes.length });
    log.info({ collectors: input.collectors, scopes: deps.scopes.length, trigger: input.trigger }, 'collection started');
    for (const phase of collectorPhases(input.collectors)) {
      await Promise.all(phase.map((collector) => Promise.all(collector.units(ctx).map((unit) => runUnit(collector, unit)))));
    }
  } catch (err) {
    fatal = true;
    errors.push(toRunError(err, '*', '*'));
    log.error({ err }, 'collection run failed');
  } finally {
    clearInterval(beat);
  }

  if (notStarted > 0) {
    errors.push({
      collector: '*',
      scope: '*',
      endpoint: '',
      status: null,
      message: `run stopped before ${notStarted} scope collection(s) started (asked to stop: shutdown or signal)`,
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
  const finalStatus = await finishRun(db, runId, { status, finishedAt, counts, errors });
  await closeDays({ db, config: deps.config, logger: log }, finishedAt);
  // Not when asked to stop (shutdown): the next run's evaluation covers it.
  if (deps.afterRun && !signal?.aborted) await deps.afterRun(finishedAt).catch((err: unknown) => log.error({ err }, 'work after the collection failed (budget alerts are evaluated again after the next run)'));
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
  };
  log.info({ status: finalStatus, counts, errors: errors.length, durationMs: summary.durationMs }, 'collection finished');
  emit({ type: 'run-finished', summary });
  return summary;
}

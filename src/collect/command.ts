/**
 * `npm run collect`: one collection now, with a line per scope as it finishes and a summary table
 * at the end. Exit codes (documented in the README by the lead):
 *   0  succeeded: every scope of every collector was collected
 *   2  partial: some scopes or configured items failed, the others were stored (errors listed)
 *   1  failed: nothing could be collected, or the run itself broke, or another process ended the run
 *      meanwhile (it took it for dead: no heartbeat, e.g. this process was frozen; nothing more
 *      was written)
 *   3  not started: another collection is running (its run id is printed)
 *   130 / 143  stopped by SIGINT / SIGTERM (set by the command, see commands/collect.ts): the run
 *      is recorded as partial or failed, its unfinished snapshots deleted
 */
import { failRun } from './run-record.js';
import { startCollection } from './run.js';
import type { CollectorDeps, CollectorName, ProgressEvent, RunSummary } from './types.js';

export const EXIT_SUCCEEDED = 0;
export const EXIT_FAILED = 1;
export const EXIT_PARTIAL = 2;
export const EXIT_ALREADY_RUNNING = 3;

export interface CollectCommandOptions {
  out: NodeJS.WritableStream;
  collectors?: readonly CollectorName[];
  /** Aborting stops the run at its next page or item (SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** After an abort, how long the run may take to stop before it is marked failed (default 15 s). */
  stopTimeoutMs?: number;
}

export const DEFAULT_STOP_TIMEOUT_MS = 15_000;

export async function runCollectCommand(deps: CollectorDeps, options: CollectCommandOptions): Promise<number> {
  const { out } = options;
  const write = (line: string) => out.write(`${line}\n`);
  let summary: RunSummary;
  try {
    const started = await startCollection(deps, {
      trigger: 'manual',
      ...(options.collectors ? { collectors: options.collectors } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      onProgress: (event) => {
        const line = progressLine(event);
        if (line !== null) write(line);
      },
    });
    const stopped = options.signal ? stoppedInTime(started.done, options.signal, options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS) : started.done;
    const ended = await stopped;
    if (ended === 'timed out') {
      const timeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
      await failRun(deps.db, started.runId, `collection did not stop within ${timeoutMs} ms of being told to; marked failed and its unfinished snapshots deleted`);
      write(`run #${started.runId} did not stop within ${timeoutMs} ms: marked failed, its unfinished snapshots deleted`);
      return EXIT_FAILED;
    }
    summary = ended;
  } catch (err) {
    write(`collection failed: ${(err as Error).message}`);
    return EXIT_FAILED;
  }
  if (summary.alreadyRunning) {
    write(`another collection is already running (run #${summary.runId}, ${summary.trigger}, started ${summary.startedAt.toISOString()}); not starting one`);
    return EXIT_ALREADY_RUNNING;
  }
  if (summary.endedElsewhere) {
    write(
      `run #${summary.runId} was ended by another process while this one was not heard from (recorded as ${summary.status}); nothing more was written`,
    );
    return EXIT_FAILED;
  }
  for (const line of summaryLines(summary)) write(line);
  return summary.status === 'succeeded' ? EXIT_SUCCEEDED : summary.status === 'partial' ? EXIT_PARTIAL : EXIT_FAILED;
}

/** The run's summary, or 'timed out' when it has not ended `timeoutMs` after the signal aborted. */
function stoppedInTime(done: Promise<RunSummary>, signal: AbortSignal, timeoutMs: number): Promise<RunSummary | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const onAbort = () => {
    timer = setTimeout(() => resolveTimeout('timed out'), timeoutMs);
  };
  let resolveTimeout!: (value: 'timed out') => void;
  const timeout = new Promise<'timed out'>((resolve) => (resolveTimeout = resolve));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  return Promise.race([done, timeout]).finally(() => {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  });
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export function progressLine(event: ProgressEvent): string | null {
  switch (event.type) {
    case 'run-started':
      return `run #${event.runId}: ${event.collectors.join(', ')} over ${event.scopes} scope(s)`;
    case 'unit-done':
      return `  ok      ${event.collector.padEnd(13)} ${event.scope.padEnd(16)} ${String(event.rows).padStart(8)} rows  ${seconds(event.durationMs)}${
        event.itemErrors > 0 ? `  (${event.itemErrors} item error(s) or warning(s))` : ''
      }`;
    case 'unit-failed':
      return `  FAILED  ${event.collector.padEnd(13)} ${event.scope.padEnd(16)} ${describeError(event.error)}`;
    case 'unit-skipped':
      return `  skip    ${event.collector.padEnd(13)} ${event.scope.padEnd(16)} ${event.reason}`;
    default:
      return null;
  }
}

function describeError(error: RunSummary['errors'][number]): string {
  const where = [error.endpoint, error.status === null ? '' : String(error.status)].filter(Boolean).join(' ');
  return where ? `${where}: ${error.message}` : error.message;
}

export function summaryLines(summary: RunSummary): string[] {
  const header = ['collector', 'scopes ok', 'failed', 'skipped', 'rows', 'duration'];
  const rows = summary.perCollector.map((c) => [
    c.collector,
    String(c.scopesOk),
    String(c.scopesFailed),
    String(c.scopesSkipped),
    String(c.rows),
    seconds(c.durationMs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const lines = [
    '',
    `run #${summary.runId} ${summary.status.toUpperCase()} in ${seconds(summary.durationMs)}`,
    format(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map(format),
  ];
  const counts = Object.entries(summary.counts)
    .map(([kind, n]) => `${kind} ${n}`)
    .join(', ');
  if (counts) lines.push(`rows by kind: ${counts}`);
  const errors = summary.errors.filter((e) => e.severity !== 'warning');
  const warnings = summary.errors.filter((e) => e.severity === 'warning');
  if (errors.length > 0) {
    lines.push('', `errors (${errors.length}):`);
    for (const e of errors) lines.push(`  ${e.collector} ${e.scope}: ${describeError(e)}`);
  }
  if (warnings.length > 0) {
    lines.push('', `warnings (${warnings.length}):`);
    for (const e of warnings) lines.push(`  ${e.collector} ${e.scope}: ${describeError(e)}`);
  }
  return lines;
}

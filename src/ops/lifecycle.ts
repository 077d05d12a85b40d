/**
 * Graceful shutdown: the service's parts closed in an order that loses nothing, within a bounded
 * time. Every step is logged with how long it took; a step that fails or overruns is logged and
 * the next one still runs (the database is closed even if a collection would not stop).
 *
 * Order:
 *   1. http: stop accepting connections (server.close), drop idle keep-alive connections
 *   2. collection: stop the schedules, let the running collection finish or roll back its snapshot
 *   3. timers: any other periodic jobs (retention, scheduled stops...)
 *   4. http-drain: wait for in-flight requests; after `httpDrainMs` cut the remaining connections
 *   5. client, simulator: the cloud client's connections, then the built-in simulator
 *   6. database: last, since every step before may still write to it
 *
 * Each step waits at most what is left of `deadlineMs`, minus a reserve kept for closing the
 * database; a request cut after the drain time may add half a second.
 */
import type { Server } from 'node:http';
import type { Logger } from '../logger.js';
import { TimeoutError, withTimeout } from './timeout.js';

const DATABASE_RESERVE_MS = 2000;
/** After cutting the connections of overrunning requests, the server's close callback comes at once. */
const CUT_CONNECTIONS_MS = 500;

export interface Closable {
  close(): Promise<void>;
}

export interface Stoppable {
  stop(): void | Promise<void>;
}

export interface ShutdownParts {
  server?: Server;
  /** The collection service; its stop() stops the schedules and ends the running run cleanly. */
  collection?: Stoppable;
  /** Other periodic jobs, stopped after the collection, each by name. */
  timers?: Record<string, Stoppable>;
  client?: Closable;
  simulator?: Closable;
  database?: Closable;
}

export interface ShutdownOptions {
  logger: Logger;
  /** The whole shutdown ends within this time (default 25000; keep it below the signal handler's grace). */
  deadlineMs?: number;
  /** In-flight HTTP requests get this long after the collection stopped (default 5000). */
  httpDrainMs?: number;
}

export interface StepReport {
  step: string;
  ok: boolean;
  ms: number;
  error?: string;
}

export interface ShutdownReport {
  ok: boolean;
  steps: StepReport[];
}

export async function shutdownService(parts: ShutdownParts, options: ShutdownOptions): Promise<ShutdownReport> {
  const { logger } = options;
  const deadline = Date.now() + (options.deadlineMs ?? 25_000);
  // The database is closed last but must be closed even when a step before overran: it keeps a reserve.
  const databaseReserveMs = parts.database ? Math.min(DATABASE_RESERVE_MS, (options.deadlineMs ?? 25_000) / 4) : 0;
  const othersDeadline = deadline - databaseReserveMs;
  const httpDrainMs = options.httpDrainMs ?? 5_000;
  const steps: StepReport[] = [];

  /** Runs one step, waiting at most `budgetMs` (default: what is left before the others' deadline). */
  const step = async (name: string, work: () => Promise<unknown> | unknown, budgetMs?: number): Promise<void> => {
    const started = Date.now();
    const budget = Math.max(0, budgetMs ?? othersDeadline - started);
    try {
      await withTimeout(Promise.resolve().then(work), budget, `shutdown step "${name}"`);
      const report = { step: name, ok: true, ms: Date.now() - started };
      steps.push(report);
      logger.info(report, `shutdown: ${name} done`);
    } catch (err) {
      const report = { step: name, ok: false, ms: Date.now() - started, error: (err as Error).message };
      steps.push(report);
      logger.error(report, `shutdown: ${name} failed`);
    }
  };

  const { server } = parts;
  let drained: Promise<void> | null = null;
  let idleSweeper: NodeJS.Timeout | undefined;
  if (server) {
    await step('http', () => {
      drained = new Promise<void>((resolve, reject) => {
        server.close((err) => (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(err) : resolve()));
      });
      server.closeIdleConnections();
      // A keep-alive connection becomes idle once its in-flight request is answered: close it then.
      idleSweeper = setInterval(() => server.closeIdleConnections(), 100);
      idleSweeper.unref();
    });
  }

  if (parts.collection) {
    const collection = parts.collection;
    await step('collection', () => collection.stop());
  }
  for (const [name, timer] of Object.entries(parts.timers ?? {})) {
    await step(`timer ${name}`, () => timer.stop());
  }

  if (server && drained) {
    const wait: Promise<void> = drained;
    const drainMs = Math.max(0, Math.min(httpDrainMs, othersDeadline - Date.now()));
    await step(
      'http-drain',
      async () => {
        try {
          await withTimeout(wait, drainMs, 'in-flight requests');
        } catch (err) {
          if (!(err instanceof TimeoutError)) throw err;
          logger.warn({ httpDrainMs: drainMs }, 'shutdown: requests still running after the drain time; closing their connections');
          server.closeAllConnections();
          await wait;
        }
      },
      drainMs + CUT_CONNECTIONS_MS,
    );
    clearInterval(idleSweeper);
  }

  if (parts.client) {
    const client = parts.client;
    await step('client', () => client.close());
  }
  if (parts.simulator) {
    const simulator = parts.simulator;
    await step('simulator', () => simulator.close());
  }
  if (parts.database) {
    const database = parts.database;
    await step('database', () => database.close(), deadline - Date.now());
  }

  return { ok: steps.every((s) => s.ok), steps };
}

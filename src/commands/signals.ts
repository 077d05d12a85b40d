import type { Logger } from '../logger.js';

/**
 * Runs `shutdown` once on the first SIGINT or SIGTERM; a second signal, or a shutdown that takes
 * longer than `graceMs`, exits at once so an operator is never stuck.
 */
export function onShutdownSignal(logger: Logger, shutdown: () => Promise<void>, graceMs = 20_000): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(signalExitCode(signal));
    }
    stopping = true;
    logger.info({ signal, graceMs }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ graceMs }, 'shutdown took too long: exiting');
      process.exit(1);
    }, graceMs);
    timer.unref();
    shutdown().then(
      () => {
        logger.info('stopped');
        clearTimeout(timer);
        process.exitCode = process.exitCode ?? 0;
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', handle);
  process.once('SIGTERM', handle);
}

/** The conventional exit code of a process stopped by `signal`: 128 + its number (130, 143). */
export function signalExitCode(signal: NodeJS.Signals): number {
  return signal === 'SIGINT' ? 130 : 143;
}

export interface StopSignal {
  /** Aborted on the first SIGINT or SIGTERM. */
  signal: AbortSignal;
  /** The signal received, or null. */
  received(): NodeJS.Signals | null;
  /** Removes the handlers (the command has ended). */
  dispose(): void;
}

/**
 * For a command that stops itself cleanly: the first SIGINT or SIGTERM aborts `signal`; a second
 * one, or a stop that takes longer than `graceMs`, exits at once with the signal's exit code.
 */
export function abortOnSignal(logger: Logger, graceMs: number): StopSignal {
  const controller = new AbortController();
  let received: NodeJS.Signals | null = null;
  const handle = (signal: NodeJS.Signals) => {
    if (received) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(signalExitCode(signal));
    }
    received = signal;
    logger.info({ signal, graceMs }, 'stopping: the running collection ends at its next page or item');
    const timer = setTimeout(() => {
      logger.error({ graceMs }, 'stopping took too long: exiting');
      process.exit(signalExitCode(signal));
    }, graceMs);
    timer.unref();
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.on('SIGINT', handle);
  process.on('SIGTERM', handle);
  return {
    signal: controller.signal,
    received: () => received,
    dispose() {
      process.off('SIGINT', handle);
      process.off('SIGTERM', handle);
    },
  };
}

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
      process.exit(130);
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

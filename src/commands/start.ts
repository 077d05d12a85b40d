import type { Config } from '../config/index.js';
import type { Logger } from '../logger.js';
import { startService } from '../main.js';
import { onShutdownSignal } from './signals.js';

/** `npm start`: the whole service until SIGINT/SIGTERM. */
export async function start(config: Config, logger: Logger): Promise<'running'> {
  const service = await startService(config, logger);
  process.stdout.write(`\ncloudtally is running: ${service.url}${service.demo ? '  (demo data from the built-in simulator)' : ''}\n\n`);
  service.ready.catch(() => {
    // Already logged with its context; the web app stays up and shows the data as stale.
  });
  onShutdownSignal(logger, () => service.stop(), 30_000);
  return 'running';
}

import cron from 'node-cron';
import { listSample, type Logger } from '../logger.js';
import { runDueStops, type RunDueStopsDeps } from './scheduled-stops.js';

/** Every minute: a due stop runs at most a minute late. */
export const DUE_STOPS_SCHEDULE = '* * * * *';

export interface DueStopsScheduler {
  /** Stops the schedule and waits for a run in progress to finish. */
  stop(): Promise<void>;
}

/**
 * Runs runDueStops on a node-cron schedule (one run at a time in this process; replicas may run
 * it too: each due stop is claimed by one of them). Errors are logged, never thrown.
 */
export function startDueStopsScheduler(deps: RunDueStopsDeps & { logger: Logger }, options: { expression?: string; now?: () => Date } = {}): DueStopsScheduler {
  const now = options.now ?? (() => new Date());
  let running: Promise<void> | null = null;
  const tick = async () => {
    if (running) return;
    running = runDueStops(deps, now())
      .then((result) => {
        if (result.stops.length > 0) deps.logger.info({ stops: listSample(result.stops.map((s) => ({ id: s.id, status: s.status, result: s.result }))) }, 'due scheduled stops performed');
      })
      .catch((err: unknown) => deps.logger.error({ err }, 'running due scheduled stops failed'))
      .finally(() => {
        running = null;
      });
    await running;
  };
  const task = cron.schedule(options.expression ?? DUE_STOPS_SCHEDULE, tick, { name: 'scheduled-stops', noOverlap: true });
  return {
    async stop() {
      await task.stop();
      await task.destroy();
      if (running) await running;
    },
  };
}

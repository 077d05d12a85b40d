/**
 * The notification service: the dispatcher on a short interval (and on demand, after each
 * collection) plus the scheduled deliveries. One per process; every replica runs one.
 */
import { randomBytes } from 'node:crypto';
import type { Config } from '../config/index.js';
import type { Database } from '../db/connection.js';
import type { Logger } from '../logger.js';
import type { ReportDefinition } from '../reports/report.js';
import { createDeliveryScheduler, type DeliveryScheduler } from './deliveries.js';
import { createDispatcher, type Dispatcher, type DispatchResult } from './dispatcher.js';

export interface NotifyServiceDeps {
  db: Database;
  config: Config;
  reports: readonly ReportDefinition<unknown, unknown, unknown>[];
  logger: Logger;
  /** Default: the real clock. */
  now?: () => Date;
  /** Default: host, pid and a random part. */
  claimant?: string;
}

export interface NotifyService {
  start(): void;
  /** Sends what is due now (does not wait if a round is already running: returns that round). */
  kick(): Promise<DispatchResult | null>;
  readonly deliveries: DeliveryScheduler;
  readonly dispatcher: Dispatcher;
  stop(): Promise<void>;
}

export function createNotifyService(deps: NotifyServiceDeps): NotifyService {
  const now = deps.now ?? (() => new Date());
  const claimant = deps.claimant ?? `notify-${process.pid}-${randomBytes(4).toString('hex')}`;
  const dispatcher = createDispatcher({ db: deps.db, config: deps.config, logger: deps.logger, claimant });
  const deliveries = createDeliveryScheduler({ db: deps.db, config: deps.config, reports: deps.reports, logger: deps.logger, claimant });
  let timer: NodeJS.Timeout | null = null;
  let round: Promise<DispatchResult | null> | null = null;
  let stopped = false;

  const kick = (): Promise<DispatchResult | null> => {
    if (stopped) return Promise.resolve(null);
    round ??= dispatcher
      .dispatch(now())
      .catch((err: unknown) => {
        deps.logger.error({ err, component: 'notify' }, 'sending notifications failed');
        return null;
      })
      .finally(() => {
        round = null;
      });
    return round;
  };

  return {
    start() {
      if (timer || stopped) return;
      deliveries.start();
      timer = setInterval(() => void kick(), deps.config.outbox.intervalSeconds * 1000);
      timer.unref();
      void kick();
    },
    kick,
    deliveries,
    dispatcher,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = null;
      await deliveries.stop();
      await round;
      dispatcher.close();
    },
  };
}

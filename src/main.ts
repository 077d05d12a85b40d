/**
 * The composition root: the one place that builds the real parts (database, simulator, cloud
 * client, collection service, web app, metrics) from the validated configuration and wires them.
 * Every other module receives what it needs as arguments.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { startDueStopsScheduler } from './actions/index.js';
import { listenHostFor } from './auth/index.js';
import type { CloudClient } from './cloud/index.js';
import {
  createCollectionService,
  defaultRunnerId,
  failingUnits,
  lastGoodCollectionAt,
  runnerSessionName,
  stalledRuns,
  type CollectionService,
  type CollectorDeps,
  type ProgressEvent,
} from './collect/index.js';
import type { Config } from './config/index.js';
import { connectCloud, runtimeConfig } from './connect-cloud.js';
import { openDatabase, type Database } from './db/connection.js';
import { backfillDemoHistory, demoHistoryDays, demoHistorySteps } from './demo/history.js';
import type { Logger } from './logger.js';
import { refreshCurrentInstancesAfterRun, workAfterRun } from './notify/after-run.js';
import { createNotifyService } from './notify/service.js';
import {
  collectionAllowanceMs,
  createMetrics,
  ensureCanListen,
  healthRouter,
  listenError,
  metricsRouter,
  sessionOptions,
  shutdownService,
  type Metrics,
  type Stoppable,
} from './ops/index.js';
import { openMigratedDatabase } from './ops/startup.js';
import { ensurePartitionKeys } from './costing/derive/partition-keys.js';
import { configuredScopeKeys } from './auth/configured-scopes.js';
import { costGaugeFigures } from './reports/cost-gauges.js';
import { allReports } from './reports/index.js';
import { createReadRouting } from './reports/shared/read-routing.js';
import type { Simulator } from './simulator/index.js';
import { createWebApp } from './web/app.js';
import { createWebAuth } from './web/auth.js';
import { answerClientErrors } from './web/client-errors.js';
import { loopbackHostOnly, siteSettingsOf } from './web/site.js';
import { createReportWarmer } from './web/warm-reports.js';

/**
 * The cost gauges of /metrics recomputed one at a time, so a slow read at start-up never
 * overwrites the figures of a later run. A failure keeps the previous figures and is logged.
 */
function costGaugeUpdates(deps: { database: Database; config: Config; now: () => Date; metrics: Metrics; logger: Logger }): () => Promise<void> {
  let last = Promise.resolve();
  const update = async () => {
    try {
      deps.metrics.setCosts(await costGaugeFigures({ db: deps.database, config: deps.config, now: deps.now() }, deps.config.metrics.costGroupings));
    } catch (err) {
      deps.logger.warn({ err }, 'cost metrics not updated (computed again after the next collection)');
    }
  };
  return () => (last = last.then(update));
}

export interface RunningService {
  /** The web app's base URL, e.g. http://127.0.0.1:3000 */
  url: string;
  demo: boolean;
  database: Database;
  collection: CollectionService;
  metrics: Metrics;
  /** The built-in simulator in demo mode (tests change the demo company through it). */
  simulator?: Simulator;
  /** Resolves when the start-up work (demo history, first collection) has finished. */
  ready: Promise<void>;
  /**
   * Computes the landing views of the cached reports, as after each collection; resolves when
   * that (and the warm-up a collection started, if one is under way) is done.
   */
  warmReports(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Clock for reports and demo history (tests). */
  now?: () => Date;
  /** Days of demo history to backfill in simulator mode when the database is empty (default: back to the previous month's first day, at least 35). */
  demoHistoryDays?: number;
  /** How often a read replica found behind is looked at again (default 1 s; tests). */
  replicaRecheckMs?: number;
}

export async function startService(loaded: Config, logger: Logger, options: StartOptions = {}): Promise<RunningService> {
  const now = options.now ?? (() => new Date());
  // The same settings as `npm run collect` (the demo's gap caps and budgets in simulator mode).
  const config = runtimeConfig(loaded, now());
  // Refuse a non-loopback HOST in local-only mode before anything is opened.
  const host = listenHostFor(config);
  // A port that is taken stops the start before the database (a PGlite folder) is opened.
  await ensureCanListen(host, config.server.port);
  // Every session of this process carries its runner's name, so that another process that finds
  // its run dead can end them (collect/run-record.ts).
  const runnerId = defaultRunnerId();
  const open = sessionOptions(config.databaseSessions, runnerSessionName(runnerId));
  const database = await openMigratedDatabase(config.database, { logger, attempts: 10, delayMs: 2_000, open });
  const metrics = createMetrics({ database, logger, outbox: { overdueMinutes: config.outbox.overdueAfterMinutes } });
  // Reports read a replica once it shows the primary's data version (never migrated: read-only).
  const replica = config.databaseReadUrl ? await openDatabase({ driver: 'pg', url: config.databaseReadUrl }, open) : null;
  const reads = replica
    ? createReadRouting(replica, {
        logger,
        recheckMs: options.replicaRecheckMs,
        onRoute: (target, reason) => metrics.observeReportRead(target, reason),
        onLook: () => metrics.observeReplicaCheck(),
      })
    : undefined;
  const databases = replica ? { close: async () => void (await Promise.all([replica.close(), database.close()])) } : database;

  let simulator: Simulator | undefined;
  let client: CloudClient | undefined;
  // Started parts, stopped again when the start fails later on.
  const started: Stoppable[] = [];
  try {
    const cloud = await connectCloud(config, logger, { database, onRequest: metrics.cloudRequestHook() });
    simulator = cloud.simulator;
    client = cloud.client;
    const updateCostGauges = costGaugeUpdates({ database, config, now, metrics, logger });
    const workAfter = workAfterRun({ db: database, config, logger });
    const collectorDeps: CollectorDeps = {
      db: database,
      client,
      config,
      logger,
      runnerId,
      ...cloud.scopes,
      // Budget threshold and anomaly alerts into the outbox after every run, then the cost gauges.
      afterRun: async (finishedAt) => {
        try {
          await workAfter(finishedAt);
        } finally {
          await updateCostGauges();
        }
      },
    };
    const onProgress = metrics.collectionProgressHook();
    const reports = allReports();
    // Set while the demo history is being built: every page's banner shows how far it is.
    let demoHistory: DemoHistoryProgress | null = null;
    const observer = metrics.reportObserver();
    const reportContext = () => ({ db: database, config, now: now(), observer, ...(reads ? { reads } : {}) });
    const warmer = createReportWarmer({ reports, context: reportContext, logger });
    // Alerts and scheduled deliveries: sent on a short interval and after each collection.
    const notify = createNotifyService({ db: database, config, reports, logger, now });
    // Scheduled and manual runs warm the dashboards for their first viewer; the demo backfill
    // does not (its runs follow each other, and the first scheduled run after it warms).
    const collection = createCollectionService(collectorDeps, {
      onProgress: (event) => {
        onProgress(event);
        if (event.type === 'run-finished' && event.summary.status !== 'failed') void warmer.warm();
        // The run's alerts are in the outbox by now (afterRun): send them at once.
        if (event.type === 'run-finished') void notify.kick();
      },
    });
    const actionClient = observedStops(client, metrics);
    const dueStops = startDueStopsScheduler({ db: database, client: actionClient, config, logger });

    notify.start();
    started.push(collection, dueStops, notify);

    const secret = config.auth.sessionSecret ?? undefined;
    const site = siteSettingsOf(config);
    const auth = createWebAuth({ config, db: database, logger, publicPaths: ['/healthz', '/readyz', '/metrics'] });
    const web = createWebApp({
      reports,
      context: reportContext,
      logger,
      demo: simulator !== undefined,
      status: async () => ({ ...(await collection.status()), preparingDemo: demoHistory !== null, ...(demoHistory ? { demoHistory } : {}) }),
      collectNow: () => collection.collectNow('manual'),
      secret,
      auth,
      actions: { db: database, client: actionClient, config },
      budgets: { db: database, config, now, channelNames: config.channels.map((c) => c.name) },
      savedViews: { db: database, now },
      site,
    });

    const app = express();
    app.disable('x-powered-by');
    // Local-only mode: loopback Host names only, health and metrics included (DNS rebinding).
    if (site.localOnly) app.use(loopbackHostOnly());
    app.use(metrics.httpMiddleware());
    app.use(
      healthRouter({
        database,
        // Not collection.status(): that also reads the stale and failing scopes, which readiness reads once below.
        lastGoodCollectionAt: () => lastGoodCollectionAt(database),
        collectionFailures: () => failingUnits(database),
        stalledRuns: () => stalledRuns(database, config.collectionRuns.staleAfterMs),
        startedAt: new Date(),
        collectionMaxAgeMs: collectionAllowanceMs(config.schedules),
      }),
    );
    app.use(metricsRouter(metrics, config.metrics));
    app.use(web);

    const httpServer = createServer(app);
    answerClientErrors(httpServer, logger);
    const server = await listen(httpServer, host, config.server.port).catch((err: unknown) => {
      throw listenError(err, host, config.server.port);
    });
    const address = server.address() as AddressInfo;
    const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    logger.info({ url, demo: simulator !== undefined, database: config.database.driver }, 'cloudtally web app listening');

    const starting = new AbortController();
    const ready = Promise.all([
      startCollecting({
        logger,
        collection,
        collectorDeps,
        simulator,
        database,
        now,
        days: options.demoHistoryDays ?? demoHistoryDays(now()),
        signal: starting.signal,
        onProgress,
        onBackfill: (progress) => {
          demoHistory = progress;
          // The demo history's first step stores the first figures: the cost gauges show them
          // from then on, not only after its last step (minutes later), when they are set again.
          if (progress?.done === 1) void updateCostGauges();
        },
      }),
      // Snapshots collected while the service was down, or other idle settings: the read model follows.
      refreshCurrentInstancesAfterRun({ db: database, config, logger }),
      // The cost gauges of the data already there (empty on a fresh database).
      updateCostGauges(),
    ]).then(() => undefined);

    const cloudClient = client;
    const sim = simulator;
    return {
      url,
      demo: simulator !== undefined,
      database,
      collection,
      metrics,
      ...(sim ? { simulator: sim } : {}),
      ready,
      warmReports: () => warmer.warm(),
      async stop() {
        // A stop during start-up ends the demo backfill at its next page instead of waiting for it.
        starting.abort();
        await ready.catch(() => undefined);
        const report = await shutdownService(
          { server, collection, timers: { 'scheduled-stops': dueStops, 'report-warmer': warmer, notifications: notify }, client: cloudClient, simulator: sim, database: databases },
          { logger },
        );
        if (!report.ok) throw new Error(`shutdown incomplete: ${report.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.error}`).join('; ')}`);
      },
    };
  } catch (error) {
    // Whatever was started is stopped, so a failed start exits instead of hanging on a timer.
    for (const part of started) await Promise.resolve(part.stop()).catch(() => undefined);
    await client?.close().catch(() => undefined);
    await simulator?.close().catch(() => undefined);
    await replica?.close().catch(() => undefined);
    await database.close().catch(() => undefined);
    throw error;
  }
}

interface CollectingDeps {
  logger: Logger;
  collection: CollectionService;
  collectorDeps: CollectorDeps;
  simulator: Simulator | undefined;
  database: Database;
  now: () => Date;
  days: number;
  signal: AbortSignal;
  onProgress: (event: ProgressEvent) => void;
  /** Told how far the demo backfill is, as it starts and after each step; null when it ends. */
  onBackfill: (progress: DemoHistoryProgress | null) => void;
}

interface DemoHistoryProgress {
  done: number;
  total: number;
}

/** Demo history first (simulator mode, empty database), then the schedules and the first run. */
async function startCollecting(deps: CollectingDeps): Promise<void> {
  const { logger } = deps;
  try {
    // Before any collection: each snapshot's rollups then carry the partitions team scopes read.
    await ensurePartitionKeys(deps.database, configuredScopeKeys(deps.collectorDeps.config), logger);
    if (deps.simulator && deps.days > 0 && (await isEmpty(deps.database))) {
      logger.info({ days: deps.days }, 'empty database: backfilling demo history');
      deps.onBackfill({ done: 0, total: demoHistorySteps(deps.days) });
      try {
        const steps = await backfillDemoHistory(deps.collectorDeps, deps.simulator, {
          now: deps.now(),
          days: deps.days,
          signal: deps.signal,
          onProgress: deps.onProgress,
          onStep: (_summary, done, total) => deps.onBackfill({ done, total }),
        });
        logger.info({ steps }, 'demo history ready');
      } finally {
        deps.onBackfill(null);
      }
    }
    if (deps.signal.aborted) return;
    await deps.collection.start();
  } catch (error) {
    // The web app stays up and says the data is stale; the error is logged with its context.
    logger.error({ err: error }, 'starting the collections failed');
    throw error;
  }
}

/**
 * The client as the actions see it: every stop request sent to the cloud is counted by result
 * (dry runs and no-ops send nothing, so they are not counted here; the audit log has them all).
 */
function observedStops(client: CloudClient, metrics: Metrics): Pick<CloudClient, 'stopInstance'> {
  return {
    async stopInstance(projectId, regionId, instanceId) {
      try {
        const result = await client.stopInstance(projectId, regionId, instanceId);
        metrics.observeAction({ action: 'stop_instance', result: 'succeeded' });
        return result;
      } catch (error) {
        metrics.observeAction({ action: 'stop_instance', result: 'failed' });
        throw error;
      }
    },
  };
}

async function isEmpty(database: Database): Promise<boolean> {
  const rows = await database.query('SELECT 1 FROM snapshots LIMIT 1', []);
  return rows.length === 0;
}

function listen(server: Server, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/**
 * The service's Prometheus metrics, in a registry of its own (not prom-client's global one, so two
 * services in one process — tests — never mix their numbers).
 *
 * Every label takes values from a bounded set: collector names, configured scopes, snapshot kinds,
 * API route templates (never paths with ids), HTTP route patterns (never raw URLs), status codes.
 */
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestEvent } from '../cloud/index.js';
import { failingUnits, type UnitFailure } from '../collect/failures.js';
import type { ProgressEvent, RunSummary } from '../collect/types.js';
import type { Queryable } from '../db/connection.js';
import type { Logger } from '../logger.js';
import { outboxCounts } from '../read-models/outbox.js';
import { withTimeout } from './timeout.js';

export interface MetricsOptions {
  /** Where the age of the latest good snapshot per (kind, scope) is read from at scrape time. */
  database?: Queryable;
  /** Node.js process metrics (CPU, memory, event loop, GC). Default true. */
  defaultMetrics?: boolean;
  /** The snapshot-age query gives up after this long, so a stuck database cannot stall a scrape. Default 2000. */
  queryTimeoutMs?: number;
  /** Where a failing snapshot-age query is reported. */
  logger?: Logger;
  /** Notification outbox: failures counted over this many days; pending this many minutes late is overdue. */
  outbox?: { days?: number; overdueMinutes: number };
}

/** One action attempt (e.g. stopping an instance) and how it ended. */
export interface ActionObservation {
  action: string;
  /** e.g. `succeeded`, `failed`, `rejected`, `dry_run`. */
  result: string;
}

/**
 * The cost figures after a collection, amounts as exact decimal text (reports/cost-gauges.ts);
 * `groupBy` is `total` for a currency's total, else the grouping (`tag:team`, `project`).
 */
export interface CostFigures {
  perHour: ReadonlyArray<{ currency: string; groupBy: string; group: string; value: string }>;
  monthToDate: ReadonlyArray<{ currency: string; value: string }>;
}

export interface Metrics {
  readonly registry: Registry;
  /** Replaces the cost gauges with these figures (a group or currency not in them disappears). */
  setCosts(figures: CostFigures): void;
  /** A finished collection run: counts the run by status and the rows written per kind. */
  observeRun(summary: Pick<RunSummary, 'status' | 'counts' | 'alreadyRunning'>): void;
  /** A collection progress event: unit durations per collector and scope; `run-finished` counts the run. */
  observeProgress(event: ProgressEvent): void;
  /** One attempt of one cloud API request (the client's `onRequest` event). */
  observeApiRequest(event: RequestEvent): void;
  observeAction(event: ActionObservation): void;
  /** Where a report read went with a read replica configured: `replica`, or `primary` and why. */
  observeReportRead(target: 'replica' | 'primary', reason: string): void;
  /** The read replica's position was looked at (once per data version, then at most once per recheck while it is behind). */
  observeReplicaCheck(): void;
  /** What to pass as the reports' `observer` (reports/report.ts): counts report computations and report cache lookups. */
  reportObserver(): { computed(report: string): void; looked(report: string, outcome: string): void };
  /** The function to pass as the cloud client's `onRequest` option. */
  cloudRequestHook(): (event: RequestEvent) => void;
  /** The function to pass as a collection's `onProgress` option. */
  collectionProgressHook(): (event: ProgressEvent) => void;
  /** Express middleware timing every request, labelled with the matched route pattern. Mount it first. */
  httpMiddleware(): (req: Request, res: Response, next: NextFunction) => void;
  /** The exposition text (Prometheus text format). */
  text(): Promise<string>;
  readonly contentType: string;
}

/** Buckets in seconds: HTTP requests are fast; collection units can take minutes. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const API_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const UNIT_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];

  const runs = new Counter({
    name: 'cloudtally_collection_runs_total',
    help: 'Collection runs finished, by status (succeeded, partial, failed).',
    labelNames: ['status'] as const,
    registers,
  });
  const unitDuration = new Histogram({
    name: 'cloudtally_collection_unit_duration_seconds',
    help: 'Duration of one collector on one scope (or the global unit), by outcome (ok, failed).',
    labelNames: ['collector', 'scope', 'outcome'] as const,
    buckets: UNIT_BUCKETS,
    registers,
  });
  const rowsWritten = new Counter({
    name: 'cloudtally_rows_written_total',
    help: 'Rows written into snapshots, by resource kind.',
    labelNames: ['kind'] as const,
    registers,
  });
  const apiRequests = new Counter({
    name: 'cloudtally_api_requests_total',
    help: 'Cloud API request attempts, by endpoint template and HTTP status ("none" when no answer came).',
    labelNames: ['endpoint', 'status'] as const,
    registers,
  });
  const apiDuration = new Histogram({
    name: 'cloudtally_api_request_duration_seconds',
    help: 'Duration of one cloud API request attempt, by endpoint template.',
    labelNames: ['endpoint'] as const,
    buckets: API_BUCKETS,
    registers,
  });
  const apiRetries = new Counter({
    name: 'cloudtally_api_retries_total',
    help: 'Cloud API request attempts that failed and were retried, by endpoint template and status.',
    labelNames: ['endpoint', 'status'] as const,
    registers,
  });
  const actions = new Counter({
    name: 'cloudtally_actions_total',
    help: 'Actions on the cloud (e.g. stop instance), by action and result.',
    labelNames: ['action', 'result'] as const,
    registers,
  });
  const reportReads = new Counter({
    name: 'cloudtally_report_reads_total',
    help: 'Report reads with a read replica configured, by target (replica, primary) and reason (current, behind, error).',
    labelNames: ['target', 'reason'] as const,
    registers,
  });
  const replicaChecks = new Counter({
    name: 'cloudtally_read_replica_checks_total',
    help: "Looks at the read replica's data version (once per data version; again only while it is behind or failing).",
    registers,
  });
  const reportComputations = new Counter({
    name: 'cloudtally_report_computations_total',
    help: "Computations of a report's page or filters (its queries ran: not served from the report cache), by report.",
    labelNames: ['report'] as const,
    registers,
  });
  const reportLookups = new Counter({
    name: 'cloudtally_report_cache_lookups_total',
    help: 'Report cache lookups of cached reports, by report and outcome: fresh (a kept result), shared (a computation under way for the same parameters and data: single flight), stale (served while recomputed), computed.',
    labelNames: ['report', 'outcome'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'cloudtally_http_request_duration_seconds',
    help: 'Web requests, by method, matched route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  });

  // Set after each collection, never read at scrape time: a scrape costs the database nothing.
  const costPerHour = new Gauge({
    name: 'cloudtally_cost_per_hour',
    help: 'Run-rate per hour of the latest snapshots, per currency: group_by="total" for the total, else per group of a configured grouping (e.g. group_by="tag:team"). Set after each collection.',
    labelNames: ['currency', 'group_by', 'group'] as const,
    registers,
  });
  const costMonthToDate = new Gauge({
    name: 'cloudtally_cost_month_to_date',
    help: 'Estimated spend this month so far, per currency; absent while no snapshot covers an hour of the month. Set after each collection.',
    labelNames: ['currency'] as const,
    registers,
  });
  const setCosts: Metrics['setCosts'] = (figures) => {
    costPerHour.reset();
    costMonthToDate.reset();
    for (const f of figures.perHour) costPerHour.set({ currency: f.currency, group_by: f.groupBy, group: f.group }, Number(f.value));
    for (const f of figures.monthToDate) costMonthToDate.set({ currency: f.currency }, Number(f.value));
  };

  const database = options.database;
  const queryTimeoutMs = options.queryTimeoutMs ?? 2000;
  const databaseUp = new Gauge({
    name: 'cloudtally_database_up',
    help: '1 when the snapshot-age query at this scrape succeeded, 0 when it failed or timed out.',
    registers: database ? registers : [],
  });
  new Gauge({
    name: 'cloudtally_snapshot_age_seconds',
    help: 'Age of the latest complete snapshot, by kind and scope (read from the database at scrape time).',
    labelNames: ['kind', 'scope'] as const,
    registers: database ? registers : [],
    async collect() {
      if (!database) return;
      // Reset first: a scope whose snapshots were all pruned must not keep its last value.
      this.reset();
      try {
        const rows = await withTimeout(
          database.query<{ kind: string; scope_key: string; age_s: number | string }>(
            `SELECT kind, scope_key, extract(epoch FROM (now() - max(taken_at)))::float8 AS age_s
               FROM snapshots WHERE complete GROUP BY 1, 2`,
          ),
          queryTimeoutMs,
          'snapshot age query',
        );
        for (const row of rows) this.set({ kind: row.kind, scope: row.scope_key }, Math.max(0, Number(row.age_s)));
        databaseUp.set(1);
      } catch (err) {
        databaseUp.set(0);
        options.logger?.warn({ error: (err as Error).message }, 'metrics: snapshot age query failed');
      }
    },
  });

  // Units seen failing by this process: they stay as series at 0 once they recover, so a graph
  // shows the recovery and an alert resolves (instead of the series vanishing).
  const seenFailing = new Map<string, { collector: string; scope: string; cause: string }>();
  // Both gauges below read the same query; collected together, they share one round trip.
  let failuresInFlight: Promise<UnitFailure[] | null> | null = null;
  const readFailures = (db: Queryable) =>
    (failuresInFlight ??= withTimeout(failingUnits(db), queryTimeoutMs, 'failing collections query')
      .catch((err: unknown) => {
        options.logger?.warn({ error: (err as Error).message }, 'metrics: failing collections query failed');
        return null;
      })
      .finally(() => {
        failuresInFlight = null;
      }));
  new Gauge({
    name: 'cloudtally_collection_failing_units',
    help: 'Collector and scope units whose latest run failed (read from the database at scrape time); 0 when every collection is healthy.',
    registers: database ? registers : [],
    async collect() {
      if (!database) return;
      const failures = await readFailures(database);
      if (failures) this.set(failures.length);
    },
  });
  new Gauge({
    name: 'cloudtally_collection_scope_failing',
    help: 'Per collector, scope and cause (auth, network, timeout, server, rate_limited...): 1 while the latest run of that unit failed, 0 once a later run completed it. Scope "*": a run that failed as a whole.',
    labelNames: ['collector', 'scope', 'cause'] as const,
    registers: database ? registers : [],
    async collect() {
      if (!database) return;
      const failures = await readFailures(database);
      if (!failures) return;
      this.reset();
      for (const labels of seenFailing.values()) this.set(labels, 0);
      for (const f of failures) {
        const labels = { collector: f.collector, scope: f.scope, cause: f.cause };
        seenFailing.set(`${labels.collector}\u0000${labels.scope}\u0000${labels.cause}`, labels);
        this.set(labels, 1);
      }
    },
  });

  // Channels seen with undelivered notifications stay as series at 0 once they recover.
  const seenChannels = new Set<string>();
  new Gauge({
    name: 'cloudtally_notification_deliveries',
    help: 'Notification deliveries per channel and state, read from the outbox at scrape time: failed (messages of the last 7 days that failed after every retry), pending (not sent yet), overdue (pending past their time: nothing is sending them).',
    labelNames: ['channel', 'state'] as const,
    registers: database ? registers : [],
    async collect() {
      if (!database) return;
      try {
        const counts = await withTimeout(
          outboxCounts(database, new Date(), { days: options.outbox?.days ?? 7, overdueMinutes: options.outbox?.overdueMinutes ?? 30 }),
          queryTimeoutMs,
          'notification outbox query',
        );
        this.reset();
        for (const channel of seenChannels) for (const state of ['failed', 'pending', 'overdue']) this.set({ channel, state }, 0);
        for (const c of counts.channels) {
          seenChannels.add(c.channel);
          this.set({ channel: c.channel, state: 'failed' }, c.failed);
          this.set({ channel: c.channel, state: 'pending' }, c.pending);
          this.set({ channel: c.channel, state: 'overdue' }, c.overdue);
        }
      } catch (err) {
        options.logger?.warn({ error: (err as Error).message }, 'metrics: notification outbox query failed');
      }
    },
  });

  const observeRun: Metrics['observeRun'] = (summary) => {
    if (summary.alreadyRunning) return; // nothing ran: the other run is counted when it ends
    runs.inc({ status: summary.status });
    for (const [kind, rows] of Object.entries(summary.counts)) {
      if (rows > 0) rowsWritten.inc({ kind }, rows);
    }
  };

  const observeProgress: Metrics['observeProgress'] = (event) => {
    switch (event.type) {
      case 'unit-done':
        unitDuration.observe({ collector: event.collector, scope: event.scope, outcome: 'ok' }, event.durationMs / 1000);
        break;
      case 'unit-failed':
        unitDuration.observe({ collector: event.collector, scope: event.scope, outcome: 'failed' }, event.durationMs / 1000);
        break;
      case 'run-finished':
        observeRun(event.summary);
        break;
      default:
        break;
    }
  };

  const observeApiRequest: Metrics['observeApiRequest'] = (event) => {
    const status = event.status === null ? 'none' : String(event.status);
    apiRequests.inc({ endpoint: event.endpoint, status });
    apiDuration.observe({ endpoint: event.endpoint }, event.durationMs / 1000);
    if (event.outcome === 'retry') apiRetries.inc({ endpoint: event.endpoint, status });
  };

  return {
    registry,
    setCosts,
    observeRun,
    observeProgress,
    observeApiRequest,
    observeAction: (event) => actions.inc({ action: event.action, result: event.result }),
    observeReportRead: (target, reason) => reportReads.inc({ target, reason }),
    observeReplicaCheck: () => replicaChecks.inc(),
    reportObserver: () => ({
      computed: (report) => reportComputations.inc({ report }),
      looked: (report, outcome) => reportLookups.inc({ report, outcome }),
    }),
    cloudRequestHook: () => observeApiRequest,
    collectionProgressHook: () => observeProgress,
    httpMiddleware: () => (req, res, next) => {
      const stop = httpDuration.startTimer();
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        stop({ method: KNOWN_METHODS.has(req.method) ? req.method : 'OTHER', route: routeLabel(req), status: String(res.statusCode) });
      };
      res.once('finish', finish);
      res.once('close', finish);
      next();
    },
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/**
 * The route pattern that answered (`/reports/:id`), or `(unmatched)` for anything no route took
 * (static files, 404s): a label built from the raw URL would let any caller mint new series.
 */
export function routeLabel(req: Request): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  if (!route || route.path === undefined) return '(unmatched)';
  const path = route.path;
  const pattern = Array.isArray(path) ? path.map(String).join('|') : String(path);
  // baseUrl is the mount path of the router that matched (empty for routers mounted at the root).
  return `${req.baseUrl ?? ''}${pattern}` || '/';
}

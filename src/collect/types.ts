/** Types shared by the collectors, the run driver, the service and the CLI command. */
import type { CloudClient } from '../cloud/index.js';
import type { CollectorName, Config, DeepReadonly, Scope } from '../config/index.js';
import type { Database } from '../db/connection.js';
import type { RunError, RunStatus, RunTrigger } from '../db/schema.js';
import type { Logger } from '../logger.js';

export type { CollectorName } from '../config/index.js';
export type ScopeConfig = DeepReadonly<Scope>;
export type { RunError, RunStatus, RunTrigger } from '../db/schema.js';

export interface CollectorDeps {
  db: Database;
  client: CloudClient;
  config: Config;
  /** The project + region pairs to collect (from the config, or the simulator's manifest). */
  scopes: readonly DeepReadonly<Scope>[];
  logger: Logger;
  /** Names this process in run records and schedule claims; default `<hostname>:<pid>`. */
  runnerId?: string;
  /** Image ids whose tags are collected besides those seen in clusters; default config.imageIds. */
  imageIds?: readonly string[];
  /** Free-feature activation ids to collect; default config.freeFeatureIds. */
  freeFeatureIds?: readonly number[];
  /**
   * Work after each run, once its complete days are closed (budget threshold alerts, wired by
   * main.ts), given the run's end. A failure is logged and never fails the run.
   */
  afterRun?: (finishedAt: Date) => Promise<void>;
}

/** Counts of rows written per kind; `cluster_server` is counted apart from `cluster`. */
export type RowCounts = Record<string, number>;

export interface CollectorSummary {
  collector: CollectorName;
  /** Scopes (or the global unit) whose snapshot completed. */
  scopesOk: number;
  scopesFailed: number;
  /** Units with nothing configured to collect (no security groups, no Kubernetes clusters...). */
  scopesSkipped: number;
  rows: number;
  /** Wall time from the collector's first unit start to its last unit end. */
  durationMs: number;
}

export interface RunSummary {
  runId: number;
  status: RunStatus;
  /** True when another collection was already running: nothing was started, runId is that run. */
  alreadyRunning: boolean;
  trigger: RunTrigger;
  collectors: CollectorName[];
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number;
  counts: RowCounts;
  errors: RunError[];
  perCollector: CollectorSummary[];
  /**
   * Another process had ended the run before this one could (it took the run for dead: no
   * heartbeat, e.g. this process was frozen): its record stands, and this process wrote nothing more.
   */
  endedElsewhere?: boolean;
}

export type ProgressEvent =
  | { type: 'run-started'; runId: number; collectors: CollectorName[]; scopes: number }
  | { type: 'unit-started'; collector: CollectorName; scope: string }
  | { type: 'unit-done'; collector: CollectorName; scope: string; rows: number; durationMs: number; itemErrors: number }
  | { type: 'unit-failed'; collector: CollectorName; scope: string; durationMs: number; error: RunError }
  | { type: 'unit-skipped'; collector: CollectorName; scope: string; reason: string }
  | { type: 'run-finished'; summary: RunSummary };

export interface RunCollectionOptions {
  trigger?: RunTrigger;
  collectors?: readonly CollectorName[];
  /** Backdates taken_at (demo history, tests); the run's clock starts here. Default: the real time. */
  now?: Date;
  onProgress?: (event: ProgressEvent) => void;
  /** Aborting stops the run at the next page or item; the unfinished snapshots are rolled back. */
  signal?: AbortSignal;
  /** How often the run's heartbeat is written (default: the configuration's collectionRuns). */
  heartbeatMs?: number;
  /** A running run whose heartbeat is older than this is dead (default: the configuration's collectionRuns). */
  deadAfterMs?: number;
}

/** When each collector runs, and how the cloud API client behaves. */
import { z } from 'zod';
import type { Env } from './env.js';
import type { ConfigProblem } from './problems.js';
import { COLLECTOR_NAMES, type ClientSettings, type CollectionRunSettings, type CollectorName } from './types.js';
import { cronExpression } from './validators.js';

/** Inventory hourly; prices change rarely (every 6 h); free features daily. */
export const DEFAULT_SCHEDULES: Readonly<Record<CollectorName, string>> = Object.freeze({
  clusters: '0 * * * *',
  instances: '0 * * * *',
  ports: '0 * * * *',
  keypairs: '0 * * * *',
  flavors: '0 */6 * * *',
  k8s_prices: '0 */6 * * *',
  storage_keys: '0 * * * *',
  image_tags: '0 * * * *',
  free_features: '0 3 * * *',
});

export const SchedulesSchema = z.strictObject(
  Object.fromEntries(COLLECTOR_NAMES.map((name) => [name, cronExpression.optional()])) as Record<
    CollectorName,
    z.ZodOptional<typeof cronExpression>
  >,
);

const MiB = 1024 * 1024;

export const ClientSchema = z.strictObject({
  /** One attempt, from sending to the body's last byte: also the bound of a body that trickles. */
  timeout_ms: z.int().min(100).max(600_000).default(30_000),
  max_concurrency: z.int().min(1).max(256).default(8),
  max_retries: z.int().min(0).max(20).default(4),
  /**
   * Largest list answer (one page) read. The largest list of the API is the instances of one
   * security group, which is not paged: 64 MiB holds about 50,000 instances of the simulator's
   * size (1.3 KB each). Capped at 256 MiB: a JavaScript string cannot be much longer.
   */
  max_page_bytes: z.int().min(1024).max(256 * MiB).default(64 * MiB),
  /** Largest other answer read: one record, a task, a price, an error body. */
  max_record_bytes: z.int().min(1024).max(64 * MiB).default(MiB),
});

/** The default schedules, each replaced by the file's own where it has one. */
export function scheduleSettings(raw: z.output<typeof SchedulesSchema>): Record<CollectorName, string> {
  return { ...DEFAULT_SCHEDULES, ...definedEntries(raw) };
}

export function clientSettings(raw: z.output<typeof ClientSchema>): ClientSettings {
  return {
    timeoutMs: raw.timeout_ms,
    maxConcurrency: raw.max_concurrency,
    maxRetries: raw.max_retries,
    maxPageBytes: raw.max_page_bytes,
    maxRecordBytes: raw.max_record_bytes,
  };
}

function definedEntries<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export const DEFAULT_HEARTBEAT_SECONDS = 15;

/**
 * The run heartbeat (CLOUDTALLY_RUN_HEARTBEAT_SECONDS) and when a silent run counts as dead
 * (CLOUDTALLY_RUN_STALE_SECONDS, default three heartbeats): the next collection then ends it, so
 * a frozen collector blocks the others for about this long.
 */
export function collectionRunSettings(vars: Env, problems: ConfigProblem[]): CollectionRunSettings {
  const heartbeat = vars.CLOUDTALLY_RUN_HEARTBEAT_SECONDS ?? DEFAULT_HEARTBEAT_SECONDS;
  const stale = vars.CLOUDTALLY_RUN_STALE_SECONDS ?? 3 * heartbeat;
  if (stale < 2 * heartbeat) {
    problems.push({
      path: 'CLOUDTALLY_RUN_STALE_SECONDS',
      message: `must be at least twice the heartbeat (${2 * heartbeat} s with CLOUDTALLY_RUN_HEARTBEAT_SECONDS ${heartbeat}): a live run must not be taken for dead after one late heartbeat`,
    });
  }
  return { heartbeatMs: heartbeat * 1000, staleAfterMs: stale * 1000 };
}

import { z } from 'zod';
import type { Dispatcher } from 'undici';
import { fieldProblems } from './schemas/index.js';
import { describeProblems } from './errors.js';
import { Transport, silentLogger, type CloudLogger, type RequestEvent } from './http.js';
import { cdnApi, type CdnApi } from './areas/cdn.js';
import { clusterApi, type ClusterApi } from './areas/clusters.js';
import { imagesAndKeysApi, type ImagesAndKeysApi } from './areas/images-and-keys.js';
import { instanceApi, type InstanceApi } from './areas/instances.js';
import { loadBalancingApi, type LoadBalancingApi } from './areas/load-balancing.js';
import { pricingApi, type PricingApi } from './areas/pricing.js';
import { serverlessApi, type ServerlessApi } from './areas/serverless.js';
import { taskApi, type TaskApi } from './areas/tasks.js';

export interface CloudClientOptions {
  /** Base address of the API; may carry a path prefix (`https://host/api`). */
  baseUrl: string;
  /** Sent as `Authorization: apikey <key>`; never logged or shown in an error. */
  apiKey: string;
  /** Per-attempt timeout, from sending to the end of the body. Default 30000. */
  timeoutMs?: number;
  /**
   * Largest body of a list answer (one page) that is read, in bytes; a larger one fails its
   * request with CloudResponseTooLargeError, unread beyond the limit. Default 64 MiB.
   */
  maxPageBytes?: number;
  /** The same for any other answer (a record, a task, an error body). Default 1 MiB. */
  maxRecordBytes?: number;
  /** At most this many requests of this client in flight at once (task polls included). Default 8. */
  maxConcurrency?: number;
  retry?: {
    /** Attempts per request, the first included. Default 5. */
    maxAttempts?: number;
    /** Backoff base: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))). Default 200. */
    baseDelayMs?: number;
    /** Cap of a backoff and of an honoured Retry-After. Default 10000. */
    maxDelayMs?: number;
  };
  taskPoll?: {
    /** Default 500. */
    intervalMs?: number;
    /** Default 5000. */
    maxIntervalMs?: number;
    /** Default 600000 (10 minutes). */
    timeoutMs?: number;
  };
  /** pino-compatible; default silent. */
  logger?: CloudLogger;
  /** Called after every attempt (for metrics). */
  onRequest?: (event: RequestEvent) => void;
  /** An undici dispatcher to use instead of the client's own keep-alive Agent (the client does not close it). */
  dispatcher?: Dispatcher;
}

/** The typed client: one method per endpoint of the spec, plus tasks and pagination. */
export interface CloudClient
  extends ClusterApi,
    InstanceApi,
    LoadBalancingApi,
    PricingApi,
    ServerlessApi,
    ImagesAndKeysApi,
    CdnApi,
    TaskApi {
  /** Closes the client's connections (after in-flight requests end); later calls fail with CLIENT_CLOSED. */
  close(): Promise<void>;
}

const MiB = 1024 * 1024;
export const DEFAULT_MAX_PAGE_BYTES = 64 * MiB;
export const DEFAULT_MAX_RECORD_BYTES = MiB;

const positiveInt = z.int({ error: 'must be an integer' }).min(1, 'must be at least 1');
const nonNegativeInt = z.int({ error: 'must be an integer' }).min(0, 'must be at least 0');

const OptionsSchema = z.object({
  baseUrl: z
    .url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .refine((u) => !/[?#]/.test(u), 'must not carry a query or fragment'),
  apiKey: z
    .string({ error: 'required string' })
    .min(1, 'must not be empty')
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces'),
  timeoutMs: positiveInt.default(30_000),
  maxPageBytes: positiveInt.default(DEFAULT_MAX_PAGE_BYTES),
  maxRecordBytes: positiveInt.default(DEFAULT_MAX_RECORD_BYTES),
  maxConcurrency: positiveInt.default(8),
  retry: z
    .strictObject({
      maxAttempts: positiveInt.default(5),
      baseDelayMs: nonNegativeInt.default(200),
      maxDelayMs: nonNegativeInt.default(10_000),
    })
    .default({ maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 }),
  taskPoll: z
    .strictObject({
      intervalMs: positiveInt.default(500),
      maxIntervalMs: positiveInt.default(5_000),
      timeoutMs: nonNegativeInt.default(600_000),
    })
    .default({ intervalMs: 500, maxIntervalMs: 5_000, timeoutMs: 600_000 }),
});

/** Builds a client with its own connection pool; throws a TypeError listing every bad option. */
export function createCloudClient(options: CloudClientOptions): CloudClient {
  const { logger, onRequest, dispatcher, ...scalars } = options;
  const parsed = OptionsSchema.safeParse(scalars);
  if (!parsed.success) {
    throw new TypeError(`invalid cloud client options: ${describeProblems(fieldProblems(parsed.error, 'options'))}`);
  }
  const settings = parsed.data;
  const transport = new Transport({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    timeoutMs: settings.timeoutMs,
    maxPageBytes: settings.maxPageBytes,
    maxRecordBytes: settings.maxRecordBytes,
    maxConcurrency: settings.maxConcurrency,
    retry: settings.retry,
    logger: logger ?? silentLogger,
    onRequest,
    dispatcher,
  });
  return {
    ...clusterApi(transport),
    ...instanceApi(transport),
    ...loadBalancingApi(transport),
    ...pricingApi(transport),
    ...serverlessApi(transport),
    ...imagesAndKeysApi(transport),
    ...cdnApi(transport),
    ...taskApi(transport, settings.taskPoll),
    close: () => transport.close(),
  };
}

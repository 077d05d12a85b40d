import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { createLogger, silentLogger, type Logger } from '../../src/logger.js';
import { startService, type RunningService, type StartOptions } from '../../src/main.js';
import { freshPostgresDatabase } from '../helpers/databases.js';

/** A real pino logger (with the service's redaction) writing JSON lines into memory. */
export function memoryLogger(level = 'debug'): { logger: Logger; text: () => string; entries: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const logger = createLogger({ level, destination: { write: (chunk: string) => void chunks.push(chunk) } });
  const text = () => chunks.join('');
  return {
    logger,
    text,
    entries: () =>
      text()
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export interface MetricSample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample of one metric in the exposition text (Prometheus text format), with its labels. */
export function metricSamples(text: string, metric: string): MetricSample[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${metric}{`) || line.startsWith(`${metric} `))
    .map((line) => {
      const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { labels, value: Number(match[2]) };
    });
}

/** The databases a started service is tested on: PGlite in memory, and Postgres when TEST_DATABASE_URL is set. */
export const SERVICE_DATABASES = [{ name: 'PGlite' }, ...(process.env.TEST_DATABASE_URL ? [{ name: 'Postgres' }] : [])];

/**
 * A service started for the tests of one describe block (the demo company, a day of history and
 * its start-up collection done), in memory or on a fresh Postgres database (`name` 'Postgres'),
 * stopped and dropped after them. Returns the service and, on Postgres, its database's URL.
 */
export function startedDemoService(name: string, options: StartOptions = {}): () => { service: RunningService; databaseUrl?: string } {
  let service: RunningService | undefined;
  let postgres: { url: string; drop(): Promise<void> } | undefined;
  beforeAll(async () => {
    if (name === 'Postgres') postgres = await freshPostgresDatabase(process.env.TEST_DATABASE_URL!);
    const env = postgres ? { DATABASE_URL: postgres.url } : {};
    const config = loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', ...env });
    service = await startService(config, silentLogger(), { demoHistoryDays: 1, ...options });
    await service.ready;
    await service.collection.idle();
  }, 240_000);
  afterAll(async () => {
    await service?.stop();
    await postgres?.drop();
  }, 60_000);
  return () => ({ service: service!, ...(postgres ? { databaseUrl: postgres.url } : {}) });
}

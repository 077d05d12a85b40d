import { pino, type Logger, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

/**
 * Paths that may carry secrets anywhere in a log object. pino's redaction works on known paths,
 * so every place a secret can appear is listed (one and two levels deep covers our log objects).
 */
export const REDACTED_PATHS = [
  'apiKey',
  'api_key',
  'password',
  'user_data',
  'private_key',
  'encrypted_password',
  'authorization',
  'cookie',
  'headers.authorization',
  'headers.cookie',
  'req.headers.authorization',
  'req.headers.cookie',
  '*.apiKey',
  '*.password',
  '*.user_data',
  '*.private_key',
  '*.encrypted_password',
  '*.authorization',
  '*.cookie',
];

export interface LoggerOptions {
  level?: string;
  /** Human-readable output (a person at a terminal); JSON lines otherwise. */
  pretty?: boolean;
  /** Where JSON lines go; defaults to stdout. Tests pass a stream to inspect the logs. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const settings = {
    level: options.level ?? 'info',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'cloudtally' },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  if (options.destination) return pino(settings, options.destination);
  if (options.pretty) return pino(settings, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service' }));
  return pino(settings);
}

/** Examples a log line shows of a list, and the longest text of one example. */
export const LOG_LIST_EXAMPLES = 5;
const LOG_EXAMPLE_CHARS = 200;

/**
 * A list as it goes into a log line: how many, and the first few (texts cut short); never the
 * whole list, which may hold anything the cloud or a client sent.
 */
export function listSample<T>(items: readonly T[], max = LOG_LIST_EXAMPLES): { count: number; examples: T[] } {
  const cut = (item: T): T => (typeof item === 'string' && item.length > LOG_EXAMPLE_CHARS ? (`${item.slice(0, LOG_EXAMPLE_CHARS)}...` as T) : item);
  return { count: items.length, examples: items.slice(0, max).map(cut) };
}

/** A logger that drops everything, for library defaults and quiet tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

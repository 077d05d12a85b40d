import { createLogger, type Logger } from '../../src/logger.js';

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

/** Errors of a collection run, as stored in collection_runs.errors. */
import { CloudApiError, CloudError, CloudResponseError } from '../cloud/index.js';
import type { RunError } from '../db/schema.js';

/** The run was asked to stop (service shutdown): the unit in progress is rolled back. */
export class CollectionStoppedError extends Error {
  constructor(reason = 'collection stopped before this scope finished (asked to stop: shutdown or signal)') {
    super(reason);
    this.name = 'CollectionStoppedError';
  }
}

/** HTTP status of a cloud error, when the API answered. */
export function statusOf(err: unknown): number | null {
  if (err instanceof CloudApiError || err instanceof CloudResponseError) return err.status;
  return null;
}

/** A 404 from the API: the thing asked for does not exist (any more). */
export function isNotFound(err: unknown): boolean {
  return err instanceof CloudApiError && err.status === 404;
}

/**
 * One error entry: the collector and scope, the failing endpoint (`GET /cloud/v1/...` as sent)
 * and status when the cloud API failed, and a one-line message. Cloud errors never carry the
 * API key (the client guarantees it); database errors carry the statement's context.
 */
export function toRunError(err: unknown, collector: string, scope: string): RunError {
  if (err instanceof CloudError) {
    return { collector, scope, endpoint: `${err.method} ${err.path}`, status: statusOf(err), message: err.message };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { collector, scope, endpoint: '', status: null, message: message.replace(/\s+/g, ' ').trim() };
}

/** Errors of a collection run, as stored in collection_runs.errors. */
import { CloudApiError, CloudError, CloudNetworkError, CloudResponseError, CloudTimeoutError, CloudValidationError } from '../cloud/index.js';
import type { FailureCause, RunError } from '../db/schema.js';

/** The run was asked to stop (service shutdown): the unit in progress is rolled back. */
export class CollectionStoppedError extends Error {
  constructor(reason = 'collection stopped before this scope finished (asked to stop: shutdown or signal)') {
    super(reason);
    this.name = 'CollectionStoppedError';
  }
}

/**
 * A unit cannot run because another collector has not produced what it works from yet (ports
 * need an instance snapshot, image tags a cluster snapshot): a consequence, not a cause.
 */
export class MissingSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingSourceError';
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

/** 401 or 403: the API key is not accepted, so every further request of the run would fail the same way. */
export function isAuthFailure(err: unknown): boolean {
  return err instanceof CloudApiError && (err.status === 401 || err.status === 403);
}

/** The kind of failure of a status (runs recorded before `cause` existed are read with this). */
export function causeOfStatus(status: number | null): FailureCause {
  if (status === null) return 'internal';
  if (status === 401 || status === 403) return 'auth';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server';
  if (status >= 400) return 'client';
  return 'response';
}

/** The kind of failure of a typed error. */
export function causeOf(err: unknown): FailureCause {
  if (err instanceof CollectionStoppedError) return 'stopped';
  if (err instanceof MissingSourceError) return 'dependency';
  if (err instanceof CloudApiError) return causeOfStatus(err.status);
  if (err instanceof CloudTimeoutError) return 'timeout';
  if (err instanceof CloudNetworkError) return 'network';
  if (err instanceof CloudResponseError) return 'response';
  if (err instanceof CloudValidationError) return 'client';
  return 'internal';
}

/**
 * One error entry: the collector and scope, the failing endpoint (`GET /cloud/v1/...` as sent)
 * and status when the cloud API failed, the kind of failure, and a one-line message. Cloud errors
 * never carry the API key (the client guarantees it); database errors carry the statement's context.
 */
export function toRunError(err: unknown, collector: string, scope: string): RunError {
  const cause = causeOf(err);
  if (err instanceof CloudError) {
    return { collector, scope, endpoint: `${err.method} ${err.path}`, status: statusOf(err), message: err.message, cause };
  }
  const message = err instanceof Error ? err.message : String(err);
  return { collector, scope, endpoint: '', status: null, message: message.replace(/\s+/g, ' ').trim(), cause };
}

/** Why a run stops by itself (run.ts), as its stop messages say it. */
const SELF_STOP = /\((its database session was lost|the run was ended by another process)\)/;

/**
 * What a failure means for the people reading a banner or a readiness answer: derived from the
 * typed error's kind and status, e.g. "API key not accepted (401)".
 */
export function failureReason(error: Pick<RunError, 'status' | 'message' | 'cause'>): string {
  const cause = error.cause ?? causeOfStatus(error.status);
  const status = error.status === null ? '' : ` (${error.status})`;
  switch (cause) {
    case 'auth':
      return `API key not accepted${status}`;
    case 'network':
      return 'cloud API unreachable';
    case 'timeout':
      return 'cloud API timed out';
    case 'rate_limited':
      return `cloud API rate limit${status}`;
    case 'server':
      return `cloud API error${status}`;
    case 'not_found':
      return `not found in the cloud${status}: check the configured scope and ids`;
    case 'client':
      return `request refused by the cloud API${status}`;
    case 'response':
      return 'cloud API answered an unusable body';
    case 'stopped':
      return `collection stopped (${SELF_STOP.exec(error.message)?.[1] ?? 'service shutting down'})`;
    case 'dependency':
      return 'nothing to work from: another collector of this scope has not succeeded yet';
    case 'internal':
      return error.message.length > 160 ? `${error.message.slice(0, 157)}...` : error.message;
  }
}

import type { Response } from 'express';
import type { AccessScope } from '../auth/access-scope.js';
import type { Identity } from '../auth/identity.js';

/** What the request's user may see: their scope, or null (everything; also without a user). */
export function scopeOfRequest(res: Response): AccessScope | null {
  return (res.locals.identity as Identity | undefined)?.scope ?? null;
}

/** The reports a user of this scope may open (all of them without a scope). */
export function visibleReports<R extends { scoped?: boolean }>(reports: readonly R[], scope: AccessScope | null): R[] {
  return scope ? reports.filter((r) => r.scoped === true) : [...reports];
}

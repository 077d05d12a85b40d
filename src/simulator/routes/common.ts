import { notFound } from '../http/errors.js';
import type { RouteContext } from '../http/types.js';
import type { SimScope } from '../model.js';
import type { WireContext } from '../wire/common.js';

/** The project + region pair, or 404 when it is not one of the company's scopes. */
export function requireScope(ctx: RouteContext, projectId: number, regionId: number): SimScope {
  const scope = ctx.state.findScope(projectId, regionId);
  if (!scope) throw notFound(`project ${projectId} has no region ${regionId} (not a known scope)`);
  return scope;
}

export function wire(ctx: RouteContext): WireContext {
  return { state: ctx.state, legacy: ctx.legacy, path: ctx.path };
}

/** Creates answer 200 (spec) or 201 (legacy: some real endpoints do). */
export function createdStatus(ctx: RouteContext): number {
  return ctx.legacy ? 201 : 200;
}

export function taskList(...ids: string[]): { tasks: string[] } {
  return { tasks: ids };
}

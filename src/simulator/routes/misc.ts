import { z } from 'zod';
import { FreeFeatureIdSchema, PathIdSchema } from '../../cloud/schemas/requests.js';
import { notFound } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { ok, type RouteContext } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import { freeFeatureWire, taskWire } from '../wire/misc.js';
import { wire } from './common.js';

/** The spec writes `/v1/tasks/{id}`, the provider's SDK calls `/cloud/v1/tasks/{id}`: both are served. */
export const TASK_PATHS = ['/v1/tasks/:task_id', '/cloud/v1/tasks/:task_id'] as const;

function getTask(ctx: RouteContext) {
  const { path } = validateRequest({ path: z.object({ task_id: PathIdSchema }) }, { path: ctx.params });
  const task = ctx.state.getTask(path.task_id);
  if (!task) throw notFound(`task ${path.task_id} not found`);
  return ok(taskWire(task, wire(ctx)));
}

export function addMiscRoutes(router: Router): void {
  for (const path of TASK_PATHS) router.add('GET', path, getTask);

  router.add('GET', '/cdn/admin/free_features/:free_feature_id', (ctx) => {
    const { path } = validateRequest({ path: z.object({ free_feature_id: FreeFeatureIdSchema }) }, { path: ctx.params });
    const feature = ctx.state.freeFeature(path.free_feature_id);
    if (!feature) throw notFound(`free feature ${path.free_feature_id} not found`);
    return ok(freeFeatureWire(feature, wire(ctx)));
  });

  // The simulator's own routes (outside the spec, no auth).
  router.add('GET', '/_sim/manifest', (ctx) => ok(ctx.state.manifest()), { public: true });
  router.add('GET', '/_sim/health', (ctx) => ok({ status: 'ok', legacy: ctx.legacy, now: ctx.state.clock().toISOString() }), {
    public: true,
  });
}

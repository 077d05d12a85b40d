import {
  LbPoolCreateBodySchema,
  ListenerUpdateBodySchema,
  LoadBalancerCreateBodySchema,
  PathIdSchema,
  ScopeParamsSchema,
} from '../../cloud/schemas/requests.js';
import { notFound } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { ok, type RouteContext } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import { createLoadBalancer, createPool } from '../operations.js';
import { listenerWire } from '../wire/misc.js';
import { createdStatus, requireScope, taskList, wire } from './common.js';

const ListenerParamsSchema = ScopeParamsSchema.extend({ listener_id: PathIdSchema });

/**
 * Listener update: the spec names only the replacement path (`PATCH /v2/lblisteners/...`); it is
 * served there, under `/cloud/v2/` (where the provider's SDK puts it), and at the deprecated
 * `/cloud/v1/` path.
 */
export const LISTENER_UPDATE_PATHS = [
  '/v2/lblisteners/:project_id/:region_id/:listener_id',
  '/cloud/v2/lblisteners/:project_id/:region_id/:listener_id',
  '/cloud/v1/lblisteners/:project_id/:region_id/:listener_id',
] as const;

function updateListener(ctx: RouteContext) {
  const { path, body } = validateRequest(
    { path: ListenerParamsSchema, body: ListenerUpdateBodySchema },
    { path: ctx.params, body: ctx.body },
  );
  requireScope(ctx, path.project_id, path.region_id);
  const listener = ctx.state.listener(path.project_id, path.region_id, path.listener_id);
  if (!listener) throw notFound(`listener ${path.listener_id} not found in project ${path.project_id} region ${path.region_id}`);
  listener.name = body.name;
  ctx.state.noteChange();
  return ok(listenerWire(listener, wire(ctx)));
}

export function addLoadBalancingRoutes(router: Router): void {
  router.add('POST', '/cloud/v1/lbpools/:project_id/:region_id', (ctx) => {
    const { path, body } = validateRequest(
      { path: ScopeParamsSchema, body: LbPoolCreateBodySchema },
      { path: ctx.params, body: ctx.body },
    );
    const scope = requireScope(ctx, path.project_id, path.region_id);
    return ok(taskList(createPool(ctx.state, scope, body).id), createdStatus(ctx));
  });

  /** The spec does not show the path; this is the provider's. */
  router.add('POST', '/cloud/v1/loadbalancers/:project_id/:region_id', (ctx) => {
    const { path, body } = validateRequest(
      { path: ScopeParamsSchema, body: LoadBalancerCreateBodySchema },
      { path: ctx.params, body: ctx.body },
    );
    const scope = requireScope(ctx, path.project_id, path.region_id);
    return ok(taskList(createLoadBalancer(ctx.state, scope, body).id), createdStatus(ctx));
  });

  for (const path of LISTENER_UPDATE_PATHS) router.add('PATCH', path, updateListener);
}

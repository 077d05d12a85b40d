import { PathIdSchema, ScopeParamsSchema } from '../../cloud/schemas/requests.js';
import { notFound } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { ok, type RouteContext } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import type { SimInstance } from '../model.js';
import { listEnvelope } from '../wire/common.js';
import { instancePorts, instanceWire } from '../wire/instances.js';
import { requireScope, wire } from './common.js';

const GroupParamsSchema = ScopeParamsSchema.extend({ group_id: PathIdSchema });
const InstanceParamsSchema = ScopeParamsSchema.extend({ instance_id: PathIdSchema });

/** An instance or cluster server of the scope, or 404. */
function requireInstance(ctx: RouteContext): SimInstance {
  const { path } = validateRequest({ path: InstanceParamsSchema }, { path: ctx.params });
  requireScope(ctx, path.project_id, path.region_id);
  const instance = ctx.state.instance(path.instance_id);
  if (!instance || instance.projectId !== path.project_id || instance.regionId !== path.region_id) {
    throw notFound(`instance ${path.instance_id} not found in project ${path.project_id} region ${path.region_id}`);
  }
  return instance;
}

export function addInstanceRoutes(router: Router): void {
  /** The virtual machines of the group (bare metal servers are listed with their clusters). */
  router.add('GET', '/cloud/v1/securitygroups/:project_id/:region_id/:group_id/instances', (ctx) => {
    const { path } = validateRequest({ path: GroupParamsSchema }, { path: ctx.params });
    requireScope(ctx, path.project_id, path.region_id);
    const group = ctx.state.securityGroup(path.group_id);
    if (!group || group.projectId !== path.project_id || group.regionId !== path.region_id) {
      throw notFound(`security group ${path.group_id} not found in project ${path.project_id} region ${path.region_id}`);
    }
    const w = wire(ctx);
    return ok(listEnvelope(group.instances.map((i) => instanceWire(i, w, false)), w));
  });

  /** SHUTOFF / stopped from now on; stopping a stopped instance answers the same record. */
  router.add('POST', '/cloud/v1/instances/:project_id/:region_id/:instance_id/stop', (ctx) => {
    const instance = requireInstance(ctx);
    ctx.state.stopInstance(instance.projectId, instance.regionId, instance.id);
    const w = wire(ctx);
    const record = instanceWire(instance, w);
    // Legacy: the real API sometimes answers a single object instead of the envelope.
    return ok(ctx.legacy ? record : listEnvelope([record], w));
  });

  router.add('GET', '/cloud/v1/instances/:project_id/:region_id/:instance_id/ports', (ctx) => {
    const instance = requireInstance(ctx);
    const w = wire(ctx);
    return ok(listEnvelope(instancePorts(instance, w), w));
  });
}

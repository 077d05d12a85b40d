import {
  ClusterListQuerySchema,
  FlavorListQuerySchema,
  GpuClusterCreateBodySchema,
  ScopeParamsSchema,
  VirtualGpuClusterCreateBodySchema,
} from '../../cloud/schemas/requests.js';
import type { Router } from '../http/router.js';
import { ok } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import { createGpuCluster, createVirtualCluster } from '../operations.js';
import { clusterWire } from '../wire/clusters.js';
import { listEnvelope } from '../wire/common.js';
import { flavorWire } from '../wire/flavors.js';
import { createdStatus, requireScope, taskList, wire } from './common.js';

export function addClusterRoutes(router: Router): void {
  router.add('POST', '/cloud/v1/ai/clusters/gpu/:project_id/:region_id', (ctx) => {
    const { path, body } = validateRequest(
      { path: ScopeParamsSchema, body: GpuClusterCreateBodySchema },
      { path: ctx.params, body: ctx.body },
    );
    const scope = requireScope(ctx, path.project_id, path.region_id);
    return ok(taskList(createGpuCluster(ctx.state, scope, body).id), createdStatus(ctx));
  });

  /** Stable order (creation order); no `limit` means all from `offset`; `count` is the total. */
  router.add('GET', '/cloud/v2/ai/clusters/:project_id/:region_id', (ctx) => {
    const { path, query } = validateRequest(
      { path: ScopeParamsSchema, query: ClusterListQuerySchema },
      { path: ctx.params, query: ctx.query },
    );
    const scope = requireScope(ctx, path.project_id, path.region_id);
    const offset = query.offset ?? 0;
    const page = scope.clusters.slice(offset, query.limit === undefined ? undefined : offset + query.limit);
    const w = wire(ctx);
    return ok(listEnvelope(page.map((c) => clusterWire(c, w)), w, scope.clusters.length));
  });

  /**
   * `disabled=true` lists the disabled flavors too (without it, or with false, only enabled ones);
   * `include_capacity` adds `capacity`; `include_prices` adds currency, prices and price_status.
   */
  router.add('GET', '/cloud/v1/ai/flavors/:project_id/:region_id', (ctx) => {
    const { path, query } = validateRequest(
      { path: ScopeParamsSchema, query: FlavorListQuerySchema },
      { path: ctx.params, query: ctx.query },
    );
    const scope = requireScope(ctx, path.project_id, path.region_id);
    const flags = {
      includeDisabled: query.disabled === true,
      includeCapacity: query.include_capacity === true,
      includePrices: query.include_prices === true,
    };
    const w = wire(ctx);
    const flavors = scope.flavors.filter((f) => flags.includeDisabled || !f.disabled);
    return ok(listEnvelope(flavors.map((f) => flavorWire(f, flags, w)), w));
  });

  router.add('POST', '/cloud/v3/gpu/virtual/:project_id/:region_id/clusters', (ctx) => {
    const { path, body } = validateRequest(
      { path: ScopeParamsSchema, body: VirtualGpuClusterCreateBodySchema },
      { path: ctx.params, body: ctx.body },
    );
    const scope = requireScope(ctx, path.project_id, path.region_id);
    return ok(taskList(createVirtualCluster(ctx.state, scope, body).id), createdStatus(ctx));
  });
}

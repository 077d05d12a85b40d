import {
  FaasParamsSchema,
  InferenceDeploymentCreateBodySchema,
  K8sClusterNameSchema,
  ProjectParamsSchema,
  ScopeParamsSchema,
} from '../../cloud/schemas/requests.js';
import { notFound } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { ok } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import { createInferenceDeployment, deleteFunction } from '../operations.js';
import { pricingWire } from '../wire/misc.js';
import { createdStatus, requireScope, taskList, wire } from './common.js';

const K8sParamsSchema = ScopeParamsSchema.extend({ cluster_name: K8sClusterNameSchema });
const FunctionParamsSchema = ScopeParamsSchema.extend(FaasParamsSchema.shape);

/** Kubernetes pricing, inference deployments and serverless functions. */
export function addAppRoutes(router: Router): void {
  router.add('GET', '/cloud/v2/pricing/:project_id/:region_id/k8s/clusters/:cluster_name', (ctx) => {
    const { path } = validateRequest({ path: K8sParamsSchema }, { path: ctx.params });
    const scope = requireScope(ctx, path.project_id, path.region_id);
    const cluster = scope.k8sClusters.find((k) => k.name === path.cluster_name);
    if (!cluster) throw notFound(`Kubernetes cluster '${path.cluster_name}' not found in project ${path.project_id} region ${path.region_id}`);
    return ok(pricingWire(cluster, wire(ctx)));
  });

  router.add('POST', '/cloud/v3/inference/applications/:project_id/deployments', (ctx) => {
    const { path, body } = validateRequest(
      { path: ProjectParamsSchema, body: InferenceDeploymentCreateBodySchema },
      { path: ctx.params, body: ctx.body },
    );
    if (!ctx.state.hasProject(path.project_id)) throw notFound(`project ${path.project_id} not found`);
    return ok(taskList(createInferenceDeployment(ctx.state, path.project_id, body).id), createdStatus(ctx));
  });

  router.add('DELETE', '/cloud/v1/faas/namespaces/:project_id/:region_id/:namespace_name/functions/:function_name', (ctx) => {
    const { path } = validateRequest({ path: FunctionParamsSchema }, { path: ctx.params });
    const scope = requireScope(ctx, path.project_id, path.region_id);
    const namespace = scope.faasNamespaces.find((n) => n.name === path.namespace_name);
    if (!namespace) throw notFound(`namespace '${path.namespace_name}' not found in project ${path.project_id} region ${path.region_id}`);
    if (!namespace.functions.has(path.function_name)) {
      throw notFound(`function '${path.function_name}' not found in namespace '${path.namespace_name}'`);
    }
    return ok(taskList(deleteFunction(ctx.state, scope, path.namespace_name, path.function_name).id));
  });
}

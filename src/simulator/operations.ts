import type { z } from 'zod';
import type {
  GpuClusterCreateBodySchema,
  InferenceDeploymentCreateBodySchema,
  LbPoolCreateBodySchema,
  LoadBalancerCreateBodySchema,
  VirtualGpuClusterCreateBodySchema,
} from '../cloud/schemas/requests.js';
import { INFERENCE_APPLICATIONS, LB_FLAVORS, REGIONS } from './catalog.js';
import { buildCluster } from './generate/clusters.js';
import { newListener } from './generate/scope-parts.js';
import type { SimInterface, SimListener, SimScope } from './model.js';
import { tagsFromInput, type SimState } from './state.js';
import type { SimTaskView } from './tasks.js';
import { wholeSeconds } from './timestamps.js';

/**
 * The asynchronous operations. Each decides its outcome when it starts (the errors a real cloud
 * reports through the task, not the request: unknown flavor, name taken, ...) and registers the
 * effect that the task applies when it finishes.
 */

type GpuClusterCreate = z.output<typeof GpuClusterCreateBodySchema>;
type VirtualClusterCreate = z.output<typeof VirtualGpuClusterCreateBodySchema>;
type PoolCreate = z.output<typeof LbPoolCreateBodySchema>;
type LoadBalancerCreate = z.output<typeof LoadBalancerCreateBodySchema>;
type DeploymentCreate = z.output<typeof InferenceDeploymentCreateBodySchema>;

export const TASK_TYPES = {
  gpuClusterCreate: 'create_ai_cluster_gpu',
  virtualClusterCreate: 'create_gpu_virtual_cluster',
  poolCreate: 'create_lbpool',
  loadBalancerCreate: 'create_loadbalancer',
  deploymentCreate: 'create_inference_deployment',
  functionDelete: 'delete_faas_function',
} as const;

/** Names being created by tasks still running in the scope (so a second create with the name fails). */
function namesInFlight(state: SimState, type: string, scope: Pick<SimScope, 'projectId' | 'regionId'>): Set<string> {
  return new Set(
    state.tasks
      .running()
      .filter((t) => t.type === type && t.projectId === scope.projectId && t.regionId === scope.regionId && t.error === null)
      .map((t) => t.subject ?? ''),
  );
}

/** The first problem that makes the task fail, or null. */
function firstProblem(checks: Array<[boolean, string]>): string | null {
  return checks.find(([failed]) => failed)?.[1] ?? null;
}

function readyAt(state: SimState): Date {
  return wholeSeconds(state.clock().getTime() + state.taskDelayMs);
}

export function createGpuCluster(state: SimState, scope: SimScope, body: GpuClusterCreate): SimTaskView {
  const flavor = scope.flavors.find((f) => f.name === body.flavor);
  const knownGroups = new Set(scope.securityGroups.map((g) => g.id));
  const badGroup = (body.security_groups ?? []).find((g) => !knownGroups.has(g.id));
  const error = firstProblem([
    [!flavor, `flavor '${body.flavor}' is not available in region ${scope.regionName}`],
    [!!flavor && flavor.kind !== 'baremetal', `flavor '${body.flavor}' is not a bare metal GPU flavor`],
    [!!flavor && flavor.disabled, `flavor '${body.flavor}' is disabled`],
    [!state.image(body.image_id), `image ${body.image_id} not found`],
    [
      scope.clusters.some((c) => c.name === body.name) || namesInFlight(state, TASK_TYPES.gpuClusterCreate, scope).has(body.name),
      `a cluster named '${body.name}' already exists in project ${scope.projectId} region ${scope.regionId}`,
    ],
    [
      body.ssh_key_name !== undefined && !scope.keypairs.some((k) => k.name === body.ssh_key_name),
      `keypair '${body.ssh_key_name ?? ''}' not found`,
    ],
    [badGroup !== undefined, `security group ${badGroup?.id ?? ''} not found`],
  ]);
  const clusterId = state.runtimeRng.uuid();
  const createdAt = readyAt(state);
  const rng = state.runtimeRng;
  const task = state.startTask({
    type: TASK_TYPES.gpuClusterCreate,
    subject: error === null ? body.name : undefined,
    projectId: scope.projectId,
    regionId: scope.regionId,
    error,
    createdResources: error === null ? { ai_clusters: [clusterId] } : {},
    apply: () => {
      const interfaces: SimInterface[] = body.interfaces.map((i) => {
        const network = scope.networks[i.type === 'external' ? scope.networks.length - 1 : 0] ?? scope.networks[0];
        return {
          type: i.type,
          network_id: 'network_id' in i && typeof i.network_id === 'string' ? i.network_id : (network?.networkId ?? rng.uuid()),
          subnet_id: 'subnet_id' in i && typeof i.subnet_id === 'string' ? i.subnet_id : (network?.subnetId ?? rng.uuid()),
          port_id: rng.uuid(),
        };
      });
      const cluster = buildCluster(rng, scope, {
        id: clusterId,
        name: body.name,
        flavorName: body.flavor,
        imageId: body.image_id,
        serversCount: body.instances_count ?? 1,
        createdAt,
        creatorTaskId: task.id,
        interfaces,
        password: body.password ?? null,
        userData: body.user_data ?? null,
        username: body.username ?? null,
        sshKeyName: body.ssh_key_name ?? null,
        tags: tagsFromInput(body.tags),
        securityGroupIds: (body.security_groups ?? []).map((g) => g.id),
      });
      state.insertCluster(scope, cluster);
    },
  });
  return task;
}

export function createVirtualCluster(state: SimState, scope: SimScope, body: VirtualClusterCreate): SimTaskView {
  const flavor = scope.flavors.find((f) => f.name === body.flavor);
  const error = firstProblem([
    [!flavor, `flavor '${body.flavor}' is not available in region ${scope.regionName}`],
    [!!flavor && flavor.disabled, `flavor '${body.flavor}' is disabled`],
    [
      scope.virtualClusters.some((c) => c.name === body.name) ||
        namesInFlight(state, TASK_TYPES.virtualClusterCreate, scope).has(body.name),
      `a virtual cluster named '${body.name}' already exists`,
    ],
  ]);
  const id = state.runtimeRng.uuid();
  const createdAt = readyAt(state);
  return state.startTask({
    type: TASK_TYPES.virtualClusterCreate,
    subject: error === null ? body.name : undefined,
    projectId: scope.projectId,
    regionId: scope.regionId,
    error,
    createdResources: error === null ? { ai_clusters: [id] } : {},
    apply: () => {
      scope.virtualClusters.push({
        id,
        name: body.name,
        flavor: body.flavor,
        serversCount: body.servers_count,
        tags: tagsFromInput(body.tags),
        createdAt,
      });
    },
  });
}

function findListener(scope: SimScope, id: string): SimListener | undefined {
  return scope.loadBalancers.flatMap((lb) => lb.listeners).find((l) => l.id === id);
}

export function createPool(state: SimState, scope: SimScope, body: PoolCreate): SimTaskView {
  const listener = body.listener_id ? findListener(scope, body.listener_id) : undefined;
  const error = firstProblem([
    [
      !!body.load_balancer_id && !scope.loadBalancers.some((lb) => lb.id === body.load_balancer_id),
      `load balancer ${body.load_balancer_id ?? ''} not found`,
    ],
    [!!body.listener_id && !listener, `listener ${body.listener_id ?? ''} not found`],
    [
      scope.pools.some((p) => p.name === body.name) || namesInFlight(state, TASK_TYPES.poolCreate, scope).has(body.name),
      `a pool named '${body.name}' already exists`,
    ],
  ]);
  const id = state.runtimeRng.uuid();
  const createdAt = readyAt(state);
  return state.startTask({
    type: TASK_TYPES.poolCreate,
    subject: error === null ? body.name : undefined,
    projectId: scope.projectId,
    regionId: scope.regionId,
    error,
    createdResources: error === null ? { pools: [id] } : {},
    apply: () => {
      scope.pools.push({
        id,
        name: body.name,
        protocol: body.protocol,
        lbAlgorithm: body.lb_algorithm,
        loadBalancerId: body.load_balancer_id ?? listener?.loadBalancerId ?? null,
        listenerId: body.listener_id ?? null,
        memberCount: body.members?.length ?? 0,
        createdAt,
      });
      if (listener) listener.poolCount += 1;
    },
  });
}

export function createLoadBalancer(state: SimState, scope: SimScope, body: LoadBalancerCreate): SimTaskView {
  const networkIds = new Set(scope.networks.map((n) => n.networkId));
  const error = firstProblem([
    [body.flavor !== undefined && !LB_FLAVORS.includes(body.flavor), `load balancer flavor '${body.flavor ?? ''}' not found`],
    [
      body.vip_network_id !== undefined && !networkIds.has(body.vip_network_id),
      `network ${body.vip_network_id ?? ''} not found`,
    ],
    [
      scope.loadBalancers.some((lb) => lb.name === body.name) ||
        namesInFlight(state, TASK_TYPES.loadBalancerCreate, scope).has(body.name),
      `a load balancer named '${body.name}' already exists`,
    ],
  ]);
  const rng = state.runtimeRng;
  const id = rng.uuid();
  const createdAt = readyAt(state);
  const task = state.startTask({
    type: TASK_TYPES.loadBalancerCreate,
    subject: error === null ? body.name : undefined,
    projectId: scope.projectId,
    regionId: scope.regionId,
    error,
    createdResources: error === null ? { loadbalancers: [id] } : {},
    apply: () => {
      scope.loadBalancers.push({
        id,
        name: body.name,
        flavor: body.flavor ?? 'lb1-1-2',
        createdAt,
        tags: tagsFromInput(body.tags),
        listeners: (body.listeners ?? []).map((l) => newListener(rng, id, l, task.id)),
      });
    },
  });
  return task;
}

export function createInferenceDeployment(state: SimState, projectId: number, body: DeploymentCreate): SimTaskView {
  const badRegion = body.regions.find((r) => !REGIONS.some((known) => known.id === r));
  const error = firstProblem([
    [!INFERENCE_APPLICATIONS.includes(body.application_name), `application '${body.application_name}' not found in the catalog`],
    [badRegion !== undefined, `region ${badRegion ?? ''} does not offer inference`],
    [
      state.inferenceDeployments(projectId).some((d) => d.name === body.name) ||
        state.tasks
          .running()
          .some((t) => t.type === TASK_TYPES.deploymentCreate && t.projectId === projectId && t.subject === body.name),
      `a deployment named '${body.name}' already exists in project ${projectId}`,
    ],
  ]);
  const id = state.runtimeRng.uuid();
  const createdAt = readyAt(state);
  return state.startTask({
    type: TASK_TYPES.deploymentCreate,
    subject: error === null ? body.name : undefined,
    projectId,
    regionId: null,
    error,
    createdResources: error === null ? { inference_instances: [id] } : {},
    apply: () => {
      state.addInferenceDeployment({
        id,
        name: body.name,
        projectId,
        applicationName: body.application_name,
        regions: [...body.regions],
        components: Object.keys(body.components_configuration),
        createdAt,
      });
    },
  });
}

/** The function must exist (the route answers 404 otherwise); a second delete in flight fails. */
export function deleteFunction(state: SimState, scope: SimScope, namespaceName: string, functionName: string): SimTaskView {
  const subject = `${namespaceName}/${functionName}`;
  const inFlight = state.tasks
    .running()
    .some((t) => t.type === TASK_TYPES.functionDelete && t.projectId === scope.projectId && t.regionId === scope.regionId && t.subject === subject);
  return state.startTask({
    type: TASK_TYPES.functionDelete,
    subject: inFlight ? undefined : subject,
    projectId: scope.projectId,
    regionId: scope.regionId,
    error: inFlight ? `function '${functionName}' is already being deleted` : null,
    apply: () => {
      scope.faasNamespaces.find((n) => n.name === namespaceName)?.functions.delete(functionName);
    },
  });
}

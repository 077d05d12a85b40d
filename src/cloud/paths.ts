/**
 * Every route of the cloud API the client calls, in one place. Templates are relative to the
 * configured base URL; `{name}` placeholders are filled with URL-encoded path segments.
 */

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Route {
  method: HttpMethod;
  template: string;
}

/**
 * The task path. The spec writes `/v1/tasks/{task_id}` while the provider's SDK calls
 * `/cloud/v1/tasks/{task_id}`; the spec is this project's authority, so the client uses the
 * spec's form (the simulator serves both). Change it here, and only here, if a deployment needs
 * the SDK's form.
 */
export const TASK_PATH = '/v1/tasks/{task_id}';

export const ROUTES = {
  // bare metal GPU clusters and flavors
  createGpuCluster: { method: 'POST', template: '/cloud/v1/ai/clusters/gpu/{project_id}/{region_id}' },
  listGpuClusters: { method: 'GET', template: '/cloud/v2/ai/clusters/{project_id}/{region_id}' },
  listGpuFlavors: { method: 'GET', template: '/cloud/v1/ai/flavors/{project_id}/{region_id}' },
  createVirtualGpuCluster: { method: 'POST', template: '/cloud/v3/gpu/virtual/{project_id}/{region_id}/clusters' },
  // instances and security groups
  listInstancesBySecurityGroup: {
    method: 'GET',
    template: '/cloud/v1/securitygroups/{project_id}/{region_id}/{group_id}/instances',
  },
  stopInstance: { method: 'POST', template: '/cloud/v1/instances/{project_id}/{region_id}/{instance_id}/stop' },
  listInstancePorts: { method: 'GET', template: '/cloud/v1/instances/{project_id}/{region_id}/{instance_id}/ports' },
  // load balancing
  createLbPool: { method: 'POST', template: '/cloud/v1/lbpools/{project_id}/{region_id}' },
  /** The spec does not show this path; it follows the provider's SDK and the simulator contract. */
  createLoadBalancer: { method: 'POST', template: '/cloud/v1/loadbalancers/{project_id}/{region_id}' },
  /**
   * The deprecated update's path is not shown in the spec; it names its replacement
   * `PATCH /v2/lblisteners/...`, which is the only fully specified form, so that is what we call
   * (the simulator serves it, and `/cloud/v2/` and `/cloud/v1/` forms too).
   */
  updateLbListener: { method: 'PATCH', template: '/v2/lblisteners/{project_id}/{region_id}/{listener_id}' },
  // pricing
  getK8sClusterPrice: { method: 'GET', template: '/cloud/v2/pricing/{project_id}/{region_id}/k8s/clusters/{cluster_name}' },
  // inference and functions
  createInferenceDeployment: { method: 'POST', template: '/cloud/v3/inference/applications/{project_id}/deployments' },
  deleteFunction: {
    method: 'DELETE',
    template: '/cloud/v1/faas/namespaces/{project_id}/{region_id}/{namespace_name}/functions/{function_name}',
  },
  // images and keys
  getImageTags: { method: 'GET', template: '/cloud/v1/images/{project_id}/{region_id}/{image_id}/metadata' },
  listKeypairs: { method: 'GET', template: '/cloud/v1/keypairs/{project_id}/{region_id}' },
  createStorageKey: { method: 'PUT', template: '/storage/provisioning/v1/key' },
  listStorageKeys: { method: 'GET', template: '/storage/provisioning/v2/key' },
  deleteStorageKey: { method: 'DELETE', template: '/storage/provisioning/v1/key/{key_id}' },
  // content delivery administration
  getFreeFeature: { method: 'GET', template: '/cdn/admin/free_features/{free_feature_id}' },
  // tasks
  getTask: { method: 'GET', template: TASK_PATH },
} as const satisfies Record<string, Route>;

export type RouteName = keyof typeof ROUTES;

/** `GET /cloud/v1/keypairs/{project_id}/{region_id}`: the route's name in logs, metrics and errors. */
export function endpointOf(route: Route): string {
  return `${route.method} ${route.template}`;
}

/** Encodes one path segment; `.` and `..` are encoded too so that an id can never climb the path. */
export function encodeSegment(value: string | number): string {
  const encoded = encodeURIComponent(String(value));
  return encoded === '.' || encoded === '..' ? encoded.replace(/\./g, '%2E') : encoded;
}

/** A template split at its placeholders: literal text at even indexes, parameter names at odd ones. */
const templateParts = new Map<string, readonly string[]>();

/** Fills a template's placeholders with encoded segments; throws when one is missing. */
export function fillPath(template: string, params: Readonly<Record<string, string | number>> = {}): string {
  let parts = templateParts.get(template);
  if (!parts) {
    parts = template.split(/\{([a-z_]+)\}/);
    templateParts.set(template, parts);
  }
  let path = parts[0]!;
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i]!;
    const value = params[name];
    if (value === undefined) throw new Error(`path parameter ${name} missing for ${template}`);
    path += encodeSegment(value) + parts[i + 1]!;
  }
  return path;
}

export type QueryValue = string | number | boolean | null | undefined;

/** `?a=1&b=true`, skipping undefined and null values; empty when nothing is left. */
export function queryString(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.append(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * Splits a base URL into its origin and its path prefix (without a trailing slash), so that
 * `https://host/api/` + `/cloud/v1/...` gives `https://host/api/cloud/v1/...`.
 */
export function splitBaseUrl(baseUrl: string): { origin: string; prefix: string } {
  const url = new URL(baseUrl);
  return { origin: url.origin, prefix: url.pathname.replace(/\/+$/, '') };
}

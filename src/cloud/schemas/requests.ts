import { z } from 'zod';
import { TagsInputSchema } from './tags.js';

/**
 * Strict schemas for what a client sends: bodies, queries and path parameters, with every rule
 * of the spec. The client checks them before sending (nothing is sent when they fail); the
 * simulator checks the same schemas and answers 400 naming each bad field.
 */

/** Names of clusters, pools, load balancers and listeners (spec, Limits). At most 63 characters. */
export const RESOURCE_NAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z 0-9._\-]{1,61}[a-zA-Z0-9._]$/;
/** Namespace and function names (spec, Limits). */
export const FAAS_NAME_PATTERN = /^[a-z][-a-z0-9]{0,24}[a-z0-9]$/;
/** Pool and listener timeouts, in milliseconds. */
export const TIMEOUT_MAX_MS = 86_400_000;
export const MAX_LISTENERS_PER_LOAD_BALANCER = 50;

const resourceName = z
  .string({ error: 'required string' })
  .regex(RESOURCE_NAME_PATTERN, 'must match ^[a-zA-Z0-9][a-zA-Z 0-9._\\-]{1,61}[a-zA-Z0-9._]$ (2 to 63 characters)');
const uuid = z.uuid({ error: 'must be a UUID' });
const timeoutMs = z
  .int({ error: 'must be an integer' })
  .min(0, 'must be at least 0')
  .max(TIMEOUT_MAX_MS, `must be at most ${TIMEOUT_MAX_MS} milliseconds`)
  .nullish();
const port = z.int({ error: 'must be an integer' }).min(1, 'must be 1 to 65535').max(65535, 'must be 1 to 65535');

// ---- path parameters ---------------------------------------------------------------------

/** Integers in paths: numbers from the client, digit strings in the simulator. */
const pathInt = z.union(
  [
    z.int().positive('must be a positive integer'),
    z
      .string()
      .regex(/^\d+$/, 'must be a positive integer')
      .transform((s) => Number(s))
      .refine((n) => Number.isSafeInteger(n) && n > 0, 'must be a positive integer'),
  ],
  { error: 'must be a positive integer' },
);
export const ScopeParamsSchema = z.object({ project_id: pathInt, region_id: pathInt });
export type ScopeParams = z.output<typeof ScopeParamsSchema>;
export const ProjectParamsSchema = z.object({ project_id: pathInt });
/** A non-empty path segment identifier (instance, security group, image, listener ids...). */
export const PathIdSchema = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');
export const FreeFeatureIdSchema = pathInt;
export const StorageKeyIdSchema = pathInt;
export const FaasParamsSchema = z.object({
  namespace_name: z.string().regex(FAAS_NAME_PATTERN, 'must match ^[a-z][-a-z0-9]{0,24}[a-z0-9]$'),
  function_name: z.string().regex(FAAS_NAME_PATTERN, 'must match ^[a-z][-a-z0-9]{0,24}[a-z0-9]$'),
});
export const K8sClusterNameSchema = z.string().min(1, 'must not be empty').max(255, 'must be at most 255 characters');

// ---- queries (numbers and booleans arrive as strings in the simulator) -------------------

const queryInt = z.union([z.int(), z.string().regex(/^-?\d+$/, 'must be an integer').transform(Number)], {
  error: 'must be an integer',
});
const queryBool = z.union([z.boolean(), z.stringbool({ error: 'must be true or false' })], {
  error: 'must be true or false',
});

export const ClusterListQuerySchema = z.strictObject({
  limit: queryInt.pipe(z.int().min(1, 'must be at least 1')).optional(),
  offset: queryInt.pipe(z.int().min(0, 'must be at least 0')).optional(),
});
export type ClusterListQuery = z.input<typeof ClusterListQuerySchema>;

export const FlavorListQuerySchema = z.strictObject({
  disabled: queryBool.optional(),
  include_capacity: queryBool.optional(),
  include_prices: queryBool.optional(),
});
export type FlavorListQuery = z.input<typeof FlavorListQuerySchema>;

export const STORAGE_KEY_LIST_DEFAULT_LIMIT = 10;
export const STORAGE_KEY_LIST_MAX_LIMIT = 1000;
export const StorageKeyListQuerySchema = z.strictObject({
  offset: queryInt.pipe(z.int().min(0, 'must be at least 0')).optional(),
  limit: queryInt
    .pipe(z.int().min(1, 'must be 1 to 1000').max(STORAGE_KEY_LIST_MAX_LIMIT, 'must be 1 to 1000'))
    .optional(),
  order_by: z.enum(['id', 'name', 'created_at'], { error: 'must be id, name or created_at' }).optional(),
  order_direction: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  created: z.string().optional(),
});
export type StorageKeyListQuery = z.input<typeof StorageKeyListQuerySchema>;

// ---- bodies --------------------------------------------------------------------------------

/**
 * Interfaces of a bare metal cluster. The spec shows the fields of the subnet variant only;
 * for external and any_subnet we accept the type plus the fields the provider's SDK documents.
 */
export const ClusterInterfaceSchema = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('external'), ip_family: z.enum(['dual', 'ipv4', 'ipv6']).optional() }),
    z.strictObject({ type: z.literal('subnet'), network_id: uuid, subnet_id: uuid }),
    z.looseObject({
      type: z.literal('any_subnet'),
      network_id: uuid,
      ip_family: z.enum(['dual', 'ipv4', 'ipv6']).optional(),
    }),
  ],
  { error: 'type must be external, subnet or any_subnet' },
);

export const GpuClusterCreateBodySchema = z
  .strictObject({
    flavor: z.string({ error: 'required string' }).min(1, 'must not be empty'),
    image_id: z.uuidv4({ error: 'must be a UUID v4' }),
    interfaces: z.array(ClusterInterfaceSchema, { error: 'required array' }).min(1, 'at least one interface is required'),
    name: resourceName,
    instances_count: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1').optional(),
    password: z.string().optional(),
    security_groups: z.array(z.strictObject({ id: uuid })).optional(),
    ssh_key_name: z.string().min(1, 'must not be empty').optional(),
    tags: TagsInputSchema.optional(),
    user_data: z.string().optional(),
    username: z.string().min(1, 'must not be empty').optional(),
  })
  .superRefine((body, ctx) => {
    if (body.user_data !== undefined && (body.username !== undefined || body.password !== undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['user_data'],
        message: 'must not be sent together with username or password',
      });
    }
  });
export type GpuClusterCreateBody = z.input<typeof GpuClusterCreateBodySchema>;

export const VIRTUAL_CLUSTER_NAME_MAX = 63;
export const VirtualGpuClusterCreateBodySchema = z.strictObject({
  flavor: z.string({ error: 'required string' }).min(1, 'must not be empty'),
  name: resourceName.max(VIRTUAL_CLUSTER_NAME_MAX, `must be at most ${VIRTUAL_CLUSTER_NAME_MAX} characters`),
  servers_count: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1'),
  servers_settings: z.looseObject(
    {
      interfaces: z.array(z.looseObject({ type: z.string({ error: 'required string' }).min(1) }), {
        error: 'required array',
      }),
      volumes: z.array(
        z.looseObject({
          boot_index: z.int({ error: 'must be an integer' }),
          name: z.string({ error: 'required string' }),
          size: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1'),
          source: z.string({ error: 'required string' }),
          type: z.string({ error: 'required string' }),
        }),
        { error: 'required array' },
      ),
    },
    { error: 'required object' },
  ),
  tags: TagsInputSchema.optional(),
});
export type VirtualGpuClusterCreateBody = z.input<typeof VirtualGpuClusterCreateBodySchema>;

export const LB_ALGORITHMS = ['LEAST_CONNECTIONS', 'ROUND_ROBIN', 'SOURCE_IP'] as const;
export const POOL_PROTOCOLS = ['HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP', 'UDP'] as const;
export const LISTENER_PROTOCOLS = ['HTTP', 'HTTPS', 'PROMETHEUS', 'TCP', 'TERMINATED_HTTPS', 'UDP'] as const;

/**
 * Which health monitor and member fields are required is not shown in the spec; we require
 * what a monitor or member cannot work without (type, delay, max_retries, timeout; address and
 * port) and leave the rest optional.
 */
export const LbPoolCreateBodySchema = z
  .strictObject({
    lb_algorithm: z.enum(LB_ALGORITHMS, { error: `must be one of ${LB_ALGORITHMS.join(', ')}` }),
    name: resourceName,
    protocol: z.enum(POOL_PROTOCOLS, { error: `must be one of ${POOL_PROTOCOLS.join(', ')}` }),
    ca_secret_id: uuid.nullish(),
    crl_secret_id: uuid.nullish(),
    healthmonitor: z
      .strictObject({
        delay: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1'),
        domain_name: z.string().optional(),
        http_method: z.string().optional(),
        http_version: z.string().optional(),
        max_retries: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1'),
        max_retries_down: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1').optional(),
        timeout: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1'),
        type: z.string({ error: 'required string' }).min(1, 'must not be empty'),
        url_path: z.string().optional(),
      })
      .nullish(),
    listener_id: uuid.nullish(),
    load_balancer_id: uuid.nullish(),
    members: z
      .array(
        z.strictObject({
          address: z.string({ error: 'required string' }).min(1, 'must not be empty'),
          instance_id: uuid.optional(),
          protocol_port: port,
          weight: z.int({ error: 'must be an integer' }).min(0, 'must be at least 0').optional(),
        }),
      )
      .optional(),
    secret_id: uuid.nullish(),
    session_persistence: z
      .strictObject({ cookie_name: z.string().optional(), type: z.string({ error: 'required string' }).min(1) })
      .refine((sp) => sp.type !== 'APP_COOKIE' || !!sp.cookie_name, {
        message: 'cookie_name is required when type is APP_COOKIE',
        path: ['cookie_name'],
      })
      .nullish(),
    timeout_client_data: timeoutMs,
    timeout_member_connect: timeoutMs,
    timeout_member_data: timeoutMs,
  });
export type LbPoolCreateBody = z.input<typeof LbPoolCreateBodySchema>;

/**
 * A listener inside a load balancer creation body. The spec gives attribute descriptions but
 * not their JSON names; these are the names the listener record uses (responses.ts).
 */
export const ListenerCreateSchema = z.strictObject({
  name: resourceName,
  protocol: z.enum(LISTENER_PROTOCOLS, { error: `must be one of ${LISTENER_PROTOCOLS.join(', ')}` }),
  protocol_port: port,
  admin_state_up: z.boolean().optional(),
  allowed_cidrs: z.array(z.union([z.cidrv4(), z.cidrv6()], { error: 'must be a CIDR' })).nullish(),
  connection_limit: z
    .int({ error: 'must be an integer' })
    .min(-1, 'must be -1 to 1000000')
    .max(1_000_000, 'must be -1 to 1000000')
    .optional(),
  insert_headers: z.record(z.string(), z.string()).optional(),
  secret_id: uuid.nullish(),
  sni_secret_id: z.array(uuid).optional(),
  timeout_client_data: timeoutMs,
  timeout_member_connect: timeoutMs,
  timeout_member_data: timeoutMs,
  user_list: z
    .array(z.strictObject({ username: z.string().min(1), encrypted_password: z.string().min(1) }))
    .optional(),
});

/**
 * Load balancer creation. The spec names only vip_network_id, vip_port_id and vip_subnet_id;
 * the other JSON names follow the provider's SDK (documented in the README).
 */
export const LoadBalancerCreateBodySchema = z
  .strictObject({
    name: resourceName,
    flavor: z.string().min(1, 'must not be empty').optional(),
    floating_ip: z
      .discriminatedUnion(
        'source',
        [
          z.strictObject({ source: z.literal('new') }),
          z.strictObject({ source: z.literal('existing'), existing_floating_id: uuid }),
        ],
        { error: 'source must be new or existing' },
      )
      .optional(),
    listeners: z.array(ListenerCreateSchema).optional(),
    logging: z.looseObject({}).optional(),
    preferred_connectivity: z.enum(['L2', 'L3'], { error: 'must be L2 or L3' }).optional(),
    tags: TagsInputSchema.optional(),
    vip_ip_family: z.enum(['dual', 'ipv4', 'ipv6'], { error: 'must be dual, ipv4 or ipv6' }).optional(),
    vip_network_id: uuid.optional(),
    vip_port_id: uuid.optional(),
    vip_subnet_id: uuid.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.vip_network_id !== undefined && body.vip_port_id !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['vip_port_id'], message: 'must not be sent together with vip_network_id' });
    }
    const counted = (body.listeners ?? []).filter((l) => l.protocol !== 'PROMETHEUS').length;
    if (counted > MAX_LISTENERS_PER_LOAD_BALANCER) {
      ctx.addIssue({
        code: 'custom',
        path: ['listeners'],
        message: `at most ${MAX_LISTENERS_PER_LOAD_BALANCER} listeners (not counting PROMETHEUS), got ${counted}`,
      });
    }
  });
export type LoadBalancerCreateBody = z.input<typeof LoadBalancerCreateBodySchema>;

/** Listener update: the body takes the name. */
export const ListenerUpdateBodySchema = z.strictObject({ name: resourceName });
export type ListenerUpdateBody = z.input<typeof ListenerUpdateBodySchema>;

export const INFERENCE_NAME_MAX = 15;
export const InferenceDeploymentCreateBodySchema = z.strictObject({
  application_name: z.string({ error: 'required string' }).min(1, 'must not be empty'),
  components_configuration: z.record(
    z.string().min(1, 'component name must not be empty'),
    z.looseObject({
      exposed: z.boolean({ error: 'must be a boolean' }),
      flavor: z.string({ error: 'required string' }).min(1, 'must not be empty'),
      scale: z
        .strictObject({
          min: z.int({ error: 'must be an integer' }).min(0, 'must be at least 0'),
          max: z.int({ error: 'must be an integer' }).min(1, 'must be at least 1'),
        })
        .refine((s) => s.min <= s.max, { message: 'min must not exceed max', path: ['min'] }),
    }),
    { error: 'required object' },
  ),
  name: z
    .string({ error: 'required string' })
    .min(1, 'must not be empty')
    .max(INFERENCE_NAME_MAX, `must be at most ${INFERENCE_NAME_MAX} characters`),
  regions: z.array(z.int().positive('must be a positive integer'), { error: 'required array' }).min(1, 'at least one region'),
  api_keys: z.array(z.string().min(1)).optional(),
});
export type InferenceDeploymentCreateBody = z.input<typeof InferenceDeploymentCreateBodySchema>;

export const StorageKeyCreateBodySchema = z.strictObject({
  key: z.string({ error: 'required string' }).min(1, 'must not be empty'),
  name: z.string({ error: 'required string' }).min(1, 'must not be empty').max(255, 'must be at most 255 characters'),
});
export type StorageKeyCreateBody = z.input<typeof StorageKeyCreateBodySchema>;

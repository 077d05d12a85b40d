import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CloudValidationError, type CloudClient } from '../../src/cloud/index.js';
import type { GpuClusterCreateBody, LbPoolCreateBody, LoadBalancerCreateBody } from '../../src/cloud/schemas/index.js';
import { startHarness, type SimHarness } from './helpers/sim.js';

/**
 * Every rule of the spec, checked by the client before sending: each bad input gives a
 * CloudValidationError naming the field, and the simulator's request log stays empty.
 * Boundary values that are allowed are sent and accepted, so client and simulator agree.
 */

let h: SimHarness;
let client: CloudClient;
/** A real scope of the demo company, set before the tests run. */
let P = 1;
let R = 1;
const UUID = '3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b';
const long = (n: number) => 'a'.repeat(n);

const cluster: GpuClusterCreateBody = {
  flavor: 'some-flavor',
  image_id: UUID,
  interfaces: [{ type: 'external' }],
  name: 'train-01',
};
const pool: LbPoolCreateBody = { name: 'pool-1', lb_algorithm: 'ROUND_ROBIN', protocol: 'HTTP' };
const listener = { name: 'listener-1', protocol: 'HTTP' as const, protocol_port: 80 };
const lb: LoadBalancerCreateBody = { name: 'lb-1', listeners: [listener] };
const virtual = {
  flavor: 'vgpu-flavor',
  name: 'virtual-01',
  servers_count: 1,
  servers_settings: { interfaces: [{ type: 'external' }], volumes: [] },
};
const inference = {
  application_name: 'llama',
  components_configuration: { model: { exposed: true, flavor: 'gpu-1', scale: { min: 0, max: 1 } } },
  name: 'infer-1',
  regions: [1],
};

beforeAll(async () => {
  h = await startHarness();
  client = h.client;
  const scope = h.sim.manifest().scopes[0]!;
  P = scope.project_id;
  R = scope.region_id;
});
afterAll(async () => {
  await h.close();
});

type Case = [rule: string, call: () => Promise<unknown>, field: string];

const cases: Case[] = [
  // path parameters
  ['project_id must be a positive integer', () => client.listKeypairs(0, R), 'path.project_id'],
  ['region_id must be an integer', () => client.listKeypairs(P, 1.5), 'path.region_id'],
  ['group_id must not be empty', () => client.listInstancesBySecurityGroup(P, R, ''), 'path.group_id'],
  ['instance_id must not be empty (stop)', () => client.stopInstance(P, R, ''), 'path.instance_id'],
  ['instance_id must not be empty (ports)', () => client.listInstancePorts(P, R, ''), 'path.instance_id'],
  ['image_id must not be empty', () => client.getImageTags(P, R, ''), 'path.image_id'],
  ['cluster_name must not be empty', () => client.getK8sClusterPrice(P, R, ''), 'path.cluster_name'],
  ['listener_id must not be empty', () => client.updateLbListener(P, R, '', { name: 'ok-name' }), 'path.listener_id'],
  ['free feature id must be a positive integer', () => client.getFreeFeature(-3), 'path.free_feature_id'],
  ['storage key id must be a positive integer', () => client.deleteStorageKey(0), 'path.key_id'],
  ['task id must not be empty', () => client.getTask(''), 'path.task_id'],
  // bare metal cluster body
  ['cluster name pattern (leading dash)', () => client.createGpuCluster(P, R, { ...cluster, name: '-train' }), 'body.name'],
  ['cluster name pattern (too short)', () => client.createGpuCluster(P, R, { ...cluster, name: 'ab' }), 'body.name'],
  ['cluster name at most 63 characters', () => client.createGpuCluster(P, R, { ...cluster, name: long(64) }), 'body.name'],
  ['cluster name characters', () => client.createGpuCluster(P, R, { ...cluster, name: 'bad/name' }), 'body.name'],
  ['flavor required', () => client.createGpuCluster(P, R, { ...cluster, flavor: undefined as unknown as string }), 'body.flavor'],
  ['image_id must be a UUID v4', () => client.createGpuCluster(P, R, { ...cluster, image_id: 'img-1' }), 'body.image_id'],
  ['at least one interface', () => client.createGpuCluster(P, R, { ...cluster, interfaces: [] }), 'body.interfaces'],
  [
    'subnet interface needs subnet_id',
    () =>
      client.createGpuCluster(P, R, {
        ...cluster,
        interfaces: [{ type: 'subnet', network_id: UUID } as unknown as { type: 'external' }],
      }),
    'body.interfaces[0].subnet_id',
  ],
  ['instances_count >= 1', () => client.createGpuCluster(P, R, { ...cluster, instances_count: 0 }), 'body.instances_count'],
  [
    'user_data exclusive with username',
    () => client.createGpuCluster(P, R, { ...cluster, user_data: 'I2Nsb3VkLWNvbmZpZw==', username: 'ops' }),
    'body.user_data',
  ],
  [
    'user_data exclusive with password',
    () => client.createGpuCluster(P, R, { ...cluster, user_data: 'I2Nsb3VkLWNvbmZpZw==', password: 'x' }),
    'body.user_data',
  ],
  ['tag value <= 255', () => client.createGpuCluster(P, R, { ...cluster, tags: { team: long(256) } }), 'body.tags.team'],
  ['tag key <= 255', () => client.createGpuCluster(P, R, { ...cluster, tags: { [long(256)]: 'v' } }), 'body.tags'],
  ['unknown body field', () => client.createGpuCluster(P, R, { ...cluster, colour: 'red' } as GpuClusterCreateBody), 'body'],
  // virtual cluster body
  ['virtual cluster name <= 63', () => client.createVirtualGpuCluster(P, R, { ...virtual, name: long(64) }), 'body.name'],
  ['virtual cluster name pattern', () => client.createVirtualGpuCluster(P, R, { ...virtual, name: '_x_' }), 'body.name'],
  [
    'virtual cluster servers_settings required',
    () => client.createVirtualGpuCluster(P, R, { ...virtual, servers_settings: undefined as unknown as typeof virtual.servers_settings }),
    'body.servers_settings',
  ],
  ['virtual cluster servers_count integer', () => client.createVirtualGpuCluster(P, R, { ...virtual, servers_count: 1.5 }), 'body.servers_count'],
  // pool body
  ['pool lb_algorithm enum', () => client.createLbPool(P, R, { ...pool, lb_algorithm: 'RANDOM' as 'ROUND_ROBIN' }), 'body.lb_algorithm'],
  ['pool protocol enum', () => client.createLbPool(P, R, { ...pool, protocol: 'SMTP' as 'HTTP' }), 'body.protocol'],
  ['pool name pattern', () => client.createLbPool(P, R, { ...pool, name: 'p' }), 'body.name'],
  ['pool timeout_member_connect <= 86400000', () => client.createLbPool(P, R, { ...pool, timeout_member_connect: 86_400_001 }), 'body.timeout_member_connect'],
  ['pool timeout_member_data >= 0', () => client.createLbPool(P, R, { ...pool, timeout_member_data: -1 }), 'body.timeout_member_data'],
  ['pool timeout_client_data <= 86400000', () => client.createLbPool(P, R, { ...pool, timeout_client_data: 90_000_000 }), 'body.timeout_client_data'],
  [
    'pool member port 1..65535',
    () => client.createLbPool(P, R, { ...pool, members: [{ address: '10.0.0.1', protocol_port: 0 }] }),
    'body.members[0].protocol_port',
  ],
  ['pool listener_id UUID', () => client.createLbPool(P, R, { ...pool, listener_id: 'l-1' }), 'body.listener_id'],
  // load balancer body
  ['lb name pattern', () => client.createLoadBalancer(P, R, { ...lb, name: ' lb' }), 'body.name'],
  ['listener port <= 65535', () => client.createLoadBalancer(P, R, { ...lb, listeners: [{ ...listener, protocol_port: 65_536 }] }), 'body.listeners[0].protocol_port'],
  ['listener port >= 1', () => client.createLoadBalancer(P, R, { ...lb, listeners: [{ ...listener, protocol_port: 0 }] }), 'body.listeners[0].protocol_port'],
  ['listener connection limit >= -1', () => client.createLoadBalancer(P, R, { ...lb, listeners: [{ ...listener, connection_limit: -2 }] }), 'body.listeners[0].connection_limit'],
  [
    'listener connection limit <= 1000000',
    () => client.createLoadBalancer(P, R, { ...lb, listeners: [{ ...listener, connection_limit: 1_000_001 }] }),
    'body.listeners[0].connection_limit',
  ],
  [
    'listener timeout <= 86400000',
    () => client.createLoadBalancer(P, R, { ...lb, listeners: [{ ...listener, timeout_client_data: 86_400_001 }] }),
    'body.listeners[0].timeout_client_data',
  ],
  ['listener protocol enum', () => client.createLoadBalancer(P, R, { ...lb, listeners: [{ ...listener, protocol: 'SMTP' as 'HTTP' }] }), 'body.listeners[0].protocol'],
  [
    'at most 50 listeners',
    () =>
      client.createLoadBalancer(P, R, {
        ...lb,
        listeners: Array.from({ length: 51 }, (_, i) => ({ ...listener, name: `listener-${i}`, protocol_port: 1000 + i })),
      }),
    'body.listeners',
  ],
  ['vip_network_id exclusive with vip_port_id', () => client.createLoadBalancer(P, R, { ...lb, vip_network_id: UUID, vip_port_id: UUID }), 'body.vip_port_id'],
  ['connectivity L2 or L3', () => client.createLoadBalancer(P, R, { ...lb, preferred_connectivity: 'L4' as 'L2' }), 'body.preferred_connectivity'],
  ['lb tag value <= 255', () => client.createLoadBalancer(P, R, { ...lb, tags: { env: long(256) } }), 'body.tags.env'],
  // listener update body
  ['listener update name pattern', () => client.updateLbListener(P, R, UUID, { name: 'x' }), 'body.name'],
  ['listener update name required', () => client.updateLbListener(P, R, UUID, {} as { name: string }), 'body.name'],
  // inference
  ['inference name <= 15', () => client.createInferenceDeployment(P, { ...inference, name: long(16) }), 'body.name'],
  ['inference regions required', () => client.createInferenceDeployment(P, { ...inference, regions: undefined as unknown as number[] }), 'body.regions'],
  ['inference project_id positive', () => client.createInferenceDeployment(0, inference), 'path.project_id'],
  // functions
  ['namespace name pattern', () => client.deleteFunction(P, R, 'Bad_Ns', 'fn-1'), 'path.namespace_name'],
  ['function name pattern (ends with dash)', () => client.deleteFunction(P, R, 'ns-1', 'fn-'), 'path.function_name'],
  ['function name at most 26 characters', () => client.deleteFunction(P, R, 'ns-1', `f${long(26)}`), 'path.function_name'],
  // storage keys
  ['storage key limit >= 1', () => client.listStorageKeys({ limit: 0 }), 'query.limit'],
  ['storage key limit <= 1000', () => client.listStorageKeys({ limit: 1001 }), 'query.limit'],
  ['storage key offset >= 0', () => client.listStorageKeys({ offset: -1 }), 'query.offset'],
  ['storage key order_direction', () => client.listStorageKeys({ order_direction: 'up' as 'asc' }), 'query.order_direction'],
  ['storage key create needs key', () => client.createStorageKey({ name: 'n' } as { key: string; name: string }), 'body.key'],
  ['storage key create needs name', () => client.createStorageKey({ key: 'ssh-ed25519 AAAA', name: '' }), 'body.name'],
  // other queries
  ['cluster list limit >= 1', () => client.listGpuClusters(P, R, { limit: 0 }), 'query.limit'],
  ['cluster list offset >= 0', () => client.listGpuClusters(P, R, { offset: -5 }), 'query.offset'],
  ['flavor list unknown query', () => client.listGpuFlavors(P, R, { colour: 'red' } as object), 'query'],
];

describe('input rules are enforced before sending', () => {
  it.each(cases)('%s', async (_rule, call, field) => {
    h.sim.clearRequestLog();
    const err = await call().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CloudValidationError);
    const fields = (err as CloudValidationError).problems.map((p) => p.field);
    expect(fields.some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`))).toBe(true);
    expect((err as Error).message).toContain(field);
    expect(h.sim.requestLog).toEqual([]);
  });
});

describe('boundary values that the spec allows are sent and accepted', () => {
  it('pool timeouts 0 and 86400000, member port 65535', async () => {
    const res = await client.createLbPool(P, R, {
      ...pool,
      timeout_client_data: 0,
      timeout_member_connect: 86_400_000,
      timeout_member_data: null,
      members: [{ address: '10.0.0.1', protocol_port: 65_535, weight: 1 }],
    });
    expect(res.tasks.length).toBeGreaterThan(0);
  });

  it('listener connection limits -1 and 1000000, ports 1 and 65535', async () => {
    const res = await client.createLoadBalancer(P, R, {
      ...lb,
      listeners: [
        { ...listener, name: 'edge-a', protocol_port: 1, connection_limit: -1 },
        { ...listener, name: 'edge-b', protocol_port: 65_535, connection_limit: 1_000_000, timeout_member_data: 86_400_000 },
      ],
    });
    expect(res.tasks.length).toBeGreaterThan(0);
  });

  it('a 63-character virtual cluster name and a 15-character inference name', async () => {
    const name63 = `v${long(61)}1`;
    expect(name63).toHaveLength(63);
    await expect(client.createVirtualGpuCluster(P, R, { ...virtual, name: name63 })).resolves.toHaveProperty('tasks');
    await expect(client.createInferenceDeployment(P, { ...inference, name: long(15) })).resolves.toHaveProperty('tasks');
  });

  it('storage key limit 1 and 1000, offset 0', async () => {
    await expect(client.listStorageKeys({ limit: 1, offset: 0 })).resolves.toMatchObject({ data: [expect.anything()] });
    const page = await client.listStorageKeys({ limit: 1000 });
    expect(page.data.length).toBeLessThanOrEqual(1000);
  });

  it('tag keys and values of exactly 255 characters', async () => {
    const res = await client.createLoadBalancer(P, R, { ...lb, name: 'lb-tags', tags: { [long(255)]: long(255) } });
    expect(res.tasks.length).toBeGreaterThan(0);
  });
});

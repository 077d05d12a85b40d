import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiErrorBodySchema } from '../../src/cloud/schemas/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { call, fields, firstScope, get, start } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(() => sim.close());

const scopePath = () => {
  const s = firstScope(sim);
  return `${s.project_id}/${s.region_id}`;
};

describe('simulator auth', () => {
  it('answers 401 with the error body when the header is missing, the key wrong or the scheme not apikey', async () => {
    const path = `/cloud/v1/keypairs/${scopePath()}`;
    for (const auth of [null, 'apikey wrong-key', 'Bearer ' + sim.apiKey, sim.apiKey, 'apikey']) {
      const answer = await get(sim, path, { auth });
      expect(answer.status, String(auth)).toBe(401);
      const body = ApiErrorBodySchema.parse(answer.json);
      expect(body.code).toBe('unauthorized');
      expect(answer.text).not.toContain(sim.apiKey);
    }
  });

  it('compares the scheme case-insensitively', async () => {
    for (const scheme of ['apikey', 'APIKey', 'ApiKey', 'APIKEY']) {
      expect((await get(sim, `/cloud/v1/keypairs/${scopePath()}`, { auth: `${scheme} ${sim.apiKey}` })).status).toBe(200);
    }
  });
});

describe('simulator validation (400 naming every bad field)', () => {
  it('bare metal cluster create: required fields, pattern, minimum, exclusivity and tag length', async () => {
    const empty = await call(sim, 'POST', `/cloud/v1/ai/clusters/gpu/${scopePath()}`, { body: {} });
    expect(empty.status).toBe(400);
    expect(empty.json.code).toBe('validation_failed');
    expect(fields(empty)).toEqual(expect.arrayContaining(['body.flavor', 'body.image_id', 'body.interfaces', 'body.name']));

    const bad = await call(sim, 'POST', `/cloud/v1/ai/clusters/gpu/${scopePath()}`, {
      body: {
        flavor: 'bm3-ai-1xlarge-h100-80-8',
        image_id: 'not-a-uuid',
        interfaces: [],
        name: '-starts-with-dash',
        instances_count: 0,
        user_data: 'I2Nsb3VkLWNvbmZpZw==',
        username: 'ops',
        tags: { team: 'x'.repeat(256) },
      },
    });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(
      expect.arrayContaining(['body.image_id', 'body.interfaces', 'body.name', 'body.instances_count', 'body.user_data', 'body.tags.team']),
    );
    const wrongInterface = await call(sim, 'POST', `/cloud/v1/ai/clusters/gpu/${scopePath()}`, {
      body: {
        flavor: 'bm3-ai-1xlarge-h100-80-8',
        image_id: sim.manifest().image_ids[0],
        interfaces: [{ type: 'subnet', network_id: 'x' }],
        name: 'ok-name',
      },
    });
    expect(fields(wrongInterface)).toEqual(expect.arrayContaining(['body.interfaces[0].network_id', 'body.interfaces[0].subnet_id']));
  });

  it('virtual cluster, pool, load balancer, listener, inference and storage key bodies', async () => {
    const cases: Array<[string, string, unknown, string[]]> = [
      ['POST', `/cloud/v3/gpu/virtual/${scopePath()}/clusters`, { flavor: 'f', name: 'a'.repeat(64) }, ['body.name', 'body.servers_count', 'body.servers_settings']],
      [
        'POST',
        `/cloud/v1/lbpools/${scopePath()}`,
        { lb_algorithm: 'RANDOM', name: 'pool', protocol: 'SMTP', timeout_member_data: 86_400_001, members: [{ address: '10.0.0.1', protocol_port: 0 }] },
        ['body.lb_algorithm', 'body.protocol', 'body.timeout_member_data', 'body.members[0].protocol_port'],
      ],
      [
        'POST',
        `/cloud/v1/loadbalancers/${scopePath()}`,
        {
          name: 'lb',
          vip_network_id: '8f2b6c44-0a5e-4f3e-9a1d-2c8b7e6f5a4d',
          vip_port_id: '1c2b6c44-0a5e-4f3e-9a1d-2c8b7e6f5a4d',
          listeners: [{ name: 'l1', protocol: 'HTTP', protocol_port: 70_000, connection_limit: -2 }],
        },
        ['body.vip_port_id', 'body.listeners[0].protocol_port', 'body.listeners[0].connection_limit'],
      ],
      [
        'POST',
        `/cloud/v1/loadbalancers/${scopePath()}`,
        { name: 'lb', listeners: Array.from({ length: 51 }, (_, i) => ({ name: `listener-${i}`, protocol: 'TCP', protocol_port: 1000 + i })) },
        ['body.listeners'],
      ],
      ['PATCH', `/v2/lblisteners/${scopePath()}/whatever`, { name: 'x' }, ['body.name']],
      ['POST', `/cloud/v3/inference/applications/${firstScope(sim).project_id}/deployments`, { application_name: 'a', name: 'sixteen-chars-xx', components_configuration: {} }, ['body.name', 'body.regions']],
      ['PUT', '/storage/provisioning/v1/key', { key: '' }, ['body.key', 'body.name']],
    ];
    for (const [method, path, body, expected] of cases) {
      const answer = await call(sim, method, path, { body });
      expect(answer.status, path).toBe(400);
      expect(fields(answer), path).toEqual(expect.arrayContaining(expected));
    }
  });

  it('path parameters and queries', async () => {
    const { project_id: p, region_id: r } = firstScope(sim);
    const cases: Array<[string, string, string[]]> = [
      ['GET', `/cloud/v1/keypairs/abc/${r}`, ['path.project_id']],
      ['GET', `/cloud/v1/keypairs/0/-1`, ['path.project_id', 'path.region_id']],
      ['DELETE', `/cloud/v1/faas/namespaces/${p}/${r}/Bad_Name/functions/x`, ['path.namespace_name', 'path.function_name']],
      ['GET', '/cdn/admin/free_features/abc', ['path.free_feature_id']],
      ['DELETE', '/storage/provisioning/v1/key/12ab', ['path.key_id']],
      ['GET', `/cloud/v2/ai/clusters/${p}/${r}?limit=0&offset=-1`, ['query.limit', 'query.offset']],
      ['GET', `/cloud/v2/ai/clusters/${p}/${r}?page=2`, ['query']],
      ['GET', `/cloud/v1/ai/flavors/${p}/${r}?include_prices=maybe`, ['query.include_prices']],
      ['GET', '/storage/provisioning/v2/key?limit=1001&order_direction=up&order_by=size', ['query.limit', 'query.order_direction', 'query.order_by']],
      ['GET', '/storage/provisioning/v2/key?limit=0', ['query.limit']],
    ];
    for (const [method, path, expected] of cases) {
      const answer = await call(sim, method, path);
      expect(answer.status, path).toBe(400);
      expect(fields(answer), path).toEqual(expect.arrayContaining(expected));
    }
  });

  it('malformed JSON answers invalid_json', async () => {
    const answer = await call(sim, 'PUT', '/storage/provisioning/v1/key', { rawBody: '{"name": "x",' });
    expect(answer.status).toBe(400);
    expect(answer.json.code).toBe('invalid_json');
  });
});

describe('simulator 404 and 405', () => {
  it('answers 404 not_found for unknown scopes, resources and paths', async () => {
    const { project_id: p, region_id: r, security_groups } = firstScope(sim);
    const other = sim.manifest().scopes[1]!;
    const unknownUuid = '0b7e6f5a-4d8f-4b6c-9a1d-2c8b7e6f5a4d';
    const paths: Array<[string, string, unknown?]> = [
      ['GET', `/cloud/v1/keypairs/${p}/999`],
      ['GET', `/cloud/v1/keypairs/999/${r}`],
      ['GET', `/cloud/v1/keypairs/${p}/120`],
      ['GET', `/cloud/v1/securitygroups/${p}/${r}/${unknownUuid}/instances`],
      ['GET', `/cloud/v1/securitygroups/${p}/${r}/${other.security_groups[0]}/instances`],
      ['GET', `/cloud/v1/securitygroups/${other.project_id}/${other.region_id}/${security_groups[0]}/instances`],
      ['POST', `/cloud/v1/instances/${p}/${r}/${unknownUuid}/stop`],
      ['GET', `/cloud/v1/instances/${p}/${r}/${unknownUuid}/ports`],
      ['GET', `/cloud/v1/images/${p}/${r}/${unknownUuid}/metadata`],
      ['PATCH', `/v2/lblisteners/${p}/${r}/${unknownUuid}`, { name: 'fine-name' }],
      ['GET', `/cloud/v2/pricing/${p}/${r}/k8s/clusters/no-such-cluster`],
      ['DELETE', `/cloud/v1/faas/namespaces/${p}/${r}/no-such-ns/functions/fn`],
      ['DELETE', `/cloud/v1/faas/namespaces/${p}/${r}/${sim.state.faasNamespaces(p, r)[0]!.name}/functions/no-such-fn`],
      ['GET', '/cdn/admin/free_features/1'],
      ['GET', `/v1/tasks/${unknownUuid}`],
      ['DELETE', '/storage/provisioning/v1/key/1'],
      ['POST', '/cloud/v3/inference/applications/999/deployments', {
        application_name: 'whisper-large-v3',
        components_configuration: { m: { exposed: true, flavor: 'f', scale: { min: 1, max: 1 } } },
        name: 'x',
        regions: [r],
      }],
      ['GET', '/cloud/v9/nothing-here'],
      ['GET', '/'],
    ];
    for (const [method, path, body] of paths) {
      const answer = await call(sim, method, path, body === undefined ? {} : { body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json.code).toBe('not_found');
    }
  });

  it('answers 405 with Allow for a wrong method on a known path', async () => {
    const answer = await call(sim, 'GET', `/cloud/v1/ai/clusters/gpu/${scopePath()}`);
    expect(answer.status).toBe(405);
    expect(answer.headers['allow']).toBe('POST');
    const del = await call(sim, 'DELETE', `/cloud/v1/keypairs/${scopePath()}`);
    expect(del.status).toBe(405);
    expect(del.headers['allow']).toBe('GET');
  });
});

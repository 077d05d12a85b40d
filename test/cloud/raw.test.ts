import { afterEach, describe, expect, it } from 'vitest';
import { createCloudClient, rawOf, redactSecrets, type CloudClient } from '../../src/cloud/index.js';
import { sendJson, startTestServer, type TestServer } from './helpers/test-server.js';

let server: TestServer | undefined;
let client: CloudClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  server = undefined;
  client = undefined;
});

async function serve(body: unknown): Promise<CloudClient> {
  server = await startTestServer((_req, res) => sendJson(res, 200, body));
  client = createCloudClient({ baseUrl: server.url, apiKey: 'k-raw-test' });
  return client;
}

const server1 = {
  instance_id: '0b7f7a38-2f5c-4b6e-9c1e-6c5a4b3a2f10',
  instance_name: 'gpu-node-1',
  instance_created: '2023-09-28T15:24:34+0000',
  metadata: { team: 'ml' },
  user_data: '$6$hash',
  vendor_extra: { nested: true },
};

describe('raw JSON of parsed records', () => {
  it('keeps every cluster and server raw, legacy names and extra fields included, secrets redacted', async () => {
    const c = await serve({
      count: 1,
      results: [
        {
          cluster_id: 'c1',
          cluster_name: 'train',
          password: 'hunter2',
          user_data: null,
          username: 'ubuntu',
          surprise: 42,
          poplar_servers: [server1],
        },
      ],
      links: [],
    });
    const list = await c.listGpuClusters(1, 2);
    const cluster = list.results[0]!;
    // The parsed record never holds the secret either.
    expect(cluster.password).toBe('[redacted]');
    expect(cluster.user_data).toBeNull();
    expect(cluster.servers[0]!.id).toBe(server1.instance_id);
    expect(cluster.servers[0]!.name).toBe('gpu-node-1');
    expect(cluster.servers[0]!.tags).toEqual([{ key: 'team', value: 'ml', read_only: false }]);

    const raw = rawOf(cluster)!;
    expect(raw['surprise']).toBe(42);
    expect(raw['password']).toBe('[redacted]');
    expect(raw['user_data']).toBeNull(); // null stays null: nothing was there
    expect(raw['username']).toBe('ubuntu');
    const rawServer = rawOf(cluster.servers[0]!)!;
    expect(rawServer['instance_name']).toBe('gpu-node-1');
    expect(rawServer['user_data']).toBe('[redacted]');
    expect(rawServer['vendor_extra']).toEqual({ nested: true });
    expect(JSON.stringify(raw)).not.toContain('hunter2');
    expect(JSON.stringify(raw)).not.toContain('$6$hash');
    expect(rawOf(list)).toBeUndefined();
  });

  it('redacts keypair private keys and maps legacy keypair names', async () => {
    const c = await serve({
      count: 2,
      results: [
        { sshkey_id: 'old-key', sshkey_name: 'old-key', public_key: 'ssh-rsa AAA', private_key: '-----BEGIN' },
        { id: '1c7b0f1e-2d3c-4b5a-8f9e-0a1b2c3d4e5f', name: 'new', private_key: null, state: 'ACTIVE' },
      ],
    });
    const { results } = await c.listKeypairs(1, 2);
    expect(results.map((k) => [k.id, k.name, k.private_key])).toEqual([
      ['old-key', 'old-key', '[redacted]'],
      ['1c7b0f1e-2d3c-4b5a-8f9e-0a1b2c3d4e5f', 'new', null],
    ]);
    expect(rawOf(results[0]!)).toEqual({
      sshkey_id: 'old-key',
      sshkey_name: 'old-key',
      public_key: 'ssh-rsa AAA',
      private_key: '[redacted]',
    });
    expect(rawOf(results[1]!)!['private_key']).toBeNull();
  });

  it('pairs a legacy single-object stop answer with its raw form', async () => {
    const c = await serve({ instance_id: 'i-1', instance_name: 'web', status: 'SHUTOFF', vm_state: 'stopped' });
    const stopped = await c.stopInstance(1, 2, 'i-1');
    expect(stopped.count).toBe(1);
    expect(stopped.results[0]).toMatchObject({ id: 'i-1', name: 'web', status: 'SHUTOFF' });
    expect(rawOf(stopped.results[0]!)).toMatchObject({ instance_id: 'i-1' });
  });

  it('redacts nested listener user passwords', async () => {
    const c = await serve({
      id: 'l-1',
      name: 'renamed',
      user_list: [{ username: 'admin', encrypted_password: '$apr1$x' }],
    });
    const listener = await c.updateLbListener(1, 2, 'l-1', { name: 'renamed' });
    expect(listener.user_list[0]!.encrypted_password).toBe('[redacted]');
    expect(rawOf(listener)!['user_list']).toEqual([{ username: 'admin', encrypted_password: '[redacted]' }]);
  });
});

describe('redactSecrets', () => {
  it('returns a redacted deep copy and leaves the input alone', () => {
    const input = { a: [{ password: 'p', x: { private_key: 'k', user_data: '' } }], encrypted_password: null, other: 'kept' };
    const out = redactSecrets(input);
    expect(out).toEqual({
      a: [{ password: '[redacted]', x: { private_key: '[redacted]', user_data: '[redacted]' } }],
      encrypted_password: null,
      other: 'kept',
    });
    expect(input.a[0]!.password).toBe('p');
  });
});

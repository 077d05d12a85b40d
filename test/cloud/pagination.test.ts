import { afterEach, describe, expect, it } from 'vitest';
import { CloudValidationError, createCloudClient, type CloudClient } from '../../src/cloud/index.js';
import { sendJson, startTestServer, type TestServer } from './helpers/test-server.js';

let server: TestServer | undefined;
let client: CloudClient | undefined;

afterEach(async () => {
  await client?.close();
  await server?.close();
  server = undefined;
  client = undefined;
});

function queryOf(url: string): URLSearchParams {
  return new URL(url, 'http://x').searchParams;
}

async function serve(total: number, shape: 'envelope' | 'data', reportTotal = true): Promise<CloudClient> {
  server = await startTestServer((req, res) => {
    const q = queryOf(req.url);
    const offset = Number(q.get('offset') ?? 0);
    const limit = Number(q.get('limit') ?? 10);
    const ids = Array.from({ length: Math.max(0, Math.min(limit, total - offset)) }, (_, i) => offset + i + 1);
    if (shape === 'envelope') {
      sendJson(res, 200, { count: total, results: ids.map((id) => ({ cluster_id: `c-${id}`, cluster_name: `n${id}` })) });
    } else {
      sendJson(res, 200, {
        data: ids.map((id) => ({ id, name: `key-${id}`, created_at: '2024-01-01T00:00:00Z' })),
        meta: reportTotal ? { total_count: total } : {},
      });
    }
  });
  client = createCloudClient({ baseUrl: server.url, apiKey: 'k-page-test' });
  return client;
}

describe('cluster pages', () => {
  it('walks limit/offset and stops once offset reaches count, without an extra request', async () => {
    const c = await serve(6, 'envelope');
    const seen: string[] = [];
    const offsets: number[] = [];
    for await (const page of c.gpuClusterPages(1, 2, { pageSize: 2 })) {
      offsets.push(page.offset);
      expect(page.total).toBe(6);
      seen.push(...page.results.map((r) => r.cluster_id));
    }
    expect(seen).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6']);
    expect(offsets).toEqual([0, 2, 4]);
    expect(server!.requests.map((r) => r.url)).toEqual([
      '/cloud/v2/ai/clusters/1/2?limit=2&offset=0',
      '/cloud/v2/ai/clusters/1/2?limit=2&offset=2',
      '/cloud/v2/ai/clusters/1/2?limit=2&offset=4',
    ]);
  });

  it('stops on a short page', async () => {
    const c = await serve(5, 'envelope');
    let n = 0;
    for await (const page of c.gpuClusterPages(1, 2, { pageSize: 2 })) n += page.results.length;
    expect(n).toBe(5);
    expect(server!.requests).toHaveLength(3);
  });

  it('rejects a page size below 1 before sending', async () => {
    const c = await serve(5, 'envelope');
    const walk = async () => {
      for await (const _ of c.gpuClusterPages(1, 2, { pageSize: 0 })) void _;
    };
    await expect(walk()).rejects.toBeInstanceOf(CloudValidationError);
    expect(server!.requests).toHaveLength(0);
  });
});

describe('storage key pages', () => {
  it('walks offset/limit until meta.total_count, passing filters along', async () => {
    const c = await serve(25, 'data');
    const ids: number[] = [];
    for await (const page of c.storageKeyPages({ pageSize: 10, order_by: 'id', order_direction: 'asc' })) {
      ids.push(...page.results.map((k) => k.id));
    }
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(
      server!.requests.map((r) => {
        const q = queryOf(r.url);
        return [new URL(r.url, 'http://x').pathname, q.get('offset'), q.get('limit'), q.get('order_by'), q.get('order_direction')];
      }),
    ).toEqual([
      ['/storage/provisioning/v2/key', '0', '10', 'id', 'asc'],
      ['/storage/provisioning/v2/key', '10', '10', 'id', 'asc'],
      ['/storage/provisioning/v2/key', '20', '10', 'id', 'asc'],
    ]);
  });

  it('stops at an exact multiple of the page size thanks to total_count, and on an empty page without it', async () => {
    const c = await serve(20, 'data');
    for await (const _ of c.storageKeyPages({ pageSize: 10 })) void _;
    expect(server!.requests).toHaveLength(2);
    await client!.close();
    await server!.close();

    const c2 = await serve(20, 'data', false);
    let n = 0;
    for await (const page of c2.storageKeyPages({ pageSize: 10 })) n += page.results.length;
    expect(n).toBe(20);
    expect(server!.requests).toHaveLength(3);
  });

  it('rejects a page size above 1000 before sending', async () => {
    const c = await serve(5, 'data');
    await expect(c.storageKeyPages({ pageSize: 1001 }).next()).rejects.toThrow(/query\.limit: must be 1 to 1000/);
    expect(server!.requests).toHaveLength(0);
  });
});

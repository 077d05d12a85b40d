import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageKeyListSchema, StorageKeyRecordSchema } from '../../src/cloud/schemas/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { call, get, NOW, start } from './helpers.js';

let sim: Simulator;
beforeAll(async () => {
  sim = await start();
});
afterAll(() => sim.close());

const list = async (query: string) => {
  const answer = await get(sim, `/storage/provisioning/v2/key${query}`);
  expect(answer.status, answer.text).toBe(200);
  return { raw: answer.json, parsed: StorageKeyListSchema.parse(answer.json) };
};

describe('simulator storage keys', () => {
  it('lists 10 by default with meta, more than 1,000 in all, ids rising', async () => {
    const { raw, parsed } = await list('');
    expect(parsed.data).toHaveLength(10);
    expect(raw.meta.offset).toBe(0);
    expect(raw.meta.limit).toBe(10);
    expect(raw.meta.total_count).toBeGreaterThan(1000);
    const ids = parsed.data.map((k) => k.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  it('walks every page with offset and limit, each key once', async () => {
    const seen = new Set<number>();
    let total = Infinity;
    for (let offset = 0; offset < total; offset += 500) {
      const { raw, parsed } = await list(`?offset=${offset}&limit=500`);
      total = raw.meta.total_count;
      for (const k of parsed.data) seen.add(k.id);
    }
    expect(seen.size).toBe(total);
    expect((await list('?limit=1000')).parsed.data).toHaveLength(1000);
  });

  it('orders by name or created_at in either direction', async () => {
    const byNameDesc = (await list('?order_by=name&order_direction=desc&limit=50')).parsed.data.map((k) => k.name!);
    expect(byNameDesc).toEqual([...byNameDesc].sort().reverse());
    const newest = (await list('?order_by=created_at&order_direction=desc&limit=5')).parsed.data;
    const times = newest.map((k) => Date.parse(k.created_at!));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(times[0]).toBeLessThanOrEqual(NOW.getTime());
    expect(times[0]).toBeGreaterThan(NOW.getTime() - 30 * 86_400_000);
  });

  it('filters by id, name and created', async () => {
    const all = (await list('?limit=1000')).parsed.data;
    const sample = all[123]!;
    const byId = await list(`?id=${sample.id}`);
    expect(byId.parsed.data.map((k) => k.id)).toEqual([sample.id]);
    expect(byId.raw.meta.total_count).toBe(1);

    const byName = await list('?name=BACKUP&limit=1000');
    expect(byName.parsed.data.length).toBeGreaterThan(0);
    expect(byName.parsed.data.every((k) => k.name!.includes('backup'))).toBe(true);

    const month = sample.created_at!.slice(0, 7);
    const byMonth = await list(`?created=${month}&limit=1000`);
    expect(byMonth.parsed.data.length).toBeGreaterThan(0);
    expect(byMonth.parsed.data.every((k) => k.created_at!.startsWith(month))).toBe(true);
    expect(byMonth.raw.meta.total_count).toBeLessThan(all.length);
  });

  it('creates, lists and deletes a key (204 without body), then 404', async () => {
    const created = await call(sim, 'PUT', '/storage/provisioning/v1/key', {
      body: { name: 'test-created-key', key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKey test' },
    });
    expect(created.status).toBe(200);
    const record = StorageKeyRecordSchema.parse(created.json);
    expect(record.name).toBe('test-created-key');
    expect(Number.isSafeInteger(record.id)).toBe(true);
    expect(record.created_at).toMatch(/Z$/);

    const found = await list('?name=test-created-key');
    expect(found.parsed.data.map((k) => k.id)).toEqual([record.id]);
    const duplicate = await call(sim, 'PUT', '/storage/provisioning/v1/key', { body: { name: 'test-created-key', key: 'ssh-ed25519 AAAA x' } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.code).toBe('conflict');

    const deleted = await call(sim, 'DELETE', `/storage/provisioning/v1/key/${record.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await list('?name=test-created-key')).parsed.data).toEqual([]);
    expect((await call(sim, 'DELETE', `/storage/provisioning/v1/key/${record.id}`)).status).toBe(404);
    expect(sim.state.storageKeys().some((k) => k.id === record.id)).toBe(false);
  });
});

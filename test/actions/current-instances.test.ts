import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInstancesByRef, type CurrentInstance } from '../../src/actions/index.js';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { pricedResourcesSql } from '../../src/costing/pricing.js';
import { gpuFlavors, instances, gpuFlavorsKept, instancesKept } from '../../src/db/schema.js';
import { testDatabases } from '../helpers/databases.js';
import { SCOPE_A, SCOPE_B, seedKnownDataset, T3, TP, type Seeded } from '../reports/fixture.js';

/**
 * What a stop confirmation and the idle candidates show (running, unit price, currency) must be
 * what the cost reports count: both come from the cost model's rules. The known dataset (see
 * test/reports/fixture.ts) plus the cases where a second copy of the rules would drift:
 *   x-month   status empty, vm_state 'active'   flavor g-month: monthly price only (730.00), currency ' eur '
 *   x-hidden  name g-hidden (price hidden), id f-a100 (priced): the name decides, so unpriced
 *   x-dup     flavor g-dup, listed twice (f-dup1 at 1.00, f-dup2 at 9.00): the lowest id, 1.00
 */
describe.each(testDatabases())('current instances on $name', ({ open }) => {
  let db: Database;
  let seeded: Seeded;

  beforeEach(async () => {
    db = await open();
    seeded = await seedKnownDataset(db);
    const flavorSnapshot = seeded.snapshots.get(`flavor@${SCOPE_A.scopeKey}@${new Date(TP.getTime() - 5 * 60_000).toISOString()}`)!;
    const instanceSnapshot = seeded.snapshots.get(`instance@${SCOPE_A.scopeKey}@${T3.toISOString()}`)!;
    const flavor = (flavorId: string, flavorName: string, currencyCode: string, pricePerHour: string | null, pricePerMonth: string | null) => ({
      snapshotId: flavorSnapshot, flavorId, flavorName, currencyCode, pricePerHour, pricePerMonth, priceStatus: 'show', projectId: 1, regionId: 1, raw: {},
    });
    await bulkInsert(db, gpuFlavorsKept, [
      flavor('f-month', 'g-month', ' eur ', null, '730.00'),
      flavor('f-dup2', 'g-dup', 'EUR', '9.00', null),
      flavor('f-dup1', 'g-dup', 'EUR', '1.00', null),
    ]);
    const vm = (instanceId: string, status: string | null, vmState: string | null, flavorName: string, flavorId: string) => ({
      snapshotId: instanceSnapshot, instanceId, name: instanceId, status, vmState, flavorName, flavorId, projectId: 1, regionId: 1, tags: {}, raw: {},
    });
    await bulkInsert(db, instancesKept, [
      vm('x-month', ' ', 'active', 'g-month', 'f-month'),
      vm('x-hidden', 'ACTIVE', null, 'g-hidden', 'f-a100'),
      vm('x-dup', 'ACTIVE', null, 'g-dup', 'f-dup2'),
    ]);
  });
  afterEach(() => db.close());

  const latest = () => [
    seeded.snapshots.get(`instance@${SCOPE_A.scopeKey}@${T3.toISOString()}`)!,
    seeded.snapshots.get(`instance@${SCOPE_B.scopeKey}@${T3.toISOString()}`)!,
    seeded.snapshots.get(`cluster@${SCOPE_A.scopeKey}@${T3.toISOString()}`)!,
  ];

  async function current(): Promise<CurrentInstance[]> {
    const rows = await db.query<{ instance_id: string; project_id: number; region_id: number }>(
      `select instance_id, project_id, region_id from instances where snapshot_id = any($1::int[])
       union all select server_id, project_id, region_id from gpu_cluster_servers where snapshot_id = any($1::int[])`,
      [latest()],
    );
    const found = await loadInstancesByRef(db, rows.map((r) => ({ projectId: r.project_id, regionId: r.region_id, instanceId: r.instance_id })));
    expect(found).toHaveLength(rows.length);
    return found;
  }

  it('prices and calls running exactly as the cost model does, instance by instance', async () => {
    const modelled = await db.query<{ resource_id: string; running: boolean; currency: string | null; unit_price_per_hour: string | null; unit_price_per_month: string | null }>(
      `select resource_id, running, currency, unit_price_per_hour::text, unit_price_per_month::text
       from (${pricedResourcesSql(`(select * from snapshots where id = any($1::int[]))`, ['instance'])}) r`,
      [latest()],
    );
    const byId = new Map((await current()).map((c) => [c.ref.instanceId, c]));
    expect(modelled.length).toBeGreaterThan(8);
    for (const m of modelled) {
      const c = byId.get(m.resource_id)!;
      expect([m.resource_id, c.running, c.currency, num(c.pricePerHour), num(c.pricePerMonth)]).toEqual([
        m.resource_id,
        m.running,
        m.currency,
        num(m.unit_price_per_hour),
        num(m.unit_price_per_month),
      ]);
    }
  });

  it('gets the cases a second copy of the rules got wrong right, by hand', async () => {
    const byId = new Map((await current()).map((c) => [c.ref.instanceId, c]));
    const show = (id: string) => {
      const c = byId.get(id)!;
      return [c.status, c.running, c.currency, num(c.pricePerHour), num(c.pricePerMonth)];
    };
    expect(show('x-month')).toEqual(['active', true, 'EUR', 1, 730]);
    expect(show('x-hidden')).toEqual(['ACTIVE', true, null, null, null]);
    expect(show('x-dup')).toEqual(['ACTIVE', true, 'EUR', 1, 730]);
    // Cluster servers cost their cluster's flavor (g-a100, EUR 2.50), running or not by their own status.
    expect(['s1', 's2', 's3'].map((id) => [id, byId.get(id)!.running, num(byId.get(id)!.pricePerHour)])).toEqual([
      ['s1', true, 2.5],
      ['s2', true, 2.5],
      ['s3', false, 2.5],
    ]);
  });
});

const num = (v: string | null) => (v === null ? null : Number(v));

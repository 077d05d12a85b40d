import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { dailyCosts } from '../../src/costing/cost-over-time.js';
import { refreshCostDaily } from '../../src/costing/derive/closed-days.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { cronGapHours, maxGapHoursForSchedules } from '../../src/costing/gap-caps.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset, T0, T3, type Seeded } from '../reports/fixture.js';

/** Decimal text compared as a number with 9 decimals (exact enough for amounts we computed by hand). */
const dec = (v: unknown) => (v === null || v === undefined ? null : Number(Number(v).toFixed(9)));

interface RollupRow {
  dimension: string;
  group_value: string;
  currency: string | null;
  price_per_hour: string;
  price_per_month: string;
  resource_count: number;
  unpriced_count: number;
}

describe.each(testDatabases())('cost model on $name', ({ open }) => {
  let db: Database;
  let seeded: Seeded;

  beforeAll(async () => {
    db = await open();
    seeded = await seedKnownDataset(db);
  });
  afterAll(async () => {
    await db?.close();
  });

  const snap = (kind: string, scope: string, at: Date) => seeded.snapshots.get(`${kind}@${scope}@${at.toISOString()}`)!;

  async function rollups(snapshotId: number, dimension: string) {
    const rows = await db.query<RollupRow & Record<string, unknown>>(
      `select dimension, group_value, currency, price_per_hour, price_per_month, resource_count, unpriced_count
       from cost_rollups where snapshot_id = $1 and dimension = $2 order by group_value, currency nulls last`,
      [snapshotId, dimension],
    );
    return rows.map((r) => [r.group_value, r.currency, dec(r.price_per_hour), dec(r.price_per_month), r.resource_count, r.unpriced_count]);
  }

  it('prices instances by flavor name (fallback id), counts stopped ones at 0 and unpriced ones apart', async () => {
    const id = snap('instance', 'p1-r1', T3);
    // Running: i1, i5 (priced by flavor_id), i7 at 2.50 = 7.50/h, 3 x 1825 = 5475/month.
    // Stopped: i2, i3 (g-h100) counted in the EUR row at 0. Unpriced: i4 (hidden price).
    expect(await rollups(id, 'kind')).toEqual([
      ['instance', 'EUR', 7.5, 5475, 5, 0],
      ['instance', null, 0, 0, 1, 1],
    ]);
    expect(await rollups(id, 'state')).toEqual([
      ['running', 'EUR', 7.5, 5475, 3, 0],
      ['running', null, 0, 0, 1, 1],
      ['stopped', 'EUR', 0, 0, 2, 0],
    ]);
    // i5 has no flavor_name: it is matched (and grouped) by its flavor id's name.
    expect(await rollups(id, 'flavor')).toEqual([
      ['g-a100', 'EUR', 7.5, 5475, 3, 0],
      ['g-h100', 'EUR', 0, 0, 2, 0],
      ['g-hidden', null, 0, 0, 1, 1],
    ]);
    expect(await rollups(id, 'project')).toEqual([
      ['1', 'EUR', 7.5, 5475, 5, 0],
      ['1', null, 0, 0, 1, 1],
    ]);
  });

  it('writes one tag dimension per key present, with an explicit (untagged) group', async () => {
    const id = snap('instance', 'p1-r1', T3);
    expect(await rollups(id, 'tag:team')).toEqual([
      ['(untagged)', 'EUR', 2.5, 1825, 1, 0], // i5
      ['(untagged)', null, 0, 0, 1, 1], // i4
      ['ML ', 'EUR', 0, 0, 1, 0], // i2, stopped
      ['data', 'EUR', 2.5, 1825, 1, 0], // i7
      ['ml', 'EUR', 2.5, 1825, 1, 0], // i1
      ['web', 'EUR', 0, 0, 1, 0], // i3, stopped
    ]);
    // env only on i1 at T3: the other four EUR resources (2 running: i5, i7) are untagged.
    expect(await rollups(id, 'tag:env')).toEqual([
      ['(untagged)', 'EUR', 5, 3650, 4, 0],
      ['(untagged)', null, 0, 0, 1, 1],
      ['prod', 'EUR', 2.5, 1825, 1, 0],
    ]);
    expect(await rollups(id, 'tag:cost.center')).toEqual([
      ['(untagged)', 'EUR', 5, 3650, 4, 0],
      ['(untagged)', null, 0, 0, 1, 1],
      ['cc/1', 'EUR', 2.5, 1825, 1, 0],
    ]);
    const usd = snap('instance', 'p2-r2', T3);
    expect(await rollups(usd, 'tag:ünï code/x')).toEqual([
      ['(untagged)', null, 0, 0, 1, 1], // j2: no such flavor
      ['ü', 'USD', 3, 2190, 1, 0],
    ]);
  });

  it('prices a cluster as flavor price x running servers, and Kubernetes by its total', async () => {
    // bm-1: s1, s2 ACTIVE, s3 SHUTOFF -> 2 x 2.50 = 5.00/h, 2 x 1825 = 3650/month.
    expect(await rollups(snap('cluster', 'p1-r1', T3), 'kind')).toEqual([['cluster', 'EUR', 5, 3650, 1, 0]]);
    expect(await rollups(snap('cluster', 'p1-r1', T3), 'tag:team')).toEqual([['ml', 'EUR', 5, 3650, 1, 0]]);
    expect(await rollups(snap('k8s_price', 'p1-r1', T3), 'kind')).toEqual([['k8s_price', 'EUR', 1.2, 876, 1, 0]]);
    // No tag keys on Kubernetes prices: no tag rows at all (readers count it as untagged).
    expect(await rollups(snap('k8s_price', 'p1-r1', T3), 'tag:team')).toEqual([]);
  });

  it('is idempotent and rejects snapshots that carry no cost', async () => {
    const id = snap('instance', 'p1-r1', T3);
    const before = await rollups(id, 'tag:team');
    await computeCostRollups(db, id);
    await db.transaction((tx) => computeCostRollups(tx, id));
    expect(await rollups(id, 'tag:team')).toEqual(before);
    await expect(computeCostRollups(db, snap('flavor', 'p1-r1', new Date(T0.getTime() - 11 * 3600_000 - 5 * 60_000)))).rejects.toThrow(/kind flavor/);
    await expect(computeCostRollups(db, 999_999)).rejects.toThrow(/does not exist/);
  });

  it('integrates run-rates over time per UTC day, capping gaps (live and from cost_daily alike)', async () => {
    const byKind = async () =>
      (await dailyCosts(db, { fromDay: '2025-03-09', toDay: '2025-03-10', dimension: 'kind', now: NOW })).map((r) => [r.day, r.group_value, r.currency, dec(r.cost)]);
    // 03-09: TP (23:00, i1 2.50) holds until 01:00 (cap 2 h): 1 h on each side of midnight.
    // 03-10 instances EUR: 2.50 x 1 (TP) + 11.50 x 1 (T0) + 11.50 x 2 (T1, 5 h gap capped) + 7.50 x 1 (T2) + 7.50 x 0.5 (T3 to now) = 48.25
    //   (T0/T1: i1 2.50 + i2 4.00 + i5 2.50 + i6 2.50 = 11.50; T2/T3: i1 + i5 + i7 = 7.50; the incomplete 16:30 snapshot is ignored)
    // cluster: 5.00 x 2 (T0, 7 h gap capped at 2 h) + 5.00 x 0.5 = 12.50; Kubernetes: 1.20 x 7 (within its 12 h cap) + 1.20 x 0.5 = 9.00
    // USD: j1 3.00 x (1 + 2 + 1 + 0.5) = 13.50
    const expected = [
      ['2025-03-09', 'instance', 'EUR', 2.5],
      ['2025-03-10', 'cluster', 'EUR', 12.5],
      ['2025-03-10', 'instance', 'EUR', 48.25],
      ['2025-03-10', 'instance', 'USD', 13.5],
      ['2025-03-10', 'instance', null, null], // unpriced: unknown, never 0
      ['2025-03-10', 'k8s_price', 'EUR', 9],
    ];
    const sortRows = (rows: unknown[][]) => [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    expect(sortRows(await byKind())).toEqual(sortRows(expected));

    // The same from cost_daily once the days are sealed.
    await refreshCostDaily(db, { fromDay: '2025-03-09', toDay: '2025-03-10' }, { now: NOW });
    const written = await db.query<{ n: number }>("select count(*)::int as n from cost_daily where dimension = 'kind'");
    expect(written[0]!.n).toBeGreaterThan(0);
    await db.execute("insert into cost_daily_sealed_days (day) values ('2025-03-09'), ('2025-03-10')");
    try {
      expect(sortRows(await byKind())).toEqual(sortRows(expected));
    } finally {
      await db.execute('delete from cost_daily_sealed_days');
    }
  });

  it('counts resources lacking a tag key as (untagged) over time, also in snapshots without the key', async () => {
    const rows = async (dimension: string) =>
      (await dailyCosts(db, { fromDay: '2025-03-10', toDay: '2025-03-10', dimension, now: NOW }))
        .filter((r) => r.currency === 'EUR')
        .map((r) => [r.group_value, dec(r.cost)]);
    // ml: i1 2.50 x 5.5 h + i6 2.50 x 3 h + cluster 12.50 = 33.75; "ML ": i2 4.00 x 3 h = 12.00;
    // data: i7 2.50 x 1.5 h = 3.75; web: i3 stopped = 0; untagged: i5 2.50 x 4.5 h + Kubernetes 9.00 = 20.25.
    expect(await rows('tag:team')).toEqual([
      ['(untagged)', 20.25],
      ['ML ', 12],
      ['data', 3.75],
      ['ml', 33.75],
      ['web', 0],
    ]);
    // env exists only in the T3 snapshot (i1, 0.5 h): every other hour is untagged. 69.75 - 1.25 = 68.50.
    expect(await rows('tag:env')).toEqual([
      ['(untagged)', 68.5],
      ['prod', 1.25],
    ]);
    // A key nobody has: everything is untagged.
    expect(await rows('tag:nobody')).toEqual([['(untagged)', 69.75]]);
  });

  it('filters daily cost by kind and project, and honours explicit caps', async () => {
    const cluster = await dailyCosts(db, { fromDay: '2025-03-10', toDay: '2025-03-10', dimension: 'kind', kind: 'cluster', now: NOW });
    expect(cluster.map((r) => [r.group_value, dec(r.cost)])).toEqual([['cluster', 12.5]]);
    const project2 = await dailyCosts(db, { fromDay: '2025-03-10', toDay: '2025-03-10', dimension: 'kind', projectId: 2, now: NOW });
    expect(project2.map((r) => [r.currency, dec(r.cost)])).toEqual([['USD', 13.5], [null, null]]);
    // A 7 h cap for clusters lets T0 hold until T3: 5.00 x 7 + 5.00 x 0.5 = 37.50.
    const wide = await dailyCosts(db, { fromDay: '2025-03-10', toDay: '2025-03-10', dimension: 'kind', kind: 'cluster', now: NOW, maxGapHours: { cluster: 7 } });
    expect(wide.map((r) => dec(r.cost))).toEqual([37.5]);
    await expect(dailyCosts(db, { fromDay: '2025-03-11', toDay: '2025-03-10', dimension: 'kind' })).rejects.toThrow(/after/);
    await expect(dailyCosts(db, { fromDay: '2025-3-1', toDay: '2025-03-10', dimension: 'kind' })).rejects.toThrow(/YYYY-MM-DD/);
  });
});

describe('gap caps from schedules', () => {
  it('is the longest time between runs, doubled', () => {
    expect(cronGapHours('0 * * * *')).toBe(1);
    expect(cronGapHours('0 */6 * * *')).toBe(6);
    expect(cronGapHours('*/15 * * * *')).toBe(0.25);
    expect(cronGapHours('0 3 * * *')).toBe(24);
    expect(cronGapHours('0 1,2,20 * * *')).toBe(18);
    expect(maxGapHoursForSchedules({ instances: '0 * * * *', clusters: '30 * * * *', k8s_prices: '0 */6 * * *' })).toEqual({ instance: 2, cluster: 2, k8s_price: 12 });
  });
});

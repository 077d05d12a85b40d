/**
 * The dataset of the footing tests (footing.test.ts), made so that rounding each row on its
 * own does not add up to the rounded total:
 *
 * Gaps capped at 24 h; instance snapshots at 00:00 UTC on 2025-03-01 .. 03-10, and one more at
 * 03-10 03:20. NOW = 2025-03-10 08:00.
 * - p1-r1, EUR, flavor g-a 1.001/h (730.735/month, "1x A100": 1 GPU): teams a, b, c, one instance
 *   each. c is missing from the 03-10 00:00 snapshot and back at 03:20.
 *     a, b: 9 days x 24.024 + 8 h x 1.001 = 224.224 each (224 GPU-hours)
 *     c: 9 x 24.024 + 4 h 40 min x 1.001 = 216.216 + 4.671333... = 220.887333... (220.666... GPU-hours)
 *     total 669.335333... -> 669.34; rows rounded alone: 224.22 + 224.22 + 220.89 = 669.33 (a cent
 *     too few). Run-rate per month 3 x 730.735 = 2192.205 -> 2192.21, rows alone 3 x 730.74 =
 *     2192.22 (a cent too many).
 * - p2-r2, USD, flavor g-u 0.3335/h: teams x, y, one instance each, every snapshot:
 *     each 9 x 8.004 + 8 h x 0.3335 = 72.036 + 2.668 = 74.704 -> 74.70; total 149.408 -> 149.41,
 *     rows alone 149.40 (a cent too few).
 */
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instances, gpuFlavorsKept, instancesKept } from '../../src/db/schema.js';
import { addDays } from '../../src/reports/shared/format.js';
import { A, B, instance, run, snapshot } from './periods-fixture.js';

export const FOOTING_NOW = new Date('2025-03-10T08:00:00Z');
const C_BACK = new Date('2025-03-10T03:20:00Z');

export async function seedFooting(db: Database): Promise<void> {
  const flavorAt = new Date('2025-02-28T23:00:00Z');
  const runF = await run(db, flavorAt);
  const eur = await snapshot(db, runF, 'flavor', A, flavorAt);
  await bulkInsert(db, gpuFlavorsKept, [
    { snapshotId: eur, flavorId: 'f-g-a', flavorName: 'g-a', currencyCode: 'EUR', pricePerHour: '1.001', pricePerMonth: '730.735', priceStatus: 'show', projectId: 1, regionId: 1, hardware: { gpu: '1x A100' }, raw: {} },
  ]);
  const usd = await snapshot(db, runF, 'flavor', B, flavorAt);
  await bulkInsert(db, gpuFlavorsKept, [
    { snapshotId: usd, flavorId: 'f-g-u', flavorName: 'g-u', currencyCode: 'USD', pricePerHour: '0.3335', pricePerMonth: '243.455', priceStatus: 'show', projectId: 2, regionId: 2, hardware: { gpu: '1x A100' }, raw: {} },
  ]);
  const times: Date[] = [];
  for (let day = '2025-03-01'; day <= '2025-03-10'; day = addDays(day, 1)) times.push(new Date(`${day}T00:00:00Z`));
  times.push(C_BACK);
  const ids: number[] = [];
  for (const at of times) {
    const runId = await run(db, at);
    const a = await snapshot(db, runId, 'instance', A, at);
    const cMissing = at.getTime() === new Date('2025-03-10T00:00:00Z').getTime();
    await bulkInsert(db, instancesKept, [
      { snapshotId: a, ...instance(A, 'ia', 'g-a', 'a', true) },
      { snapshotId: a, ...instance(A, 'ib', 'g-a', 'b', true) },
      ...(cMissing ? [] : [{ snapshotId: a, ...instance(A, 'ic', 'g-a', 'c', true) }]),
    ]);
    const b = await snapshot(db, runId, 'instance', B, at);
    await bulkInsert(db, instancesKept, [
      { snapshotId: b, ...instance(B, 'jx', 'g-u', 'x', true) },
      { snapshotId: b, ...instance(B, 'jy', 'g-u', 'y', true) },
    ]);
    ids.push(a, b);
  }
  for (const id of ids) await computeCostRollups(db, id);
}


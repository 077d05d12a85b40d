/**
 * Two months and a half of daily snapshots for the period tests. Every amount the tests assert is
 * computed by hand from what is written here.
 *
 * The configuration caps a gap at 24 h, so each daily snapshot (00:00 UTC) prices its whole day.
 * NOW = 2025-03-10 12:00 UTC. Instance snapshots every day from 2025-01-16 to 2025-03-10, except
 * 02-10 and 02-11 (no snapshot: the 02-09 one holds until 02-10 00:00, then 48 h are uncovered).
 * January is sealed (cost_daily computed, the day recorded as sealed), as retention does.
 *
 * - p1-r1 (EUR: g-a100 2.50/h = 60/day, g-h100 4.00/h = 96/day):
 *     i1 {team: ml}  g-a100 ACTIVE every day
 *     i2 {team: web} g-h100 ACTIVE on the snapshots of 02-01 .. 02-28 only
 * - p2-r2 (USD: g-a100 3.00/h = 72/day):
 *     j1 {team: web} g-a100 ACTIVE, but SHUTOFF (costs 0) on 02-20 .. 02-28 and on 03-05
 *
 * Covered days: January 16 (01-16 .. 01-31), February 26 (all but 02-10, 02-11), March 9.5.
 * By team, per month:
 *   ml  EUR: Jan 16 x 60 = 960;   Feb 26 x 60 = 1560;  Mar 9 x 60 + 12 h x 2.50 = 570
 *   web EUR: Jan 0;               Feb 26 x 96 = 2496;  Mar 0
 *   web USD: Jan 16 x 72 = 1152;  Feb 17 x 72 = 1224 (02-01..09, 02-12..19);  Mar 8 x 72 + 12 h x 3 = 612
 */
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { refreshCostDaily } from '../../src/costing/derive/closed-days.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instances, snapshots, gpuFlavorsKept, instancesKept } from '../../src/db/schema.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { addDays } from '../../src/reports/shared/format.js';

export const PERIODS_NOW = new Date('2025-03-10T12:00:00Z');
export const FIRST_DAY = '2025-01-16';
export const MISSING_DAYS = ['2025-02-10', '2025-02-11'];

/** Gaps are capped at 24 h: one snapshot a day prices its day. */
export function periodsConfig(): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 24 }) });
}

export const A = { scopeKey: 'p1-r1', projectId: 1, regionId: 1 };
export const B = { scopeKey: 'p2-r2', projectId: 2, regionId: 2 };

export async function run(db: Database, at: Date): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    `insert into collection_runs (trigger, collectors, started_at, finished_at, heartbeat_at, status, counts, errors, runner_id)
     values ('schedule', '{instances,flavors}', $1, $1, $1, 'succeeded', '{}', '[]', 'test') returning id`,
    [at],
  );
  return row!.id;
}

export async function snapshot(db: Database, runId: number, kind: 'instance' | 'flavor', scope: typeof A, at: Date): Promise<number> {
  const [row] = await db.db
    .insert(snapshots)
    .values({ runId, kind, scopeKey: scope.scopeKey, projectId: scope.projectId, regionId: scope.regionId, takenAt: at, complete: true, rowCount: 0 })
    .returning({ id: snapshots.id });
  return row!.id;
}

export function instance(scope: typeof A, id: string, flavor: string, team: string, active: boolean) {
  return {
    instanceId: id,
    name: id,
    status: active ? 'ACTIVE' : 'SHUTOFF',
    vmState: active ? 'active' : 'stopped',
    flavorId: `f-${flavor}`,
    flavorName: flavor,
    projectId: scope.projectId,
    regionId: scope.regionId,
    region: `region-${scope.regionId}`,
    tags: { team },
    raw: { id },
  };
}

/** The flavor lists, taken at `flavorAt`: p1-r1 g-a100 2.50 EUR/h and g-h100 4.00 EUR/h, p2-r2 g-a100 3.00 USD/h. */
export async function seedPeriodFlavors(db: Database, flavorAt: Date): Promise<void> {
  const runF = await run(db, flavorAt);
  const eur = await snapshot(db, runF, 'flavor', A, flavorAt);
  await bulkInsert(db, gpuFlavorsKept, [
    { snapshotId: eur, flavorId: 'f-g-a100', flavorName: 'g-a100', currencyCode: 'EUR', pricePerHour: '2.50', pricePerMonth: '1825', priceStatus: 'show', projectId: 1, regionId: 1, raw: {} },
    { snapshotId: eur, flavorId: 'f-g-h100', flavorName: 'g-h100', currencyCode: 'EUR', pricePerHour: '4.00', pricePerMonth: '2920', priceStatus: 'show', projectId: 1, regionId: 1, raw: {} },
  ]);
  const usd = await snapshot(db, runF, 'flavor', B, flavorAt);
  await bulkInsert(db, gpuFlavorsKept, [
    { snapshotId: usd, flavorId: 'f-g-a100', flavorName: 'g-a100', currencyCode: 'USD', pricePerHour: '3.00', pricePerMonth: '2190', priceStatus: 'show', projectId: 2, regionId: 2, raw: {} },
  ]);
}

export async function seedPeriods(db: Database): Promise<void> {
  await seedPeriodFlavors(db, new Date(`${addDays(FIRST_DAY, -1)}T23:00:00Z`));
  const ids: number[] = [];
  for (let day = FIRST_DAY; day <= '2025-03-10'; day = addDays(day, 1)) {
    if (MISSING_DAYS.includes(day)) continue;
    const at = new Date(`${day}T00:00:00Z`);
    const runId = await run(db, at);
    const february = day >= '2025-02-01' && day <= '2025-02-28';
    const a = await snapshot(db, runId, 'instance', A, at);
    await bulkInsert(db, instancesKept, [
      { snapshotId: a, ...instance(A, 'i1', 'g-a100', 'ml', true) },
      ...(february ? [{ snapshotId: a, ...instance(A, 'i2', 'g-h100', 'web', true) }] : []),
    ]);
    const b = await snapshot(db, runId, 'instance', B, at);
    const stopped = (day >= '2025-02-20' && day <= '2025-02-28') || day === '2025-03-05';
    await bulkInsert(db, instancesKept, [{ snapshotId: b, ...instance(B, 'j1', 'g-a100', 'web', !stopped) }]);
    ids.push(a, b);
  }
  for (const id of ids) await computeCostRollups(db, id);
  // January sealed, as retention does before thinning: its figures now come from cost_daily.
  await refreshCostDaily(db, { fromDay: FIRST_DAY, toDay: '2025-01-31' }, { now: PERIODS_NOW, maxGapHours: 24 });
  await db.execute(`insert into cost_daily_sealed_days (day) select d::date from generate_series($1::date, '2025-01-31'::date, interval '1 day') d`, [FIRST_DAY]);
}

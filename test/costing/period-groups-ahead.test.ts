/**
 * The overview reads its groups ahead, before it knows whether the period and the one before it
 * are covered (periodGroups' everyRowAhead): what it then answers must be what the statement of
 * what is known answers, for every case of knowledge. The history is periods-fixture.ts, where
 * the web team's EUR spend is in February only: a group only the previous period has, when the
 * period is March. The overview also hands periodGroups the grouping's cost per day it reads for
 * its chart (currentDays): the period's spend summed from them must be the integrated one, digit
 * for digit, GPU figures included (on the allocation fixture, which has GPUs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { dailyCostsFor } from '../../src/costing/cost-over-time.js';
import { periodGroups, type PeriodGroupsInput } from '../../src/costing/period-groups.js';
import type { Database } from '../../src/db/connection.js';
import { testDatabases } from '../helpers/databases.js';
import { ALLOCATION_NOW, allocationConfig, seedAllocation } from '../reports/allocation-fixture.js';
import { PERIODS_NOW, seedPeriods } from '../reports/periods-fixture.js';

const config = loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 24 }) });
const ORDER = 'currency asc nulls last, price_per_hour desc, cost desc, group_value';

const CASES = [
  { name: 'both periods known and comparable', current: true, previous: true, comparable: true },
  { name: 'both known, not comparable', current: true, previous: true, comparable: false },
  { name: 'the previous period unknown', current: true, previous: false, comparable: false },
  { name: 'the period unknown', current: false, previous: true, comparable: false },
];

describe.each(testDatabases())('groups read ahead on $name', (database) => {
  let db: Database;
  beforeAll(async () => {
    db = await database.open();
    await seedPeriods(db);
  }, 120_000);
  afterAll(() => db?.close());

  const input = (known: (typeof CASES)[number]): PeriodGroupsInput => ({
    dimension: 'tag:team',
    filter: {},
    range: { fromDay: '2025-03-01', toDay: '2025-03-10' },
    previous: { fromDay: '2025-02-01', toDay: '2025-02-10' },
    currentKnown: known.current,
    previousKnown: Promise.resolve(known.previous),
    comparable: known.comparable,
  });

  it.each(CASES)('answers as the statement of what is known does when $name', async (known) => {
    const ctx = { db, config, now: PERIODS_NOW };
    const plain = await (await periodGroups(ctx, input(known))).everyRow(ORDER);
    const ahead = await (await periodGroups(ctx, { ...input(known), everyRowAhead: ORDER })).everyRow(ORDER);
    expect(plain.rows.length).toBeGreaterThan(0);
    expect(ahead).toEqual(plain);
  });

  it('has a group only in the previous period, which the read ahead must drop when that period is unknown', async () => {
    const ctx = { db, config, now: PERIODS_NOW };
    const known = await (await periodGroups(ctx, input(CASES[0]!))).everyRow(ORDER);
    expect(known.rows.some((r) => r.current_group === false)).toBe(true);
    const previousUnknown = await (await periodGroups(ctx, { ...input(CASES[2]!), everyRowAhead: ORDER })).everyRow(ORDER);
    expect(previousUnknown.rows.some((r) => r.current_group === false)).toBe(false);
    expect(previousUnknown.rows.every((r) => r.previous_cost === null && r.change_percent === null)).toBe(true);
  });

  it.each(CASES)('sums the period from the grouping\'s days when given them (the overview), digit for digit, when $name', async (known) => {
    const ctx = { db, config, now: PERIODS_NOW };
    for (const dimension of ['tag:team', 'flavor']) {
      const plain = await (await periodGroups(ctx, { ...input(known), dimension })).everyRow(ORDER);
      // Days beyond the period on both sides: only the period's are summed.
      const days = dailyCostsFor(db, config, PERIODS_NOW, dimension, '2025-02-20', '2025-03-10', {}, { withSeconds: true });
      for (const everyRowAhead of [undefined, ORDER]) {
        const summed = await (await periodGroups(ctx, { ...input(known), dimension, everyRowAhead, currentDays: days })).everyRow(ORDER);
        expect({ dimension, everyRowAhead, ...summed }).toEqual({ dimension, everyRowAhead, ...plain });
      }
      if (known.current) expect(plain.rows.some((r) => Number(r.cost) > 0)).toBe(true);
    }
  });

  it('sums GPU-hours, their cost and the hours of unknown GPU counts from the days too (the allocation fixture\'s GPUs)', async () => {
    const gpuDb = await database.open();
    try {
      await seedAllocation(gpuDb);
      const ctx = { db: gpuDb, config: allocationConfig([]), now: ALLOCATION_NOW };
      const gpuInput: PeriodGroupsInput = { dimension: 'tag:team', filter: {}, range: { fromDay: '2025-03-01', toDay: '2025-03-02' }, previous: { fromDay: '2025-02-27', toDay: '2025-02-28' }, previousKnown: true };
      const plain = await (await periodGroups(ctx, gpuInput)).everyRow(ORDER);
      const days = dailyCostsFor(gpuDb, ctx.config, ALLOCATION_NOW, 'tag:team', '2025-02-25', '2025-03-02', {}, { withSeconds: true });
      const summed = await (await periodGroups(ctx, { ...gpuInput, everyRowAhead: ORDER, currentDays: days })).everyRow(ORDER);
      expect(summed).toEqual(plain);
      // What is compared: GPU-hours and their cost (gpu-hours.test.ts: ml EUR 48 GPU-hours for 133.20), and unknown GPU hours.
      const ml = plain.rows.find((r) => r.group_value === 'ml' && r.currency === 'EUR')!;
      expect([Number(ml.gpu_hours), Number(ml.gpu_cost)]).toEqual([48, 133.2]);
      expect(plain.totals.some((t) => Number(t.gpu_unknown_hours) > 0)).toBe(true);
    } finally {
      await gpuDb.close();
    }
  });
});

/**
 * The overview reads its groups ahead, before it knows whether the period and the one before it
 * are covered (periodGroups' everyRowAhead): what it then answers must be what the statement of
 * what is known answers, for every case of knowledge. The history is periods-fixture.ts, where
 * the web team's EUR spend is in February only: a group only the previous period has, when the
 * period is March.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { periodGroups, type PeriodGroupsInput } from '../../src/costing/period-groups.js';
import type { Database } from '../../src/db/connection.js';
import { testDatabases } from '../helpers/databases.js';
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
});

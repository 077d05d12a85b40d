/**
 * The daily-history forecast (overview, budgets and their alerts) and the overview's sparkline
 * leave out the days that snapshots do not cover in full: a day a collection partly missed is not
 * a day that cost less. On the periods fixture (NOW 2025-03-10 12:00, one snapshot a day, 24 h
 * cap) p1-r1's snapshot of 2025-03-06 is taken at 12:00 instead of 00:00, so 03-06 00:00 .. 12:00
 * is not covered: the forecast's window 03-03 .. 03-09 has 6 fully collected days.
 *
 * EUR (i1, 60/day): month to date 03-01 .. 03-09 = 8 x 60 + 30 (half of 03-06), plus 12 h x 2.50
 * today = 540; mean of the 6 full days = 60; 21.5 days left: 540 + 60 x 21.5 = 1830. Counting the
 * half day in the mean would give 540 + 390 / 7 x 21.5 = 1737.85...
 * USD (j1, 72/day, stopped on 03-05): the same 6 days, 5 x 72 + 0 = 360, mean 60; month to date
 * 8 x 72 (03-01 .. 03-09 less 03-05) + 12 h x 3 = 612; 612 + 60 x 21.5 = 1902.
 * After collection stopped (no snapshot after 03-07), the days without any data are left out alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { budgetsReport } from '../../src/reports/budgets.js';
import { deleteSnapshots } from '../../src/db/delete-snapshots.js';
import { overviewReport } from '../../src/reports/overview.js';
import { testDatabases } from '../helpers/databases.js';
import { run, summaryValue } from './helpers.js';
import { PERIODS_NOW, seedPeriods } from './periods-fixture.js';

const config = () =>
  loadConfig(
    { CLOUDTALLY_CONFIG: 'test.json' },
    { readFile: () => JSON.stringify({ cost_max_gap_hours: 24, budgets: [{ name: 'EUR total', currency: 'EUR', amount_per_month: '1700' }] }) },
  );

describe.each(testDatabases())('the forecast over days a collection missed, on $name', (database) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  async function open(missDay: boolean): Promise<Database> {
    const opened = await database.open();
    await seedPeriods(opened);
    if (missDay) {
      // Collected 12 h late that day (the rollups carry the snapshot's time too).
      const late = `(select id from snapshots where kind = 'instance' and scope_key = 'p1-r1' and taken_at = '2025-03-06T00:00:00Z')`;
      await opened.execute(`update cost_rollups set taken_at = '2025-03-06T12:00:00Z' where snapshot_id = ${late}`);
      await opened.execute(`update snapshots set taken_at = '2025-03-06T12:00:00Z' where id = ${late}`);
    }
    return opened;
  }

  it('averages the fully collected days only, says which were left out, and the budget follows', async () => {
    db = await open(true);
    const ctx = { db, config: config(), now: PERIODS_NOW };
    const overview = await run(overviewReport, ctx, {});
    expect(Number(summaryValue(overview, 'Month to date 2025-03 (EUR)'))).toBe(540);
    expect(Number(summaryValue(overview, 'Projected 2025-03, daily history (EUR)'))).toBe(1830);
    expect(Number(summaryValue(overview, 'Projected 2025-03, daily history (USD)'))).toBe(1902);
    const hint = overview.summary.find((s) => s.label === 'Projected 2025-03, daily history (EUR)')!.hint;
    expect(hint).toContain('the mean of 6 fully collected days of the last 7');
    expect(overview.notes.join(' ')).toContain('made from 6 of the last 7 complete days: 2025-03-06 was not fully collected');
    // The sparkline leaves the day out too (its partial cost would read as a drop), and keeps its neighbours.
    const days = overview.headline!.kpis.find((k) => k.currency === 'EUR')!.sparkline.map((p) => p.day);
    expect(days).toEqual(expect.arrayContaining(['2025-03-05', '2025-03-07']));
    expect(days).not.toContain('2025-03-06');

    // The budget's forecast (and so its "at risk" status and forecast alerts) is the same figure.
    const budgets = await run(budgetsReport, ctx, {});
    const eur = budgets.rows.find((r) => r.budget === 'EUR total')!;
    expect(Number(eur.forecast)).toBe(1830);
    expect(eur.status).toBe('at risk');
    expect(budgets.notes.join(' ')).toContain('2025-03-06 was not fully collected');
  });

  it('leaves out the days after collection stopped (nothing covers them), not counting them as 0', async () => {
    // The last collection of every scope on 03-07 00:00: 03-08 and 03-09 have no data at all.
    // EUR: month to date 7 x 60 = 420; mean of 03-03 .. 03-07 = 60: 420 + 60 x 21.5 = 1710 (as 0s: 1341.43).
    // USD: 03-03 .. 03-07 = 72 + 72 + 0 + 72 + 72 = 288, mean 57.6; month to date 6 x 72 = 432: 432 + 57.6 x 21.5 = 1670.4.
    db = await database.open();
    await seedPeriods(db);
    await db.transaction((tx) => deleteSnapshots(tx, `s.taken_at >= '2025-03-08T00:00:00Z'`));
    const overview = await run(overviewReport, { db, config: config(), now: PERIODS_NOW }, {});
    expect(Number(summaryValue(overview, 'Month to date 2025-03 (EUR)'))).toBe(420);
    expect(Number(summaryValue(overview, 'Projected 2025-03, daily history (EUR)'))).toBe(1710);
    expect(Number(summaryValue(overview, 'Projected 2025-03, daily history (USD)'))).toBe(1670.4);
    expect(overview.notes.join(' ')).toContain('made from 5 of the last 7 complete days: 2025-03-08, 2025-03-09 were not fully collected');
    const budgets = await run(budgetsReport, { db, config: config(), now: PERIODS_NOW }, {});
    expect(Number(budgets.rows.find((r) => r.budget === 'EUR total')!.forecast)).toBe(1710);
  });

  it('uses all 7 days, and says nothing, when every day was collected', async () => {
    db = await open(false);
    const overview = await run(overviewReport, { db, config: config(), now: PERIODS_NOW }, {});
    // 9 x 60 + 30 = 570, mean 60: 570 + 60 x 21.5 = 1860.
    expect(Number(summaryValue(overview, 'Projected 2025-03, daily history (EUR)'))).toBe(1860);
    expect(overview.summary.find((s) => s.label === 'Projected 2025-03, daily history (EUR)')!.hint).toContain('the mean of the last 7 complete days');
    expect(overview.notes.join(' ')).not.toContain('not fully collected');
  });
});

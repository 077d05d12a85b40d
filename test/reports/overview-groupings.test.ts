/**
 * The overview's figures per currency (month to date, both projections, the forecast's range,
 * the headline's spend, change and sparkline) are read from the chosen grouping's cost per day
 * (every group summed): they must not depend on the grouping. Every grouping puts each priced
 * resource in exactly one group, untagged ones included, so any other figure would be a bug in
 * the integration. On the known dataset (two scopes, a tag present only on the last snapshot, a
 * stopped instance, unpriced ones) and the periods fixture (ten days of history, with the forecast
 * and the sparkline, and a day collected 12 h late that both must leave out). A period apart
 * from the last weeks is read alone, the figures per currency then from the `kind` dimension: the
 * figures must not move with the period either. The groups' spend in a period, summed from the
 * overview's cost per day, must be the cost report's (which integrates it on its own), exactly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { costReport } from '../../src/reports/cost.js';
import { overviewReport } from '../../src/reports/overview.js';
import type { ReportOutput } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { contextFor, run, type Ctx } from './helpers.js';
import { seedKnownDataset } from './fixture.js';
import { PERIODS_NOW, seedPeriods } from './periods-fixture.js';

const GROUPINGS = ['kind', 'project', 'region', 'flavor', 'state', 'tag:team', 'tag:env', 'tag:cost.center'];

/** What the overview says per currency, whatever the grouping; sparkline points as chart numbers (summed in floating point). */
function perCurrency(output: ReportOutput) {
  return {
    summary: output.summary.map((s) => ({ label: s.label, value: s.value, hint: s.hint ?? null })),
    kpis: (output.headline?.kpis ?? []).map(({ sparkline, ...kpi }) => ({ ...kpi, sparkline: sparkline.map((p) => ({ day: p.day, cost: Number(p.cost.toFixed(9)) })) })),
  };
}

describe.each(testDatabases())('the overview per currency under every grouping, on $name', (database) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  async function expectSameUnderEveryGrouping(ctx: Ctx, query: Record<string, string>): Promise<ReturnType<typeof perCurrency>> {
    const byKind = perCurrency(await run(overviewReport, ctx, { ...query, by: 'kind' }));
    for (const by of GROUPINGS) expect({ by, ...perCurrency(await run(overviewReport, ctx, { ...query, by })) }).toEqual({ by, ...byKind });
    return byKind;
  }

  it('on the known dataset: month to date, run-rate projection and headline', async () => {
    db = await database.open();
    await seedKnownDataset(db);
    const figures = await expectSameUnderEveryGrouping(contextFor(db), {});
    // Not empty: both currencies have their month to date.
    expect(figures.summary.filter((s) => s.label.startsWith('Month to date') && Number(s.value) > 0).map((s) => s.label)).toEqual(['Month to date 2025-03 (EUR)', 'Month to date 2025-03 (USD)']);
    await expectSameUnderEveryGrouping(contextFor(db), { period: '2025-03' });
  });

  it('on ten days of history with a day collected late: the forecast, its range and the sparkline', async () => {
    db = await database.open();
    await seedPeriods(db);
    const late = `(select id from snapshots where kind = 'instance' and scope_key = 'p1-r1' and taken_at = '2025-03-06T00:00:00Z')`;
    await db.execute(`update cost_rollups set taken_at = '2025-03-06T12:00:00Z' where snapshot_id = ${late}`);
    await db.execute(`update snapshots set taken_at = '2025-03-06T12:00:00Z' where id = ${late}`);
    const ctx = { db, config: loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 24 }) }), now: PERIODS_NOW };
    const figures = await expectSameUnderEveryGrouping(ctx, {});
    // The figures forecast-gaps.test.ts works out by hand: the late day left out of mean and sparkline.
    expect(Number(figures.summary.find((s) => s.label === 'Projected 2025-03, daily history (EUR)')!.value)).toBe(1830);
    const eur = figures.kpis.find((k) => k.currency === 'EUR')!;
    expect(eur.sparkline.map((p) => p.day)).toEqual(expect.arrayContaining(['2025-03-05', '2025-03-07']));
    expect(eur.sparkline.map((p) => p.day)).not.toContain('2025-03-06');
    await expectSameUnderEveryGrouping(ctx, { days: '7' });

    // The month to date, the projections and the sparkline do not depend on the period: a period
    // whose days meet the figures' (February: one read) and one apart from them (January: its own read).
    const notPeriod = (f: ReturnType<typeof perCurrency>) => ({
      summary: f.summary.filter((s) => s.label.startsWith('Month to date') || s.label.startsWith('Projected')),
      sparklines: f.kpis.map((k) => [k.currency, k.sparkline]),
    });
    for (const period of ['2025-02', '2025-01']) expect({ period, ...notPeriod(await expectSameUnderEveryGrouping(ctx, { period })) }).toEqual({ period, ...notPeriod(figures) });

    // The groups' spend in the period (summed from the overview's cost per day where they cover it)
    // is the cost report's, digit for digit, and so are the totals.
    const periods: Array<Record<string, string>> = [{}, { period: '2025-02' }, { period: '2025-03' }, { from: '2025-02-25', to: '2025-03-10' }];
    for (const period of periods) {
      for (const by of ['tag:team', 'flavor']) {
        const overview = await run(overviewReport, ctx, { ...period, by });
        const cost = await run(costReport, ctx, { ...period, by });
        const spend = (rows: readonly Record<string, unknown>[]) => rows.map((r) => [r.group, r.currency, r.cost]).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
        // The overview leaves out groups only the previous period had (no spend in this one, nothing running now).
        const listed = new Set(overview.rows.map((r) => JSON.stringify([r.group, r.currency])));
        const onlyBefore = cost.rows.filter((r) => !listed.has(JSON.stringify([r.group, r.currency])));
        expect(onlyBefore.every((r) => Number(r.cost) === 0 && Number(r.price_per_hour) === 0)).toBe(true);
        const costListed = cost.rows.filter((r) => listed.has(JSON.stringify([r.group, r.currency])));
        expect({ period, by, rows: spend(overview.rows), totals: spend(overview.totals ?? []) }).toEqual({ period, by, rows: spend(costListed), totals: spend(cost.totals ?? []) });
        expect(overview.rows.some((r) => Number(r.cost) > 0)).toBe(true);
      }
    }
  });
});

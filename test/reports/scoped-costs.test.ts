/**
 * A team-scoped user's cost figures (issue 28 item 2): summed from the cost partitions of their
 * scope's resources (costing/partitions.ts), they equal to the last digit what an unscoped user
 * reads for that team's group, whatever the grouping, in every cost report; a scope of two values
 * is the exact sum of both; the figures are the same whether the partitions were written with
 * each snapshot or afterwards for the history, and before or after the days are closed. Budgets
 * show a scoped user only their own groups' budgets.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { accessScopeOf, type AccessScope } from '../../src/auth/access-scope.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { closeCompleteDays } from '../../src/costing/derive/closed-days.js';
import { ensurePartitionKeys } from '../../src/costing/derive/partition-keys.js';
import { gapCapsFor } from '../../src/costing/gap-caps.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { anomaliesReport } from '../../src/reports/anomalies.js';
import { budgetsReport } from '../../src/reports/budgets.js';
import { costReport } from '../../src/reports/cost.js';
import { monthlyReport } from '../../src/reports/monthly.js';
import { overviewReport } from '../../src/reports/overview.js';
import type { Row } from '../../src/reports/report.js';
import { tagHygieneReport } from '../../src/reports/tag-hygiene.js';
import { trendReport } from '../../src/reports/trend.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset } from './fixture.js';
import { exportRows, run } from './helpers.js';

function scopedTestConfig(): Config {
  return loadConfig(
    { CLOUDTALLY_CONFIG: 'test.json' },
    {
      readFile: () =>
        JSON.stringify({
          budgets: [
            { name: 'Everything in EUR', currency: 'EUR', amount_per_month: '100' },
            { name: 'ML team', by: 'tag:team', value: 'ml', currency: 'EUR', amount_per_month: '40' },
            { name: 'Web team', by: 'tag:team', value: 'web', currency: 'EUR', amount_per_month: '30' },
            { name: 'Project 1', by: 'project', value: '1', currency: 'EUR', amount_per_month: '50' },
          ],
        }),
    },
  );
}

const scope = (...values: string[]): AccessScope => accessScopeOf({ by: 'tag:team', values });

/** Exact decimal sum of decimal texts (BigInt at 30 decimals: no float ever). */
function addDecimals(values: ReadonlyArray<string | null | undefined>): string {
  const SCALE = 30;
  let sum = 0n;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    const [int, frac = ''] = v.replace('-', '').split('.');
    const n = BigInt(int! + frac.padEnd(SCALE, '0'));
    sum += v.startsWith('-') ? -n : n;
  }
  const text = sum.toString().padStart(SCALE + 1, '0');
  const out = `${text.slice(0, -SCALE)}.${text.slice(-SCALE)}`.replace(/\.?0+$/, '');
  return out === '' ? '0' : out;
}

/** Per currency: the exact sum of `key` over `rows`. */
function sumsByCurrency(rows: readonly Row[], key: string): Record<string, string> {
  const out: Record<string, string[]> = {};
  for (const r of rows) if (r.currency !== null && r[key] !== null && r[key] !== undefined) (out[String(r.currency)] ??= []).push(String(r[key]));
  return Object.fromEntries(Object.entries(out).map(([c, v]) => [c, addDecimals(v)]));
}

const costOf = (rows: readonly Row[], group: string): Record<string, string> => sumsByCurrency(rows.filter((r) => r.group === group), 'cost');

describe.each(testDatabases())('team-scoped cost figures on $name', (database) => {
  let db: Database | undefined;
  afterEach(async () => {
    await db?.close();
    db = undefined;
  });

  /** The known dataset with the `team` key's partitions written with each snapshot, or afterwards for the history. */
  async function open(keysFirst: boolean): Promise<Database> {
    const opened = await database.open();
    if (keysFirst) await ensurePartitionKeys(opened, ['team'], silentLogger());
    await seedKnownDataset(opened);
    if (!keysFirst) await ensurePartitionKeys(opened, ['team'], silentLogger());
    return opened;
  }

  const ctxOf = (d: Database, s: AccessScope | null) => ({ db: d, config: scopedTestConfig(), now: NOW, scope: s });

  /** Every cost figure a scoped user reads, for comparing two databases or two moments. */
  async function scopedFigures(d: Database, s: AccessScope): Promise<unknown> {
    const ctx = ctxOf(d, s);
    const [byTeam, byProject, byKind, overview, monthly, trend] = await Promise.all([
      run(costReport, ctx, { by: 'tag:team', period: 'mtd' }),
      run(costReport, ctx, { by: 'project', period: 'mtd' }),
      exportRows(costReport, ctx, { by: 'kind', period: 'mtd' }),
      run(overviewReport, ctx, {}),
      run(monthlyReport, ctx, { by: 'project' }),
      run(trendReport, ctx, { by: 'flavor', measure: 'daily-cost', days: '3' }),
    ]);
    return { byTeam: byTeam.rows, byTeamTotals: byTeam.totals, byProject: byProject.totals, byKind, overview: [overview.headline, overview.totals, overview.summary], monthly: monthly.totals, trend: trend.rows };
  }

  it('equal, in every cost report and grouping, the unscoped figures of the team\'s group, to the last digit', async () => {
    db = await open(true);
    const everyone = ctxOf(db, null);
    const mia = ctxOf(db, scope('ml'));
    const teams = await run(costReport, everyone, { by: 'tag:team', period: 'mtd' });
    const ml = costOf(teams.rows, 'ml');
    expect(Object.keys(ml).length).toBeGreaterThan(0);
    expect(Object.values(ml).every((v) => v !== '0')).toBe(true);
    // Other teams and untagged resources cost too: the scope makes a difference.
    expect(sumsByCurrency(teams.totals ?? [], 'cost')).not.toEqual(ml);

    const mine = await run(costReport, mia, { by: 'tag:team', period: 'mtd' });
    expect(mine.rows.map((r) => r.group)).toEqual(['ml']);
    expect(sumsByCurrency(mine.rows, 'cost')).toEqual(ml);
    for (const by of ['project', 'region', 'kind', 'flavor', 'state']) {
      const within = await run(costReport, mia, { by, period: 'mtd' });
      expect(sumsByCurrency(within.totals ?? [], 'cost'), by).toEqual(ml);
      expect(within.notes.join(' ')).toContain('team = ml');
    }
    // The run-rate too: the team's current run-rate per currency.
    const rates = sumsByCurrency(teams.rows.filter((r) => r.group === 'ml'), 'price_per_hour');
    expect(sumsByCurrency(mine.rows, 'price_per_hour')).toEqual(rates);

    // The overview's totals, the monthly report's and the trend's cost per day.
    const overview = await run(overviewReport, mia, { by: 'project' });
    expect(sumsByCurrency(overview.totals ?? [], 'cost')).toEqual(ml);
    const adamsMonth = await run(monthlyReport, everyone, { by: 'tag:team' });
    const miasMonth = await run(monthlyReport, mia, { by: 'region' });
    const month = NOW.toISOString().slice(0, 7);
    expect(sumsByCurrency(miasMonth.totals ?? [], month)).toEqual(sumsByCurrency(adamsMonth.rows.filter((r) => r.group === 'ml'), month));
    const adamsDays = await run(trendReport, everyone, { by: 'tag:team', measure: 'daily-cost', days: '3' });
    const miasDays = await run(trendReport, mia, { by: 'kind', measure: 'daily-cost', days: '3' });
    for (const day of new Set(adamsDays.rows.map((r) => String(r.day)))) {
      expect(sumsByCurrency(miasDays.rows.filter((r) => r.day === day), 'cost'), day).toEqual(sumsByCurrency(adamsDays.rows.filter((r) => r.day === day && r.group === 'ml'), 'cost'));
    }
    // Anomalies read the same partitions (no history to flag here: the answer is the scoped one, without error).
    const anomalies = await run(anomaliesReport, mia, { by: 'tag:team' });
    expect(anomalies.notes.join(' ')).toContain('team = ml');
  });

  it('a scope of two values is the exact sum of both teams; a value no resource has costs nothing', async () => {
    db = await open(true);
    const teams = await run(costReport, ctxOf(db, null), { by: 'tag:team', period: 'mtd' });
    const both = await run(costReport, ctxOf(db, scope('ml', 'web')), { by: 'project', period: 'mtd' });
    const expected = sumsByCurrency(teams.rows.filter((r) => r.group === 'ml' || r.group === 'web'), 'cost');
    expect(sumsByCurrency(both.totals ?? [], 'cost')).toEqual(expected);
    const nobody = await run(costReport, ctxOf(db, scope('nobody')), { by: 'project', period: 'mtd' });
    expect(nobody.rows).toEqual([]);
  });

  it('gives the same figures whether the partitions were written with each snapshot or afterwards, and before or after the days are closed', async () => {
    db = await open(true);
    const live = await scopedFigures(db, scope('ml'));
    await closeCompleteDays(db, { now: NOW, maxGapHours: gapCapsFor(scopedTestConfig()) });
    expect(await scopedFigures(db, scope('ml'))).toEqual(live);
    await db.close();
    db = await open(false);
    expect(await scopedFigures(db, scope('ml'))).toEqual(live);
    const [key] = await db.query<{ complete_from: string }>(`select complete_from::text from cost_partition_keys where key = 'team'`);
    expect(key!.complete_from).toBe('-infinity');
  });

  it("tag hygiene counts the scope's resources only: every one carries the scope's key, with its one value", async () => {
    db = await open(true);
    const everyone = await run(tagHygieneReport, ctxOf(db, null), {});
    const mine = await run(tagHygieneReport, ctxOf(db, scope('ml')), {});
    const team = (o: { rows: Row[] }) => o.rows.find((r) => r.key === 'team')!;
    expect(team(everyone).lacking).toBeGreaterThan(0);
    expect(team(everyone).values).toBeGreaterThan(1);
    expect(team(mine)).toMatchObject({ lacking: 0, values: 1 });
    expect(team(mine).resources).toBeLessThan(team(everyone).resources as number);
    // Every key counts the same resources: the scope's.
    for (const row of mine.rows) expect(row.resources, String(row.key)).toBe(team(mine).resources);
  });

  it('shows a scoped user only the budgets of their own groups, with the same figures as everyone sees', async () => {
    db = await open(true);
    const all = await run(budgetsReport, ctxOf(db, null), {});
    const mine = await run(budgetsReport, ctxOf(db, scope('ml')), {});
    expect(all.rows.map((r) => r.budget)).toEqual(expect.arrayContaining(['Everything in EUR', 'ML team', 'Web team', 'Project 1']));
    expect(mine.rows.map((r) => r.budget)).toEqual(['ML team']);
    expect(mine.rows[0]).toEqual(all.rows.find((r) => r.budget === 'ML team'));
  });
});

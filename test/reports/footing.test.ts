/**
 * Rounded outputs that foot, numbers rounded for their unit, one instant per answer and an exact
 * projection, over real HTTP, on the dataset of footing-fixture.ts, made so that rounding each row
 * on its own does not add up to the rounded total:
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
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { parseCsv } from '../web/fixtures.js';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instances, gpuFlavorsKept, instancesKept } from '../../src/db/schema.js';
import { FOOTING_NOW as NOW, seedFooting } from './footing-fixture.js';
import type { ReportsApp } from './helpers.js';
import { A, instance, periodsConfig, run, snapshot } from './periods-fixture.js';

/** Decimal text as an integer count of its last digit's unit at `digits` (exact: no float). */
function units(text: string, digits: number): bigint {
  expect(text, 'a rounded amount').toMatch(new RegExp(`^-?\\d+\\.\\d{${digits}}$`));
  return BigInt(text.replace('.', ''));
}

interface Table {
  header: string[];
  rows: string[][];
  totals: string[][];
}

function table(records: string[][]): Table {
  const [header, ...rest] = records.filter((r) => r.length > 1);
  return { header: header!, rows: rest.filter((r) => r[0] !== 'Total'), totals: rest.filter((r) => r[0] === 'Total') };
}

/** A spreadsheet's SUM of each money column per currency next to the file's Total row. */
function footing(t: Table, columns: readonly string[], digits: (column: string) => number): Array<[string, string, bigint, bigint]> {
  const currency = t.header.indexOf('Currency');
  const out: Array<[string, string, bigint, bigint]> = [];
  for (const total of t.totals) {
    for (const label of columns) {
      const i = t.header.indexOf(label);
      expect(i, label).toBeGreaterThanOrEqual(0);
      if (total[i] === '') continue;
      const sum = t.rows.filter((r) => r[currency] === total[currency] && r[i] !== '').reduce((s, r) => s + units(r[i]!, digits(label)), 0n);
      out.push([total[currency]!, label, sum, units(total[i]!, digits(label))]);
    }
  }
  return out;
}

describe.each(testDatabases())('footing, units and one instant on $name', (database) => {
  let app: ReportsApp;
  /** The reports' clock: each request moves it on by `tick` ms (0: it stands still). */
  let clock = NOW.getTime();
  let tick = 0;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, {
      seed: seedFooting,
      config: periodsConfig(),
      now: () => {
        const now = new Date(clock);
        clock += tick;
        return now;
      },
    }));
  });

  async function get(path: string): Promise<{ body: string; headers: Record<string, string | string[] | undefined> }> {
    const res = await request(`${app.base}${path}`);
    const body = (await res.body.text()).replace(/^\uFEFF/, '');
    expect(res.statusCode, body.slice(0, 300)).toBe(200);
    return { body, headers: res.headers };
  }
  const csv = async (path: string) => table(parseCsv((await get(path)).body));
  const cents = () => 2;

  it('the cost CSV foots: per currency and money column, the rows add up to the Total row', async () => {
    const t = await csv('/api/reports/cost.csv?by=tag%3Ateam');
    const sums = footing(t, ['Spend month to date (2025-03)', 'Run-rate per hour (now)', 'Run-rate per month (now)'], (c) => (c.includes('per hour') ? 4 : 2));
    for (const [currency, column, sum, total] of sums) expect(sum, `${currency} ${column}`).toBe(total);
    // The totals themselves are the exact sums, rounded: computed by hand (see the top).
    const total = (currency: string, column: string) => t.totals.find((r) => r[t.header.indexOf('Currency')] === currency)![t.header.indexOf(column)];
    expect([total('EUR', 'Spend month to date (2025-03)'), total('EUR', 'Run-rate per month (now)'), total('USD', 'Spend month to date (2025-03)')]).toEqual(['669.34', '2192.21', '149.41']);
    // Each row moves by less than a cent from its exact value: two of the three EUR run-rates per month are 730.73.
    const month = t.rows.filter((r) => r[t.header.indexOf('Currency')] === 'EUR').map((r) => r[t.header.indexOf('Run-rate per month (now)')]);
    expect(month.sort()).toEqual(['730.73', '730.74', '730.74']);
  });

  it('the monthly CSV foots per currency, for each month and the Total column', async () => {
    const t = await csv('/api/reports/monthly.csv?by=tag%3Ateam');
    // A month's label may say what it covers ("2025-03 (covered 200 of 744 h)", "Total (covered hours only)").
    const [month, totalColumn] = ['2025-03', 'Total'].map((prefix) => t.header.find((h) => h.startsWith(prefix))!);
    for (const [currency, column, sum, total] of footing(t, [month!, totalColumn!], cents)) expect(sum, `${currency} ${column}`).toBe(total);
    expect(t.totals.map((r) => r[t.header.indexOf(month!)])).toEqual(['669.34', '149.41']);
  });

  it('the overview CSV and the cost per day CSV foot too', async () => {
    const overview = await csv('/api/reports/overview.csv?by=tag%3Ateam');
    for (const [currency, column, sum, total] of footing(overview, ['Run-rate per month', 'Spend month to date (2025-03)'], cents)) expect(sum, `${currency} ${column}`).toBe(total);
    const daily = await csv('/api/reports/trend.csv?by=tag%3Ateam&measure=daily-cost&period=mtd');
    const [cost] = daily.header.filter((h) => /cost/i.test(h));
    for (const [currency, column, sum, total] of footing(daily, [cost!], cents)) expect(sum, `${currency} ${column}`).toBe(total);
  });

  it('the HTML table foots: its rows add up to its footer', async () => {
    const html = (await get('/reports/cost?by=tag%3Ateam&cols=all')).body;
    const cells = (tr: string) => [...tr.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[1]!.replace(/<[^>]+>/g, '').trim());
    const main = html.slice(html.indexOf('<table class="report-table'));
    const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(main)![1]!;
    const rows = [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((r) => cells(r[1]!));
    const foot = [...(/<tfoot>([\s\S]*?)<\/tfoot>/.exec(main)![1]!).matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((r) => cells(r[1]!));
    const amount = (text: string) => BigInt(text.replace(/[^\d-]/g, ''));
    // Columns: team, currency, spend, previous, change, per hour, per month (cols=all), ...
    for (const currency of ['EUR', 'USD']) {
      const mine = rows.filter((r) => r[1] === currency);
      const total = foot.find((r) => r[1] === currency)!;
      for (const column of [2, 6]) expect(mine.reduce((s, r) => s + amount(r[column]!), 0n), `${currency} column ${column}`).toBe(amount(total[column]!));
    }
  });

  it('rounds hours and GPU-hours to 2 decimals in the rounded CSV, and keeps them exact with exact=1', async () => {
    const t = await csv('/api/reports/cost.csv?by=tag%3Ateam');
    const gpu = t.header.indexOf('GPU-hours');
    const byTeam = Object.fromEntries(t.rows.map((r) => [r[0], r[gpu]]));
    expect([byTeam.a, byTeam.c, byTeam.x]).toEqual(['224.00', '220.67', '224.00']);
    const exact = await csv('/api/reports/cost.csv?by=tag%3Ateam&exact=1');
    expect(Number(exact.rows.find((r) => r[0] === 'c')![gpu])).toBeCloseTo(220 + 2 / 3, 9);
    const trend = await csv('/api/reports/trend.csv?by=tag%3Ateam&measure=daily-cost&period=mtd');
    const hours = trend.header.indexOf('Resource hours');
    expect(trend.rows.every((r) => /^\d+\.\d{2}$/.test(r[hours]!))).toBe(true);
  });

  describe('one instant per answer', () => {
    it('gives the same figures and the same "as of" in HTML, JSON and CSV seconds apart', async () => {
      tick = 7_000; // every request 7 s later
      try {
        const json = JSON.parse((await get('/api/reports/overview?by=tag%3Ateam')).body) as { generated_at: string; summary: Array<{ label: string; value: unknown }>; totals: Array<Record<string, unknown>> };
        const page = (await get('/reports/overview?by=tag%3Ateam')).body;
        const file = await get('/api/reports/overview.csv?by=tag%3Ateam&exact=1');
        const asOfPage = /class="computed">Figures as of <time datetime="([^"]+)"/.exec(page)?.[1];
        expect(asOfPage).toBe(json.generated_at);
        expect(file.headers['x-figures-as-of']).toBe(json.generated_at);
        const stamp = json.generated_at.slice(0, 19).replace(/:/g, '');
        expect(String(file.headers['content-disposition'])).toContain(`-${stamp}Z.csv`);
        const t = table(parseCsv(file.body));
        const spend = t.header.indexOf('Spend month to date (2025-03)');
        expect(t.totals.map((r) => Number(r[spend]))).toEqual(json.totals.map((r) => Number(r.cost)));
        const mtd = json.summary.find((s) => s.label === 'Month to date 2025-03 (EUR)')!.value as string;
        expect(page).toContain(`title="${mtd} EUR"`);
        // And the cost report at the same data version and window answers as of the same instant.
        const cost = JSON.parse((await get('/api/reports/cost?by=tag%3Ateam')).body) as { generated_at: string };
        expect(cost.generated_at).toBe(json.generated_at);
      } finally {
        tick = 0;
        clock = NOW.getTime();
      }
    });
  });
});

describe.each(testDatabases())('the projection on $name', (database) => {
  let app: ReportsApp;
  // Half a second into the hour: 1,871,999.5 s are left until 2025-04-01.
  const now = new Date('2025-03-10T08:00:00.500Z');
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedFooting, config: periodsConfig(), now }));
  });

  it('adds the run-rate for every second left in the month, the fraction included', async () => {
    const res = await request(`${app.base}/api/reports/overview`);
    const body = (await res.body.json()) as { summary: Array<{ label: string; value: string }> };
    const value = (label: string) => body.summary.find((s) => s.label === label)!.value;
    // EUR run-rate 3 x 1.001 = 3.003/h; 3.003 x 1,871,999.5 / 3600 = 1561.5595829166...
    // (Math.floor's 1,871,999 s would give 1561.5591658333...). Nothing changes until month end,
    // so the projection is the whole month's cost: a and b 744 h x 1.001 = 744.744 each, c
    // (3 h 20 min less) 740.666... h x 1.001 = 741.407333..., together 2230.895333...
    const added = Number(value('Projected 2025-03, run-rate method (EUR)')) - Number(value('Month to date 2025-03 (EUR)'));
    expect(added).toBeCloseTo(1561.5595829167, 8);
    expect(Number(value('Projected 2025-03, run-rate method (EUR)'))).toBeCloseTo(2230.8953333333, 8);
  });
});

/**
 * Two teams whose instances each ran 4 h 40 min a day on two days at 1.001/h: each day's cost is
 * 4.6713333... (16,800 s x 1.001 / 3600), a decimal without end, so any sum of figures divided
 * before they are added loses digits in its own way.
 */
async function seedThirds(db: Database): Promise<void> {
  const flavorAt = new Date('2025-02-28T23:00:00Z');
  const flavors = await snapshot(db, await run(db, flavorAt), 'flavor', A, flavorAt);
  await bulkInsert(db, gpuFlavorsKept, [
    { snapshotId: flavors, flavorId: 'f-g-a', flavorName: 'g-a', currencyCode: 'EUR', pricePerHour: '1.001', pricePerMonth: '730.735', priceStatus: 'show', projectId: 1, regionId: 1, hardware: {}, raw: {} },
  ]);
  const ids: number[] = [];
  for (const day of ['2025-03-01', '2025-03-02']) {
    for (const [at, running] of [[`${day}T00:00:00Z`, true], [`${day}T04:40:00Z`, false]] as const) {
      const id = await snapshot(db, await run(db, new Date(at)), 'instance', A, new Date(at));
      if (running) await bulkInsert(db, instancesKept, [{ snapshotId: id, ...instance(A, 'id', 'g-a', 'd', true) }, { snapshotId: id, ...instance(A, 'ie', 'g-a', 'e', true) }]);
      ids.push(id);
    }
  }
  for (const id of ids) await computeCostRollups(db, id);
}

describe.each(testDatabases())('one exact figure, one set of digits, on $name', (database) => {
  let app: ReportsApp;
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedThirds, config: periodsConfig(), now: () => new Date('2025-03-02T08:00:00Z') }));
  });
  async function get(path: string): Promise<{ body: string }> {
    const res = await request(`${app.base}${path}`);
    const body = await res.body.text();
    expect(res.statusCode, body.slice(0, 300)).toBe(200);
    return { body };
  }

  it('gives the same exact figure the same digits in every report: summed in seconds, divided by 3600 once', async () => {
    type Body = { rows: Array<Record<string, unknown>>; totals?: Array<Record<string, unknown>>; summary: Array<{ label: string; value: unknown }> };
    const json = async (path: string) => JSON.parse((await get(path)).body) as Body;
    const total = (b: Body, key: string) => Object.fromEntries((b.totals ?? []).map((t) => [String(t.currency), String(t[key])]));
    const cost = await json('/api/reports/cost?by=tag%3Ateam&period=2025-03');
    const byProject = await json('/api/reports/cost?by=project&period=2025-03');
    const monthly = await json('/api/reports/monthly?by=tag%3Ateam&period=2025-03');
    const trend = await json('/api/reports/trend?by=tag%3Ateam&measure=daily-cost&period=2025-03');
    const overview = await json('/api/reports/overview');
    const focus = await json('/api/reports/focus?from=2025-03-01&to=2025-03-02&limit=1');
    const card = (b: Body, label: string) => String(b.summary.find((s) => s.label === label)?.value);
    // EUR: 4 x 4.6713333... = 18.6853333...: divided per day and team and then summed, the four
    // quarters rounded alone gave each report its own last digits.
    const eur = total(cost, 'cost').EUR!;
    expect(eur).toMatch(/^18\.6853333333333333/);
    expect({
      'cost by project': total(byProject, 'cost').EUR,
      'monthly 2025-03': total(monthly, '2025-03').EUR,
      'monthly total': total(monthly, 'total').EUR,
      'cost per day': total(trend, 'cost').EUR,
      'overview month to date': card(overview, 'Month to date 2025-03 (EUR)'),
      'FOCUS BilledCost': card(focus, 'BilledCost (EUR)'),
    }).toEqual({
      'cost by project': eur,
      'monthly 2025-03': eur,
      'monthly total': eur,
      'cost per day': eur,
      'overview month to date': eur,
      'FOCUS BilledCost': eur,
    });
    // One group's figure too: team d in the cost report, the monthly report and the FOCUS rows.
    const teamD = (b: Body, key: string) => String(b.rows.find((r) => r.group === 'd')?.[key]);
    expect(teamD(cost, 'cost')).toMatch(/^9\.34266666666666/);
    expect(teamD(monthly, 'total')).toBe(teamD(cost, 'cost'));
  });

});

/**
 * Numbers a spreadsheet takes as they are, over real HTTP on the known dataset (fixture.ts):
 * money rounded to the currency's minor unit in HTML and CSV (exact in JSON, and in CSV with
 * exact=1), totals per currency in all three formats, shares as percentages with two decimals,
 * and no chart with two currencies. Every expected amount is computed by hand from the fixture:
 *
 * Run-rate now (T3 + 30 min): EUR i1 2.50 + i5 2.50 + i7 2.50 + cluster 2 x 2.50 + Kubernetes 1.20
 * = 13.70/h; monthly 3 x 1825 + 2 x 1825 + 876 = 10001. USD j1 3.00/h, 2190/month.
 * Cost to date: EUR 2.50 (03-09) + 69.75 (03-10) = 72.25; USD 13.50.
 *
 * The cost report's default period is month to date (2025-03-01 .. 03-10), compared with
 * 2025-02-01 .. 02-10, when nothing was collected: the previous spend and the change are unknown
 * (empty), never 0. Spend per team this month: ml 36.25, (untagged) 20.25, "ML " 12, data 3.75,
 * web 0 (EUR); web 13.50 USD. The cost report lists the biggest spend first.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { dataReports, operationsReports } from '../../src/reports/index.js';
import type { ChartSpec, Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../web/fixtures.js';
import { appTest } from '../helpers/reports-app.js';
import { dec, type ReportsApp } from './helpers.js';

interface Json {
  rows: Row[];
  totals: Row[];
  charts: ChartSpec[];
}

describe.each(testDatabases())('numbers for spreadsheets on $name', (database) => {
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database));
  });

  async function text(path: string): Promise<{ status: number; body: string }> {
    const res = await request(`${app.base}${path}`);
    return { status: res.statusCode, body: (await res.body.text()).replace(/^\uFEFF/, '') };
  }
  async function json(path: string): Promise<Json> {
    const res = await text(path);
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    return JSON.parse(res.body) as Json;
  }
  async function csv(path: string): Promise<string[][]> {
    const res = await text(path);
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    return parseCsv(res.body);
  }
  /** The rows of the HTML table's footer, as the cells' text. */
  async function footer(path: string): Promise<string[][]> {
    const res = await text(path);
    expect(res.status).toBe(200);
    const foot = /<tfoot>([\s\S]*?)<\/tfoot>/.exec(res.body)?.[1] ?? '';
    return [...foot.matchAll(/<tr class="total-row">([\s\S]*?)<\/tr>/g)].map((row) =>
      [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!.trim()),
    );
  }

  describe('cost by team', () => {
    const query = 'by=tag%3Ateam';

    it('totals every group per currency in JSON, exact, over all rows rather than the page', async () => {
      const body = await json(`/api/reports/cost?${query}&limit=1`);
      expect(body.rows).toHaveLength(1);
      expect(body.totals.map((t) => [t.group, t.currency, dec(t.cost), t.previous_cost, t.change_percent, dec(t.price_per_hour), dec(t.price_per_month), t.share, t.resources, t.unpriced])).toEqual([
        ['Total', 'EUR', 72.25, null, null, 13.7, 10001, '100.00', 7, 0],
        ['Total', 'USD', 13.5, null, null, 3, 2190, '100.00', 1, 0],
      ]);
    });

    it('writes the totals as the last CSV rows, first cell "Total", money rounded (hourly to 4 digits)', async () => {
      const records = await csv(`/api/reports/cost.csv?${query}`);
      expect(records[0]).toEqual([
        // The labels say what the figures stand on: collection began 03-09 14:30.
        'tag team', 'Currency', 'Spend month to date (2025-03) (covered 9.5 of 233.5 h)', 'Spend 2025-02-01 to 2025-02-10 (no data)', 'Change % (not given: previous period has no data)',
        'Run-rate per hour (now)', 'Run-rate per month (now)', 'Share of currency run-rate', 'Resources', 'Without price',
        'GPU-hours', 'Cost per GPU-hour', 'Hours with GPU count unknown',
      ]);
      // Spend 36.25 + 20.25 + 12 + 3.75 + 0 = 72.25 EUR, 13.50 USD; the previous spend is unknown.
      // Every flavor has "8x A100": USD j1 4.5 h x 8 = 36 GPU-hours for 13.50 (0.375 each). EUR
      // 72.25 - the Kubernetes cluster's 7.5 h x 1.20 = 63.25 on GPUs (its GPUs are unknown: 7.5 h):
      // h100 i2 3 h x 8 = 24 GPU-hours (12.00), a100 51.25 / 2.50 = 20.5 h x 8 = 164; 63.25 / 188 = 0.3364.
      expect(records.slice(-2)).toEqual([
        ['Total', 'EUR', '72.25', '', '', '13.7000', '10001.00', '100.00', '7', '0', '188.00', '0.3364', '7.50'],
        ['Total', 'USD', '13.50', '', '', '3.0000', '2190.00', '100.00', '1', '0', '36.00', '0.3750', '0.00'],
      ]);
      // The rows before them: ml spent 36.25 EUR this month (i1 2.50 on 03-09 + 33.75), runs at
      // 7.50 EUR/h, 5475/month, 54.74 % of the EUR run-rate (7.5 / 13.7).
      // All of it on a100 (8 GPUs at 2.50/h): 36.25 / 2.50 x 8 = 116 GPU-hours at 0.3125.
      expect(records[1]).toEqual(['ml', 'EUR', '36.25', '', '', '7.5000', '5475.00', '54.74', '2', '0', '116.00', '0.3125', '0.00']);
      // Money is a plain number with a dot: no thousands separators, no currency sign.
      for (const record of records.slice(1)) for (const cell of [record[2], record[5], record[6]]) expect(cell).toMatch(/^(-?\d+\.\d+)?$/);
    });

    it('keeps the exact decimals in CSV with exact=1, as in JSON', async () => {
      const body = await json(`/api/reports/cost?${query}&limit=1000`);
      const records = await csv(`/api/reports/cost.csv?${query}&exact=1`);
      const money = (r: Row) => [String(r.cost ?? ''), String(r.price_per_hour ?? ''), String(r.price_per_month ?? '')];
      expect(records.slice(1).map((r) => [r[2], r[5], r[6]])).toEqual([...body.rows, ...body.totals].map(money));
      // Exact is what the database holds, not the 4-digit hourly rounding.
      expect(records.at(-2)![5]).not.toBe('13.7000');
      expect(Number(records.at(-2)![5])).toBe(13.7);
    });

    it('links the exact CSV of the same parameters from the page', async () => {
      const page = await text(`/reports/cost?${query}`);
      expect(page.body).toContain(`href="/api/reports/cost.csv?by=tag%3Ateam&amp;exact=1" data-export="csv-exact" download`);
    });

    it('shows the totals as the table footer, rounded for people', async () => {
      // Every column (cols=all); the Currency column names the currency, so amounts are bare.
      expect(await footer(`/reports/cost?${query}&cols=all`)).toEqual([
        // The previous period has no covered hour: "no data", not "n/a" (which says "no known price").
        ['Total', 'EUR', '72.25', 'no data', '', '13.7000', '10,001.00', '100.00%', '7', '0', '188.00', '0.3364', '7.50'],
        ['Total', 'USD', '13.50', 'no data', '', '3.0000', '2,190.00', '100.00%', '1', '0', '36.00', '0.3750', '0.00'],
      ]);
    });

    it('gives shares as percentages with two decimals in JSON, CSV and HTML', async () => {
      const body = await json(`/api/reports/cost?${query}`);
      const ml = body.rows.find((r) => r.group === 'ml' && r.currency === 'EUR')!;
      expect(ml.share).toBe('54.74');
      const records = await csv(`/api/reports/cost.csv?${query}`);
      expect(records.find((r) => r[0] === 'ml')![7]).toBe('54.74');
      const page = await text(`/reports/cost?${query}`);
      expect(page.body).toContain('<td class="num percent" title="54.74">54.74%</td>');
      // (untagged) 3.70 of 13.70 = 27.01 %, data 2.50 of 13.70 = 18.25 %; in spend order
      // (ml 36.25, (untagged) 20.25, "ML " 12 stopped, data 3.75, web 0).
      expect(body.rows.filter((r) => r.currency === 'EUR').map((r) => [r.group, r.share])).toEqual([
        ['ml', '54.74'],
        ['(untagged)', '27.01'],
        ['ML ', '0.00'],
        ['data', '18.25'],
        ['web', '0.00'],
      ]);
    });

    it('refuses an exact that is not 1 or 0, naming it', async () => {
      const res = await text(`/api/reports/cost.csv?${query}&exact=yes`);
      expect(res.status).toBe(400);
      expect(res.body).toContain('exact');
    });
  });

  it('totals the overview table per currency: run-rate and month to date', async () => {
    const body = await json('/api/reports/overview?by=tag%3Ateam&limit=1');
    expect(body.totals.map((t) => [t.group, t.currency, dec(t.price_per_hour), dec(t.price_per_month), dec(t.cost), t.share])).toEqual([
      ['Total', 'EUR', 13.7, 10001, 72.25, '100.00'],
      ['Total', 'USD', 3, 2190, 13.5, '100.00'],
    ]);
    const records = await csv('/api/reports/overview.csv?by=tag%3Ateam');
    expect(records.slice(-2).map((r) => r.slice(0, 6))).toEqual([
      ['Total', 'EUR', '13.7000', '10001.00', '72.25', '100.00'],
      ['Total', 'USD', '3.0000', '2190.00', '13.50', '100.00'],
    ]);
    // The CSV rows add up to the totals (by hand: 36.25 + 20.25 + 3.75 + 12 + 0 = 72.25).
    expect(records.slice(1, -2).filter((r) => r[1] === 'EUR').map((r) => Number(r[4]))).toEqual([36.25, 20.25, 3.75, 12, 0]);
  });

  it('totals the trend cost per day per currency; the run-rate table has none', async () => {
    const daily = await json('/api/reports/trend?by=kind&days=2&measure=daily-cost');
    expect(daily.totals.map((t) => [t.currency, dec(t.cost)])).toEqual([
      ['EUR', 72.25],
      ['USD', 13.5],
    ]);
    const records = await csv('/api/reports/trend.csv?by=kind&days=2&measure=daily-cost');
    expect(records.slice(-2).map((r) => [r[0], r[1], r[2], r[3]])).toEqual([
      ['Total', '', 'EUR', '72.25'],
      ['Total', '', 'USD', '13.50'],
    ]);
    expect((await json('/api/reports/trend?by=kind&days=2')).totals).toEqual([]);
  });

  it('totals Kubernetes prices and their breakdown per currency', async () => {
    const body = await json('/api/reports/k8s-prices');
    expect(body.totals.map((t) => [t.cluster_name, t.currency, dec(t.price_per_hour), dec(t.price_per_month), dec(t.price_without_discount_per_month), dec(t.instances_per_hour), t.instances_items, dec(t.publicips_per_hour), dec(t.volumes_per_hour)])).toEqual([
      ['Total', 'EUR', 1.2, 876, 900, 1.1, 2, 0.05, 0.05],
    ]);
    expect(await footer('/reports/k8s-prices?cols=all')).toEqual([
      ['Total', '', '', '', '1.2000', '876.00', '900.00', '', '', 'EUR', '1.1000', '2', '0.0500', '1', '0.0500', '1', ''],
    ]);
  });

  it('totals the cost column of the inventory per currency, stopped resources at 0', async () => {
    // Running now: i1, i5, i7 (EUR 2.50 each), j1 (USD 3.00); i2 and i3 stopped, i4 and j2 unpriced.
    const instances = await json('/api/reports/inventory?kind=instances&limit=1');
    expect(instances.totals.map((t) => [t.resource_id, t.currency, dec(t.price_per_hour), dec(t.price_per_month)])).toEqual([
      ['Total', 'EUR', 7.5, 5475],
      ['Total', 'USD', 3, 2190],
    ]);
    const clusters = await json('/api/reports/inventory?kind=clusters');
    expect(clusters.totals.map((t) => [t.currency, dec(t.price_per_hour), dec(t.price_per_month)])).toEqual([['EUR', 5, 3650]]);
    // A filter applies to the totals too.
    const usd = await json('/api/reports/inventory?kind=instances&currency=USD');
    expect(usd.totals.map((t) => t.currency)).toEqual(['USD']);
    expect((await json('/api/reports/inventory?kind=ports')).totals).toEqual([]);
    const records = await csv('/api/reports/inventory.csv?kind=instances');
    const at = (label: string) => records[0]!.indexOf(label);
    expect(records.filter((r) => r[0] === 'Total').map((r) => [r[0], r[at('Currency')], r[at('Cost per hour')], r[at('Cost per month')]])).toEqual([
      ['Total', 'EUR', '7.5000', '5475.00'],
      ['Total', 'USD', '3.0000', '2190.00'],
    ]);
  });

  it('totals FOCUS costs in JSON, but keeps the FOCUS CSV exact and free of "Total" rows', async () => {
    const body = await json('/api/reports/focus?from=2025-03-09&to=2025-03-10');
    expect(body.totals.map((t) => [t.BillingCurrency, dec(t.BilledCost), dec(t.EffectiveCost), dec(t.ListCost), dec(t.ContractedCost)])).toEqual([
      ['EUR', 72.25, 72.25, 72.25, 72.25],
      ['USD', 13.5, 13.5, 13.5, 13.5],
    ]);
    const records = await csv('/api/reports/focus.csv?from=2025-03-09&to=2025-03-10');
    expect(records.some((r) => r.includes('Total'))).toBe(false);
    const full = await json('/api/reports/focus?from=2025-03-09&to=2025-03-10&limit=10000');
    expect(records.slice(1).map((r) => r[0])).toEqual(full.rows.map((r) => String(r.BilledCost)));
  });

  it('never puts two currencies on one chart', async () => {
    const queries: Record<string, string> = { overview: 'by=tag%3Ateam', cost: 'by=project', trend: 'by=kind&days=2', flavors: 'flavor=g-a100&days=3' };
    let moneyCharts = 0;
    for (const report of [...dataReports(), ...operationsReports()]) {
      const body = await json(`/api/reports/${report.name}?${queries[report.name] ?? ''}`);
      for (const chart of body.charts) {
        const words = [chart.title, chart.valueLabel ?? '', ...chart.datasets.map((d) => d.label)].join(' ');
        const named = [...new Set(words.match(/\b(EUR|USD)\b/g) ?? [])];
        expect(named.length, `${report.name}: ${chart.id} names ${named.join(', ')}`).toBeLessThanOrEqual(1);
        if (named.length === 1) {
          moneyCharts++;
          expect([report.name, chart.id, chart.currency]).toEqual([report.name, chart.id, named[0]]);
          expect(chart.title).toContain(named[0]);
        }
        // Chart data stay numbers for Chart.js.
        for (const d of chart.datasets) for (const v of d.data) expect(v === null || typeof v === 'number').toBe(true);
      }
    }
    // overview: cost per day EUR + USD, top groups EUR + USD; cost: EUR + USD; trend: 2 x 2; flavors: EUR + USD; k8s: EUR.
    expect(moneyCharts).toBeGreaterThanOrEqual(13);
  });
});

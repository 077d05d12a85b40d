/**
 * Shared-cost allocation (monthly?allocation=on) through the real web app over HTTP, JSON, CSV
 * and HTML, on the demo prices of allocation-fixture.ts; every amount below is computed by hand
 * there and here. Plus the configuration's checks and the rounding's invariant on random input.
 */
import fc from 'fast-check';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../src/config/index.js';
import type { Row } from '../../src/reports/report.js';
import { allocate } from '../../src/reports/shared/allocation.js';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../web/fixtures.js';
import { ALLOCATION_NOW, allocationConfig, seedAllocation } from './allocation-fixture.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from './helpers.js';

const Q = '/api/reports/monthly?by=tag%3Ateam&period=2025-03&allocation=on';
const M = '2025-03';
/** Per row: group, currency, the month's direct spend (the plain layout's cell), allocated in and out, and after allocation. */
const cells = (rows: Row[]) => rows.map((r) => [r.group, r.currency, r[M], r[`${M}_allocated_in`], r[`${M}_allocated_out`], r[`${M}_after_allocation`]]);

describe.each(testDatabases())('shared-cost allocation on $name', (database) => {
  let app: ReportsApp;
  let config: Config;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedAllocation, config: () => config, now: ALLOCATION_NOW }));
  }, 120_000);

  async function get(path: string): Promise<{ status: number; body: string }> {
    const res = await request(`${app.base}${path}`);
    return { status: res.statusCode, body: (await res.body.text()).replace(/^\uFEFF/, '') };
  }
  async function json(path: string): Promise<{ rows: Row[]; totals: Row[]; notes: string[]; summary: Array<{ label: string; value: unknown }> }> {
    const res = await get(path);
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    return JSON.parse(res.body);
  }

  it('splits (untagged) in proportion to the direct spend of the teams, in cents that add up (the demo rule)', async () => {
    config = allocationConfig([{ from: { by: 'tag:team', value: '(untagged)' }, to: 'tag:team', method: 'proportional' }]);
    const body = await json(Q);
    // EUR: 82.80 over data 82.56, ml 133.20, platform 41.28, web 41.28 (sum 298.32):
    //   data 8280 x 82.56 / 298.32 = 2291.53 cents, ml 3697.02, platform 1145.74, web 1145.74;
    //   cut down 2291 + 3697 + 1145 + 1145 = 8278, the 2 missing cents to the largest remainders
    //   (platform .74, web .74): data 22.91, ml 36.97, platform 11.46, web 11.46.
    // USD: 44.99 over ml 64.092 and web 81.096 (exact direct spend, sum 145.188):
    //   ml 4499 x 64.092 / 145.188 = 1986.04 cents, web 2512.95: cut down 1986 + 2512, the missing
    //   cent to web (.95): ml 19.86, web 25.13.
    // The plain layout's rows in its order (per currency, largest spend first), its exact cells, then the allocation's.
    expect(cells(body.rows)).toEqual([
      ['ml', 'EUR', '133.2', '36.97', '0.00', '170.17'],
      ['(untagged)', 'EUR', '82.8', '0.00', '82.80', '0.00'],
      ['data', 'EUR', '82.56', '22.91', '0.00', '105.47'],
      ['platform', 'EUR', '41.28', '11.46', '0.00', '52.74'],
      ['web', 'EUR', '41.28', '11.46', '0.00', '52.74'],
      ['web', 'USD', '81.096', '25.13', '0.00', '106.23'],
      ['ml', 'USD', '64.092', '19.86', '0.00', '83.95'],
      ['(untagged)', 'USD', '44.9952', '0.00', '44.99', '0.00'],
    ]);
    // Totals preserved to the cent: EUR 381.12 (the exact total), USD 190.18 (190.1832 rounded);
    // allocated in equals allocated out per currency and month.
    expect(body.totals.map((t) => [t.group, ...cells([t])[0]!.slice(1)])).toEqual([
      ['Total', 'EUR', '381.12', '82.8', '82.8', '381.12'],
      ['Total', 'USD', '190.1832', '44.99', '44.99', '190.18'],
    ]);
    expect(body.notes.join(' ')).toContain('"(untagged)" split in proportion to direct spend');
    expect(body.summary.filter((i) => i.label.startsWith('Allocated')).map((i) => [i.label, i.value])).toEqual([
      ['Allocated 2025-03 (EUR)', '82.8'],
      ['Allocated 2025-03 (USD)', '44.99'],
    ]);
  });

  it('keeps the plain CSV columns and rows, adding allocated in / out and after allocation per month; in and out add up', async () => {
    config = allocationConfig([{ from: { by: 'tag:team', value: '(untagged)' }, to: 'tag:team', method: 'proportional' }]);
    const plain = await get(`${Q.replace('/monthly?', '/monthly.csv?').replace('&allocation=on', '')}`);
    const res = await get(`${Q.replace('/monthly?', '/monthly.csv?')}`);
    expect([plain.status, res.status]).toEqual([200, 200]);
    const before = parseCsv(plain.body);
    const records = parseCsv(res.body);
    // The header starts with the plain header, exactly; the allocation columns follow.
    expect(records[0]!.slice(0, before[0]!.length)).toEqual(before[0]);
    expect(records[0]!.slice(before[0]!.length)).toEqual(['2025-03 allocated in', '2025-03 allocated out', '2025-03 after allocation']);
    // Same rows in the same order, with the same cells.
    expect(records.length).toBe(before.length);
    records.forEach((r, i) => expect(r.slice(0, before[i]!.length)).toEqual(before[i]));
    const at = (name: string) => records[0]!.indexOf(name);
    expect(records[1]!.slice(at('2025-03 allocated in'))).toEqual(['36.97', '0.00', '170.17']);
    // Per currency and month, what went in is what went out, row by row and in the Total rows.
    const cents = (v: string) => BigInt(v.replace('.', ''));
    const currency = at('Currency');
    const rows = records.slice(1).filter((r) => r[0] !== 'Total');
    for (const cur of ['EUR', 'USD']) {
      const mine = rows.filter((r) => r[currency] === cur);
      const sumOf = (col: string) => mine.reduce((t, r) => t + cents(r[at(col)]!), 0n);
      expect(sumOf('2025-03 allocated in'), cur).toBe(sumOf('2025-03 allocated out'));
      expect(sumOf('2025-03 allocated in'), cur).toBeGreaterThan(0n);
    }
    expect(records.slice(-2).map((r) => [r[0], r[currency], ...r.slice(at('2025-03 allocated in'))])).toEqual([
      ['Total', 'EUR', '82.80', '82.80', '381.12'],
      ['Total', 'USD', '44.99', '44.99', '190.18'],
    ]);
  });

  it('shows the allocated table and its footer on the page, with the choice in the filters', async () => {
    const res = await get(Q.replace('/api/reports/', '/reports/'));
    expect(res.status).toBe(200);
    expect(res.body).toContain('2025-03 after allocation');
    expect(res.body).toContain('170.17 EUR');
    expect(res.body).toMatch(/<option value="on" selected[^>]*>Allocated \(chargeback\)<\/option>/);
    const foot = /<tfoot>([\s\S]*?)<\/tfoot>/.exec(res.body)?.[1] ?? '';
    expect(foot).toContain('381.12 EUR');
    expect(foot).toContain('190.18 USD');
  });

  it('splits evenly, then a chain: platform (with its share of (untagged)) by fixed percentages', async () => {
    config = allocationConfig([
      { from: { by: 'tag:team', value: '(untagged)' }, to: 'tag:team', method: 'even' },
      { from: { by: 'tag:team', value: 'platform' }, to: 'tag:team', method: 'fixed', shares: { ml: '50', web: 30, data: '20' } },
    ]);
    const body = await json(Q);
    // EUR even: 82.80 / 4 (data, ml, platform, web) = 20.70 each. Then platform 41.28 + 20.70 =
    //   61.98 by 50/30/20: ml 30.99, web 18.594, data 12.396 -> cut down 30.99 + 18.59 + 12.39 =
    //   61.97, the missing cent to data (.6): 12.40. In: ml 20.70 + 30.99 = 51.69, web 20.70 + 18.59
    //   = 39.29, data 20.70 + 12.40 = 33.10.
    // USD even: 44.99 / 2 = 22.495 for ml and web: cut down 22.49 each, the missing cent to the
    //   first in name order (a tie): ml 22.50, web 22.49. No platform in USD: the second rule has
    //   nothing to split.
    expect(cells(body.rows)).toEqual([
      ['ml', 'EUR', '133.2', '51.69', '0.00', '184.89'],
      ['(untagged)', 'EUR', '82.8', '0.00', '82.80', '0.00'],
      ['data', 'EUR', '82.56', '33.10', '0.00', '115.66'],
      ['platform', 'EUR', '41.28', '20.70', '61.98', '0.00'],
      ['web', 'EUR', '41.28', '39.29', '0.00', '80.57'],
      ['web', 'USD', '81.096', '22.49', '0.00', '103.59'],
      ['ml', 'USD', '64.092', '22.50', '0.00', '86.59'],
      ['(untagged)', 'USD', '44.9952', '0.00', '44.99', '0.00'],
    ]);
    expect(body.totals.map((t) => [t.currency, t[`${M}_after_allocation`]])).toEqual([['EUR', '381.12'], ['USD', '190.18']]);
  });

  it('gives a group that only receives (a fixed share, no spend of its own) a row after the plain rows', async () => {
    config = allocationConfig([{ from: { by: 'tag:team', value: '(untagged)' }, to: 'tag:team', method: 'fixed', shares: { ml: '50', finance: '50' } }]);
    const plain = await json(Q.replace('&allocation=on', ''));
    const body = await json(Q);
    expect(body.rows.slice(0, plain.rows.length).map((r) => [r.group, r.currency])).toEqual(plain.rows.map((r) => [r.group, r.currency]));
    // EUR 82.80 / 2 = 41.40 each; USD 44.99 / 2 = 22.495: 22.49 each, the cent to the first in name order (finance).
    expect(cells(body.rows.slice(plain.rows.length))).toEqual([
      ['finance', 'EUR', '0', '41.40', '0.00', '41.40'],
      ['finance', 'USD', '0', '22.50', '0.00', '22.50'],
    ]);
    expect(cells(body.rows).find((r) => r[0] === 'ml' && r[1] === 'USD')).toEqual(['ml', 'USD', '64.092', '22.49', '0.00', '86.58']);
  });

  it('has allocation columns per month: none (unknown) for a month without data', async () => {
    config = allocationConfig([{ from: { by: 'tag:team', value: '(untagged)' }, to: 'tag:team', method: 'proportional' }]);
    const res = await get('/api/reports/monthly?by=tag%3Ateam&period=2025-Q1&allocation=on');
    const body = JSON.parse(res.body) as { columns: Array<{ key: string; label: string }>; rows: Row[] };
    const labels = body.columns.map((c) => c.label);
    expect(labels.slice(-9)).toEqual([
      '2025-01 allocated in (no data)', '2025-01 allocated out (no data)', '2025-01 after allocation (no data)',
      '2025-02 allocated in (no data)', '2025-02 allocated out (no data)', '2025-02 after allocation (no data)',
      '2025-03 allocated in', '2025-03 allocated out', '2025-03 after allocation',
    ]);
    const ml = body.rows.find((r) => r.group === 'ml' && r.currency === 'EUR')!;
    expect([ml['2025-01_allocated_in'], ml['2025-02_after_allocation'], ml['2025-03_allocated_in'], ml['2025-03_after_allocation']]).toEqual([null, null, '36.97', '170.17']);
  });

  it('leaves the table as spent for another grouping, and without allocation=on', async () => {
    const byProject = await json('/api/reports/monthly?by=project&period=2025-03&allocation=on');
    expect(byProject.rows.length).toBeGreaterThan(0);
    expect(byProject.rows.every((r) => r[`${M}_allocated_in`] === '0.00' && r[`${M}_allocated_out`] === '0.00')).toBe(true);
    expect(byProject.notes.join(' ')).toContain('No allocation rule is configured for');
    const plain = await json('/api/reports/monthly?by=tag%3Ateam&period=2025-03');
    expect(plain.rows.find((r) => r.group === '(untagged)' && r.currency === 'EUR')?.['2025-03']).toBe('82.8');
  });

  it('refuses a bad allocation value with 400', async () => {
    const res = await get('/api/reports/monthly?allocation=yes');
    expect(res.status).toBe(400);
    expect(res.body).toContain('allocation must be on or off');
  });
});

describe('allocation rules in the configuration', () => {
  const load = (allocation: unknown) => () => loadConfig({ CLOUDTALLY_CONFIG: 'c.json' }, { readFile: () => JSON.stringify({ allocation }) });
  const problems = (allocation: unknown) => {
    try {
      load(allocation)();
    } catch (e) {
      if (e instanceof ConfigError) return e.problems.map((p) => `${p.path}: ${p.message}`);
      throw e;
    }
    return [];
  };

  it('normalises tag keys and values like the collected tags', () => {
    const config = loadConfig({ CLOUDTALLY_CONFIG: 'c.json' }, { readFile: () => JSON.stringify({ tag_aliases: { owner: 'team' }, allocation: [{ from: { by: 'tag:Owner', value: ' platform ' }, to: 'tag:team', method: 'even' }] }) });
    expect(config.allocation).toEqual([{ dimension: 'tag:team', source: 'platform', method: 'even', shares: null }]);
  });

  it('requires fixed shares summing to exactly 100, only for fixed', () => {
    expect(problems([{ from: { by: 'project', value: '1' }, to: 'project', method: 'fixed', shares: { '2': 33.33, '3': '66.66' } }])).toEqual(['allocation[0].shares: must sum to exactly 100 (got 99.99)']);
    expect(problems([{ from: { by: 'project', value: '1' }, to: 'project', method: 'fixed' }])[0]).toContain('is required with method "fixed"');
    expect(problems([{ from: { by: 'project', value: '1' }, to: 'project', method: 'even', shares: { '2': 100 } }])[0]).toContain('is only for method "fixed"');
    expect(problems([{ from: { by: 'project', value: '1' }, to: 'project', method: 'fixed', shares: { '2': 0.1e-8, '3': 100 } }])[0]).toContain('must be a percentage');
  });

  it('refuses a cross-grouping rule, a source split twice and a share for an emptied source', () => {
    expect(problems([{ from: { by: 'project', value: '1' }, to: 'tag:team', method: 'even' }])[0]).toContain('allocation[0].to: must be the grouping of from.by');
    expect(problems([
      { from: { by: 'tag:team', value: 'a' }, to: 'tag:team', method: 'even' },
      { from: { by: 'tag:Team', value: 'a' }, to: 'tag:team', method: 'proportional' },
    ])).toEqual(['allocation[1].from: "a" of tag:team is already split by allocation[0]: each source is split once']);
    expect(problems([
      { from: { by: 'tag:team', value: 'a' }, to: 'tag:team', method: 'even' },
      { from: { by: 'tag:team', value: 'b' }, to: 'tag:team', method: 'fixed', shares: { a: 50, c: 50 } },
    ])).toEqual(['allocation[1].shares.a: was split by allocation[0] already and cannot receive costs']);
    expect(problems([{ from: { by: 'tag:team', value: 'a' }, to: 'tag:team', method: 'spread' }])[0]).toContain('allocation[0].method');
  });

  it('gives the demo (simulator, no configuration file) the (untagged) team rule', () => {
    expect(loadConfig({}).allocation).toEqual([{ dimension: 'tag:team', source: '(untagged)', method: 'proportional', shares: null }]);
    expect(loadConfig({ CLOUDTALLY_CONFIG: 'c.json' }, { readFile: () => '{}' }).allocation).toEqual([]);
  });
});

describe('the rounding of an allocation', () => {
  it('keeps every group in whole cents adding up to the rounded total, whatever the amounts and rules', () => {
    const amount = fc.bigInt({ min: 0n, max: 10n ** 12n }).map((n) => `${n / 10000n}.${(n % 10000n).toString().padStart(4, '0')}`);
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd', 'e'), amount, { minKeys: 1 }), fc.constantFrom('proportional', 'even') as fc.Arbitrary<'proportional' | 'even'>, (direct, method) => {
        const result = allocate(new Map(Object.entries(direct)), 2, [
          { dimension: 'x', source: 'a', method, shares: null },
          { dimension: 'x', source: 'b', method: 'fixed', shares: { c: '33.333', d: '66.667' } },
        ]);
        const cents = (s: string) => BigInt(s.replace('.', ''));
        const exactTotal = Object.values(direct).reduce((t, v) => t + BigInt(v.replace('.', '')), 0n); // 4 decimals
        const rounded = (exactTotal + 50n) / 100n;
        expect(result.groups.reduce((t, g) => t + cents(g.total), 0n)).toBe(rounded);
        expect(result.groups.reduce((t, g) => t + cents(g.direct), 0n)).toBe(rounded);
        expect(result.groups.reduce((t, g) => t + cents(g.allocatedIn), 0n)).toBe(result.groups.reduce((t, g) => t + cents(g.allocatedOut), 0n));
        for (const g of result.groups) expect(cents(g.total)).toBe(cents(g.direct) + cents(g.allocatedIn) - cents(g.allocatedOut));
      }),
    );
  });
});

/**
 * Periods, coverage, the monthly report, the two projections and the FOCUS/monthly agreement,
 * through the real web app over HTTP. Every figure is worked out by hand in periods-fixture.ts.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Coverage, Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { dec, getJson, okJson, pick, type ReportsApp } from './helpers.js';
import { PERIODS_NOW, periodsConfig, seedPeriods } from './periods-fixture.js';

interface Body {
  title: string;
  rows: Row[];
  totals?: Row[];
  coverage?: Coverage;
  summary: Array<{ label: string; value: unknown; hint?: string }>;
  columns: Array<{ key: string; kind: string; currencyKey?: string }>;
  notes: string[];
  error?: { code: string; details?: Array<{ field: string; message: string }> };
}

describe.each(testDatabases())('reports over periods on $name', (database) => {
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedPeriods, config: periodsConfig(), now: PERIODS_NOW }));
  }, 120_000);

  const json = (path: string) => getJson<Body>(app, path);
  const ok = (path: string) => okJson<Body>(app, path);
  const summary = (body: Body, label: string) => {
    const item = body.summary.find((s) => s.label === label);
    if (!item) throw new Error(`no summary item "${label}" in ${body.summary.map((s) => s.label).join(', ')}`);
    return item;
  };

  describe('cost over a period', () => {
    it('gives spend, the previous period and the change per group and currency, with totals', async () => {
      const body = await ok('/api/reports/cost?by=tag:team&period=2025-02');
      expect(body.title).toBe('Cost by tag team, 2025-02');
      expect(pick(body.rows, ['group', 'currency', 'cost', 'previous_cost', 'change_percent', 'price_per_hour'], ['cost', 'previous_cost', 'price_per_hour'])).toEqual([
        // No change %: January is covered 16 of 31 days (360 h uncovered), February all but 48 h.
        ['web', 'EUR', 2496, 0, null, 0], // i2 26 days x 96
        ['ml', 'EUR', 1560, 960, null, 2.5],
        ['web', 'USD', 1224, 1152, null, 3],
      ]);
      expect(pick(body.totals ?? [], ['group', 'currency', 'cost', 'previous_cost', 'change_percent'], ['cost', 'previous_cost'])).toEqual([
        ['Total', 'EUR', 4056, 960, null],
        ['Total', 'USD', 1224, 1152, null],
      ]);
      expect((body as Body & { previous_coverage?: Coverage }).previous_coverage).toEqual({
        from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z', covered_hours: 384, period_hours: 744, first_snapshot_at: '2025-01-16T00:00:00.000Z',
      });
      expect(body.notes).toContain('No change % is given: the previous period (2025-01-01 to 2025-01-31) covered 384 of 744 h, this one covered 624 of 672 h; a change would measure the missing snapshots, not spend.');
      // Two fully covered periods are compared: 03-01 .. 03-09 against 02-20 .. 02-28.
      const march = await ok('/api/reports/cost?by=tag:team&from=2025-03-01&to=2025-03-09');
      expect(pick(march.rows, ['group', 'currency', 'cost', 'previous_cost', 'change_percent'], ['cost', 'previous_cost'])).toEqual([
        ['ml', 'EUR', 540, 540, 0], // 9 x 60 both
        ['web', 'EUR', 0, 864, -100], // i2 9 x 96 in February only
        ['web', 'USD', 576, 0, null], // j1 8 x 72 (stopped 03-05); stopped all of 02-20 .. 02-28: no change from 0
      ]);
      expect((march as Body & { previous_coverage?: Coverage }).previous_coverage).toMatchObject({ covered_hours: 216, period_hours: 216 });
      // Drill-down links stay.
      expect(String(body.rows[0]!.href)).toMatch(/^\/reports\/inventory\?/);
    });

    it('names the same months with last-month, YYYY-MM and from/to, and the quarter with YYYY-Qn, YYYY, qtd and ytd', async () => {
      const feb = (await ok('/api/reports/cost?by=tag:team&period=2025-02')).rows;
      expect((await ok('/api/reports/cost?by=tag:team&period=last-month')).rows).toEqual(feb);
      expect((await ok('/api/reports/cost?by=tag:team&from=2025-02-01&to=2025-02-28')).rows.map((r) => [r.group, r.currency, r.cost])).toEqual(feb.map((r) => [r.group, r.currency, r.cost]));
      const q1 = await ok('/api/reports/cost?by=tag:team&period=2025-Q1');
      // ml EUR 960 + 1560 + 570; web EUR 2496; web USD 1152 + 1224 + 612
      expect(pick(q1.rows, ['group', 'currency', 'cost'], ['cost'])).toEqual([
        ['ml', 'EUR', 3090],
        ['web', 'EUR', 2496],
        ['web', 'USD', 2988],
      ]);
      for (const period of ['2025', 'qtd', 'ytd']) {
        expect(pick((await ok(`/api/reports/cost?by=tag:team&period=${period}`)).rows, ['group', 'currency', 'cost'], ['cost']), period).toEqual(pick(q1.rows, ['group', 'currency', 'cost'], ['cost']));
      }
    });

    it('defaults to month to date, compared with the same days of the month before', async () => {
      const body = await ok('/api/reports/cost?by=tag:team');
      // March 1-10 12:00 against February 1-10 (02-10 not covered): ml 9 x 60 = 540, web EUR 9 x 96 = 864, web USD 9 x 72 = 648.
      // February 1-10 lacks 24 h, March so far none: no change % (it used to say +5.56 % for ml).
      expect(pick(body.rows, ['group', 'currency', 'cost', 'previous_cost', 'change_percent'], ['cost', 'previous_cost'])).toEqual([
        ['ml', 'EUR', 570, 540, null],
        ['web', 'EUR', 0, 864, null],
        ['web', 'USD', 612, 648, null],
      ]);
      expect((body as Body & { previous_coverage?: Coverage }).previous_coverage).toMatchObject({ from: '2025-02-01T00:00:00.000Z', to: '2025-02-11T00:00:00.000Z', covered_hours: 216, period_hours: 240 });
    });
  });

  describe('coverage', () => {
    it('reports the hours snapshots cover, with gaps and the start of collection as not covered', async () => {
      const feb = await ok('/api/reports/cost?by=tag:team&period=2025-02');
      expect(feb.coverage).toEqual({
        from: '2025-02-01T00:00:00.000Z',
        to: '2025-03-01T00:00:00.000Z',
        covered_hours: 624, // 28 x 24 - 48 h without a snapshot
        period_hours: 672,
        first_snapshot_at: '2025-01-16T00:00:00.000Z',
      });
      const jan = await ok('/api/reports/monthly?by=tag:team&period=2025-01');
      // Sealed days count whole: 01-16 .. 01-31.
      expect([jan.coverage!.covered_hours, jan.coverage!.period_hours]).toEqual([16 * 24, 31 * 24]);
      const mtd = await ok('/api/reports/overview');
      expect(mtd.coverage).toMatchObject({ from: '2025-03-01T00:00:00.000Z', to: '2025-03-10T12:00:00.000Z', covered_hours: 228, period_hours: 228 });
    });

    it('says so at the top of the page and marks the CSV file name of a partial period', async () => {
      const page = await request(`${app.base}/reports/cost?by=tag%3Ateam&period=2025-01`);
      const html = await page.body.text();
      // In the notices line that opens on click (issue 27), above the cards.
      expect(html).toMatch(/<details class="notices-line notices-warn">\s*<summary><span class="notices-title">Notices<\/span> <span class="notices-summary">Coverage: 16 of 31 days<\/span><\/summary>/);
      expect(html).toMatch(/<li class="notice notice-coverage">The figures cover 16 of 31 days: collection began 2025-01-16 00:00 UTC/);
      expect(html.indexOf('class="notices-line')).toBeLessThan(html.indexOf('class="cards"'));
      const partial = await request(`${app.base}/api/reports/cost.csv?by=tag%3Ateam&period=2025-02`);
      await partial.body.dump();
      expect(String(partial.headers['content-disposition'])).toMatch(/filename="cloudtally-cost-by-tag-team_period-2025-02-2025-03-10T120000Z-partial\.csv"/);
      const whole = await request(`${app.base}/api/reports/cost.csv?by=tag%3Ateam&period=mtd`);
      await whole.body.dump();
      expect(String(whole.headers['content-disposition'])).toMatch(/filename="cloudtally-cost-by-tag-team_period-mtd-2025-03-10T120000Z\.csv"/);
    });
  });

  describe('monthly report', () => {
    it('puts groups in rows and months in columns, one block per currency, with totals', async () => {
      const body = await ok('/api/reports/monthly?by=tag:team&period=2025-Q1');
      expect(body.columns.map((c) => c.key)).toEqual(['group', 'currency', '2025-01', '2025-02', '2025-03', 'total', 'gpu_hours', 'cost_per_gpu_hour', 'gpu_unknown_hours', 'change_percent']);
      expect(body.columns.filter((c) => c.kind === 'money').every((c) => c.currencyKey === 'currency')).toBe(true);
      expect(pick(body.rows, ['group', 'currency', '2025-01', '2025-02', '2025-03', 'total'], ['2025-01', '2025-02', '2025-03', 'total'])).toEqual([
        ['ml', 'EUR', 960, 1560, 570, 3090],
        ['web', 'EUR', 0, 2496, 0, 2496],
        ['web', 'USD', 1152, 1224, 612, 2988],
      ]);
      expect(pick(body.totals ?? [], ['group', 'currency', '2025-01', '2025-02', '2025-03', 'total'], ['2025-01', '2025-02', '2025-03', 'total'])).toEqual([
        ['Total', 'EUR', 960, 4056, 570, 5586],
        ['Total', 'USD', 1152, 1224, 612, 2988],
      ]);
      // The fixture's flavors have no hardware description: no GPU can be counted, so GPU-hours are
      // unknown (null), never 0, and the running hours are listed as such. ml: 16 + 26 + 9 days of
      // 24 h + 12 h = 1236; web EUR 26 x 24 = 624; web USD (running only) (16 + 17 + 8) x 24 + 12 = 996.
      expect(pick([...body.rows, ...(body.totals ?? [])], ['group', 'currency', 'gpu_hours', 'cost_per_gpu_hour', 'gpu_unknown_hours'], ['gpu_unknown_hours'])).toEqual([
        ['ml', 'EUR', null, null, 1236],
        ['web', 'EUR', null, null, 624],
        ['web', 'USD', null, null, 996],
        ['Total', 'EUR', null, null, 1860],
        ['Total', 'USD', null, null, 996],
      ]);
    });

    it('shows the last 6 months by default and takes from/to months', async () => {
      const body = await ok('/api/reports/monthly?by=tag:team');
      expect(body.columns.map((c) => c.key).slice(0, -4)).toEqual(['group', 'currency', '2024-10', '2024-11', '2024-12', '2025-01', '2025-02', '2025-03', 'total']);
      // Months before collection began (01-16) are unknown, not 0: null, labelled so (the CSV's header too).
      expect(body.rows.find((r) => r.group === 'ml')!['2024-12']).toBeNull();
      expect(body.columns.find((c) => c.key === '2024-12')).toMatchObject({ label: '2024-12 (no data)' });
      const range = await ok('/api/reports/monthly?by=tag:team&from=2025-02&to=2025-03');
      expect(range.columns.map((c) => c.key).slice(0, -4)).toEqual(['group', 'currency', '2025-02', '2025-03', 'total']);
      expect(dec(range.rows.find((r) => r.group === 'ml')!.total)).toBe(2130);
    });

    it('agrees with the FOCUS export: the sum of BilledCost over a month is the month\'s cell, per currency', async () => {
      for (const month of ['2025-01', '2025-02', '2025-03']) {
        const monthly = await ok(`/api/reports/monthly?by=kind&period=${month}`);
        const focus = await ok(`/api/reports/focus?period=${month}&limit=10000`);
        const billed = new Map<string, number>();
        for (const r of focus.rows) billed.set(String(r.BillingCurrency), (billed.get(String(r.BillingCurrency)) ?? 0) + Number(r.BilledCost));
        const cells = new Map((monthly.totals ?? []).map((t) => [String(t.currency), dec(t[month])]));
        expect(new Map([...billed].map(([c, v]) => [c, dec(v)])), month).toEqual(new Map([...cells].filter(([, v]) => v !== 0)));
      }
      // By hand: February EUR 1560 + 2496, USD 1224.
      const feb = await ok('/api/reports/monthly?by=kind&period=2025-02');
      expect(pick(feb.totals ?? [], ['currency', '2025-02'], ['2025-02'])).toEqual([['EUR', 4056], ['USD', 1224]]);
    });
  });

  describe('overview', () => {
    it('shows the run-rate projection and the daily-history forecast side by side', async () => {
      const body = await ok('/api/reports/overview');
      // 21.5 days (516 h) left in March after 03-10 12:00.
      expect(dec(summary(body, 'Projected 2025-03, run-rate method (EUR)').value)).toBe(1860); // 570 + 2.50 x 516
      expect(dec(summary(body, 'Projected 2025-03, daily history (EUR)').value)).toBe(1860); // 570 + 60 x 21.5
      expect(dec(summary(body, 'Projected 2025-03, run-rate method (USD)').value)).toBe(2160); // 612 + 3 x 516
      // 03-03 .. 03-09: six days of 72 and 03-05 at 0: mean 432 / 7; range 612 + 0 .. 612 + 72 x 21.5.
      expect(dec(summary(body, 'Projected 2025-03, daily history (USD)').value)).toBe(dec(612 + (432 / 7) * 21.5));
      expect(summary(body, 'Projected 2025-03, daily history (USD)').hint).toMatch(/range 612\.00 to 2160\.00/);
      // i2 (web, EUR) neither runs nor cost anything this month: not a top group any more.
      expect(pick(body.rows, ['group', 'currency', 'cost'], ['cost'])).toEqual([
        ['ml', 'EUR', 570],
        ['web', 'USD', 612],
      ]);
    });

    it('shows a chosen period\'s spend and its days in the chart', async () => {
      const body = await ok('/api/reports/overview?period=2025-02');
      expect(dec(summary(body, 'Spend 2025-02 (EUR)').value)).toBe(4056);
      const chart = (body as unknown as { charts: Array<{ id: string; labels: string[]; datasets: Array<{ label: string; data: Array<number | null> }> }> }).charts.find((c) => c.id === 'cost-per-day-EUR')!;
      expect(chart.labels).toHaveLength(28);
      // One chart per currency, its top groups stacked: the EUR chart holds EUR alone.
      expect(chart.datasets.map((d) => d.label)).toEqual(['web', 'ml']);
      const eur = (i: number) => (chart.datasets.every((d) => d.data[i] === null) ? null : chart.datasets.reduce((n, d) => n + (d.data[i] ?? 0), 0));
      expect([eur(0), eur(9), eur(10), eur(11)]).toEqual([156, null, null, 156]); // 60 + 96; 02-10, 02-11 unknown
    });
  });

  describe('parameters', () => {
    it('keeps existing links working', async () => {
      await ok('/api/reports/overview?days=30');
      await ok('/api/reports/trend?by=kind&days=2');
      const focus = await ok('/api/reports/focus?from=2025-03-01&to=2025-03-02');
      expect(new Set(focus.rows.map((r) => String(r.ChargePeriodStart).slice(0, 10)))).toEqual(new Set(['2025-03-01', '2025-03-02']));
    });

    it.each([
      ['cost', 'period=2025-13', 'query.period'],
      ['cost', 'period=2025-Q5', 'query.period'],
      ['cost', 'period=lastmonth', 'query.period'],
      ['monthly', 'period=2099', 'query.period'],
      ['cost', 'from=2025-02-30', 'query.from'],
      ['cost', 'from=2025-03-01&to=2025-02-01', 'query.from'],
      ['overview', 'from=2021-01-01&to=2025-01-01', 'query.to'],
      ['trend', 'period=2025-02&from=2025-02-01', 'query.period'],
      ['trend', 'period=2025-02&days=7', 'query.days'],
      ['focus', 'from=2025-04-01', 'query.from'],
      // Every day and month the period parser takes lies within 1970-01-01 .. 9999-12-31, as the
      // dates of every other parameter (Postgres has no year 0000; JavaScript writes 10000 as +010000).
      ['cost', 'period=0000', 'query.period'],
      ['monthly', 'period=0000-Q1', 'query.period'],
      ['overview', 'period=1969-12', 'query.period'],
      ['overview', 'from=0000-01', 'query.from'],
      ['trend', 'from=1969-12-31&to=1970-01-01', 'query.from'],
      ['focus', 'from=0000-01-01&to=0000-01-02', 'query.from'],
      ['focus', 'to=0000-01-02', 'query.to'],
      ['cost', 'to=9999-12', 'query.to'],
      ['monthly', 'from=9999-12-31&to=9999-12-31', 'query.from'],
    ])('answers 400 naming the parameter: %s?%s', async (report, query, field) => {
      const { status, body } = await json(`/api/reports/${report}?${query}`);
      expect(status).toBe(400);
      expect(JSON.stringify(body)).toContain(field);
    });
  });
});

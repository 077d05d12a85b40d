/**
 * The overview's headline (issue 27) and the period presets, through the real web app over HTTP,
 * on the hand-computed history of periods-fixture.ts (NOW 2025-03-10 12:00 UTC; data from
 * 2025-01-16; 02-10 and 02-11 not collected).
 */
import { describe, expect, it } from 'vitest';
import type { ChartSpec, Headline } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { getJson, okJson, type ReportsApp } from './helpers.js';
import { PERIODS_NOW, periodsConfig, seedPeriods } from './periods-fixture.js';

interface Body {
  title: string;
  headline?: Headline;
  charts: ChartSpec[];
  code?: string;
  errors?: Array<{ field: string; message: string }>;
}

describe.each(testDatabases())('the overview headline and the period presets on $name', (database) => {
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedPeriods, config: periodsConfig(), now: PERIODS_NOW }));
  }, 120_000);

  const json = (path: string) => getJson<Body>(app, path);
  async function headline(path: string): Promise<Headline> {
    const body = await okJson<Body>(app, path);
    expect(body.headline).toBeDefined();
    return body.headline!;
  }
  const kpi = (h: Headline, currency: string) => h.kpis.find((k) => k.currency === currency)!;

  it('gives the change against the previous comparable period when both are fully covered', async () => {
    const h = await headline('/api/reports/overview?period=last-7-days');
    expect(h.period).toEqual({ label: 'last 7 days (2025-03-03 to 2025-03-09)', from: '2025-03-03', to: '2025-03-09', previous: { from: '2025-02-24', to: '2025-03-02' } });
    // EUR: ml 7 x 60 = 420; before: ml 7 x 60 + web (i2, to 02-28) 5 x 96 = 900. (420 - 900) / 900 = -53.33 %.
    const eur = kpi(h, 'EUR');
    expect([Number(eur.spend), Number(eur.previous_spend), eur.change_percent, eur.change_reason]).toEqual([420, 900, -53.33, null]);
    // USD: j1 6 x 72 = 432 (stopped 03-05); before: 03-01 and 03-02 only, 2 x 72 = 144. +200 %.
    const usd = kpi(h, 'USD');
    expect([Number(usd.spend), Number(usd.previous_spend), usd.change_percent, usd.change_reason]).toEqual([432, 144, 200, null]);
    expect(eur.price_per_hour).not.toBeNull();
  });

  it('gives no change, and says why, when this or the previous period is not fully collected', async () => {
    // 02-08 .. 03-09 lacks 02-10 and 02-11: 672 of 720 h.
    const month = await headline('/api/reports/overview?period=last-30-days');
    expect(month.period.from).toBe('2025-02-08');
    for (const k of month.kpis) {
      expect(k.change_percent).toBeNull();
      expect(k.change_reason).toBe('this period not fully collected (covered 672 of 720 h)');
    }
    // 01-20 .. 01-26 is covered; the 7 days before it only from 01-16: 4 of 7 days.
    const january = await headline('/api/reports/overview?from=2025-01-20&to=2025-01-26');
    expect(january.period.previous).toEqual({ from: '2025-01-13', to: '2025-01-19' });
    expect(Number(kpi(january, 'EUR').spend)).toBe(420);
    for (const k of january.kpis) {
      expect(k.change_percent).toBeNull();
      expect(k.change_reason).toBe('previous period not fully collected (covered 96 of 168 h)');
    }
    // A period before any data: its spend is unknown, not 0.
    const q4 = await headline('/api/reports/overview?period=last-quarter');
    expect(q4.period).toMatchObject({ label: '2024-Q4', from: '2024-10-01', to: '2024-12-31', previous: { from: '2024-07-01', to: '2024-09-30' } });
    expect(q4.kpis.map((k) => [k.spend, k.change_percent, k.change_reason])).toEqual([
      [null, null, 'this period has no data'],
      [null, null, 'this period has no data'],
    ]);
  });

  it('gives the run-rate projection with its coverage and a sparkline of the covered days of the last 30', async () => {
    const h = await headline('/api/reports/overview');
    const eur = kpi(h, 'EUR');
    expect(eur.month).toBe('2025-03');
    // March so far: 9.5 days, all covered.
    expect(eur.projection_coverage).toEqual({ covered_hours: 228, period_hours: 228 });
    expect(eur.projected_month).not.toBeNull();
    // The 30 complete days before today (02-08 .. 03-09) but the uncollected 02-10 and 02-11.
    expect(eur.sparkline).toHaveLength(28);
    expect(eur.sparkline.map((p) => p.day)).not.toContain('2025-02-10');
    expect(eur.sparkline[0]).toEqual({ day: '2025-02-08', cost: 156 }); // ml 60 + web 96
    expect(eur.sparkline.at(-1)).toEqual({ day: '2025-03-09', cost: 60 });
  });

  it('starts the daily chart at the first covered day, stacks the groups, leaves gaps empty and links each bar to the cost report', async () => {
    const { body } = await json('/api/reports/overview?period=ytd');
    expect(body.headline!.first_covered_day).toBe('2025-01-16');
    const eur = body.charts.find((c) => c.id === 'cost-per-day-EUR')!;
    expect(eur.labels[0]).toBe('2025-01-16');
    expect(eur.labels.at(-1)).toBe('2025-03-10');
    expect(eur.stacked).toBe(true);
    expect(eur.datasets.map((d) => d.label)).toEqual(['ml', 'web']);
    const at = (day: string) => eur.labels.indexOf(day);
    // Not collected: a gap in every series, not 0.
    expect(eur.datasets.map((d) => d.data[at('2025-02-10')])).toEqual([null, null]);
    expect(eur.datasets.map((d) => d.data[at('2025-02-12')])).toEqual([60, 96]);
    // A tag value is a row of the cost report, not a filter: every bar leads where its day does,
    // so the spec gives the day's link alone rather than repeating it per group.
    expect(eur.hrefs).toBeUndefined();
    expect(eur.labelHrefs![at('2025-02-12')]).toBe('/reports/cost?by=tag%3Ateam&from=2025-02-12&to=2025-02-12');
    // By project: the bar's group is a filter of the cost report; a slice keeps the period.
    const byProject = (await json('/api/reports/overview?period=last-month&by=project')).body;
    const day = byProject.charts.find((c) => c.id === 'cost-per-day-EUR')!;
    expect(day.hrefs![0]![0]).toBe('/reports/cost?by=project&from=2025-02-01&to=2025-02-01&project=1');
    const slices = byProject.charts.find((c) => c.type === 'doughnut')!;
    expect(slices.hrefs![0]![0]).toBe('/reports/cost?by=project&period=last-month&project=1');
  });

  it('resolves every preset in the overview and the cost report, and answers 400 for an unknown one', async () => {
    for (const [preset, from, to] of [
      ['mtd', '2025-03-01', '2025-03-10'],
      ['last-month', '2025-02-01', '2025-02-28'],
      ['last-7-days', '2025-03-03', '2025-03-09'],
      ['last-30-days', '2025-02-08', '2025-03-09'],
      ['qtd', '2025-01-01', '2025-03-10'],
      ['last-quarter', '2024-10-01', '2024-12-31'],
      ['ytd', '2025-01-01', '2025-03-10'],
    ] as const) {
      const h = await headline(`/api/reports/overview?period=${preset}`);
      expect([h.period.from, h.period.to], preset).toEqual([from, to]);
    }
    const cost = await json('/api/reports/cost?by=tag:team&period=last-7-days');
    expect(cost.status).toBe(200);
    expect(cost.body.title).toBe('Cost by tag team, last 7 days (2025-03-03 to 2025-03-09)');
    for (const path of ['/api/reports/overview?period=last-8-days', '/api/reports/cost?period=last7']) {
      const bad = await json(path);
      expect(bad.status, path).toBe(400);
      expect(bad.body.code).toBe('invalid_parameters');
      expect(bad.body.errors).toEqual([
        { field: 'query.period', message: 'period must be one of YYYY-MM, YYYY-Qn, YYYY, mtd, last-month, last-7-days, last-30-days, qtd, last-quarter or ytd (or from=YYYY-MM-DD&to=YYYY-MM-DD)' },
      ]);
    }
  });
});

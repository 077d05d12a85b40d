/**
 * The cost gauges of /metrics on a started service (the demo company, a day of history and the
 * start-up collection): they equal the overview's run-rate and month to date, follow the cloud
 * after the next collection, and a scrape never computes them (no cost query at scrape time).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { demoHistorySteps } from '../../src/demo/history.js';
import { startService, type RunningService } from '../../src/main.js';
import { freshPostgresDatabase } from '../helpers/databases.js';
import { metricSamples, SERVICE_DATABASES, startedDemoService } from './helpers.js';

const samples = metricSamples;

interface Overview {
  summary: Array<{ label: string; value: string | number | null }>;
}

describe.each(SERVICE_DATABASES)('cost metrics on $name', ({ name }) => {
  // The month to date grows with the clock: the gauge holds it as of the last collection, so the
  // overview is read at that instant (the service's clock stands still from a collection on).
  let clock: Date | null = null;
  async function collectNow(): Promise<void> {
    clock = new Date();
    const run = await service.collection.collectNow('manual');
    expect(run.alreadyRunning).toBe(false);
    await service.collection.idle();
  }

  const started = startedDemoService(name, { now: () => clock ?? new Date() });
  let service: RunningService;
  beforeAll(() => void ({ service } = started()));

  const scrape = async () => (await fetch(`${service.url}/metrics`)).text();
  const overview = async () => (await (await fetch(`${service.url}/api/reports/overview`)).json()) as Overview;
  const card = (o: Overview, pattern: RegExp) => o.summary.find((s) => pattern.test(s.label))?.value ?? null;
  const currenciesOf = (o: Overview) => o.summary.flatMap((s) => /^Run-rate per hour \((\w+)\)$/.exec(s.label)?.[1] ?? []);

  /** Per currency: the gauges equal the overview's cards, and each grouping's groups add up to the total. */
  async function expectGaugesMatchOverview(): Promise<Map<string, number>> {
    const [text, o] = await Promise.all([scrape(), overview()]);
    const perHour = samples(text, 'cloudtally_cost_per_hour');
    const monthToDate = samples(text, 'cloudtally_cost_month_to_date');
    const currencies = currenciesOf(o);
    expect(currencies.length).toBeGreaterThan(0);
    const totals = new Map<string, number>();
    for (const currency of currencies) {
      const total = perHour.filter((s) => s.labels.currency === currency && s.labels.group_by === 'total');
      expect(total.map((s) => s.labels.group)).toEqual(['total']);
      expect(total[0]!.value).toBe(Number(card(o, new RegExp(`^Run-rate per hour \\(${currency}\\)$`))));
      totals.set(currency, total[0]!.value);
      for (const groupBy of ['tag:team', 'project']) {
        const groups = perHour.filter((s) => s.labels.currency === currency && s.labels.group_by === groupBy);
        expect(groups.length, `${groupBy} groups in ${currency}`).toBeGreaterThan(1);
        expect(groups.reduce((sum, s) => sum + s.value, 0)).toBeCloseTo(total[0]!.value, 6);
      }
      const mtd = card(o, new RegExp(`^Month to date \\d{4}-\\d{2} \\(${currency}\\)$`));
      expect(mtd).not.toBeNull();
      expect(monthToDate.find((s) => s.labels.currency === currency)?.value).toBe(Number(mtd));
    }
    expect(new Set(perHour.map((s) => s.labels.currency))).toEqual(new Set(currencies));
    return totals;
  }

  it('gives the overview\'s run-rate per hour and month to date, and groups that add up to the total', async () => {
    await collectNow();
    await expectGaugesMatchOverview();
    const teams = samples(await scrape(), 'cloudtally_cost_per_hour').filter((s) => s.labels.group_by === 'tag:team').map((s) => s.labels.group);
    // Resources without a team tag are one group, named as in the reports.
    expect(teams).toContain('(untagged)');
  });

  it('follows the cloud: instances stopped in the cloud and collected lower the total, still equal to the overview', async () => {
    const before = await expectGaugesMatchOverview();
    const sim = service.simulator!;
    const running = sim.state.scopes().flatMap((s) => sim.state.instances(s.project_id, s.region_id)).filter((i) => i.status === 'ACTIVE');
    expect(running.length).toBeGreaterThan(0);
    for (const instance of running.slice(0, 3)) sim.state.stopInstance(instance.projectId, instance.regionId, instance.id);
    await collectNow();
    const after = await expectGaugesMatchOverview();
    const dropped = [...before].filter(([currency, total]) => (after.get(currency) ?? 0) < total);
    expect(dropped.length).toBeGreaterThan(0);
  }, 120_000);

  it('never computes costs at scrape time: a scrape shows the last collection\'s figures while the database says otherwise', async () => {
    const totals = (text: string) => samples(text, 'cloudtally_cost_per_hour').filter((s) => s.labels.group_by === 'total');
    const before = totals(await scrape());
    expect(before.length).toBeGreaterThan(0);
    // Every stored run-rate doubled (exact in numeric), behind the service's back.
    await service.database.query('UPDATE cost_rollups SET price_per_hour = price_per_hour * 2');
    try {
      // A read of the database sees it (the overview with parameters not read before, so not from its cache)...
      const fresh = (await (await fetch(`${service.url}/api/reports/overview?days=29`)).json()) as Overview;
      for (const s of before) expect(Number(card(fresh, new RegExp(`^Run-rate per hour \\(${s.labels.currency}\\)$`)))).toBeCloseTo(2 * s.value, 6);
      // ...a scrape does not: its figures are those set after the last collection.
      expect(totals(await scrape())).toEqual(before);
    } finally {
      await service.database.query('UPDATE cost_rollups SET price_per_hour = price_per_hour / 2');
    }
  });
});

describe('cost metrics at start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ct-cost-metrics-'));
  let service: RunningService | undefined;

  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it('are there from the data already collected, before any collection of this process', async () => {
    const env = { CLOUDTALLY_DATA_DIR: dir, PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_CONFIG: 'cloudtally.json' };
    const withoutCollection = { readFile: () => JSON.stringify({ collect_on_start: false }) };
    service = await startService(loadConfig(env, { readFile: () => '{}' }), silentLogger(), { demoHistoryDays: 1 });
    await service.ready;
    await service.collection.idle();
    await service.stop();

    const at = new Date();
    service = await startService(loadConfig(env, withoutCollection), silentLogger(), { demoHistoryDays: 0, now: () => at });
    await service.ready;
    const runs = await service.database.query<{ n: number }>('SELECT count(*)::int AS n FROM collection_runs WHERE started_at >= $1', [at]);
    expect(runs[0]!.n).toBe(0);
    const text = await (await fetch(`${service.url}/metrics`)).text();
    const o = (await (await fetch(`${service.url}/api/reports/overview`)).json()) as Overview;
    const totals = samples(text, 'cloudtally_cost_per_hour').filter((s) => s.labels.group_by === 'total');
    expect(totals.length).toBeGreaterThan(0);
    for (const s of totals) expect(s.value).toBe(Number(o.summary.find((c) => c.label === `Run-rate per hour (${s.labels.currency})`)?.value));
    const monthToDate = samples(text, 'cloudtally_cost_month_to_date');
    expect(monthToDate.map((s) => s.labels.currency).sort()).toEqual(totals.map((s) => s.labels.currency).sort());
    for (const s of monthToDate) {
      expect(s.value).toBe(Number(o.summary.find((c) => new RegExp(`^Month to date \\d{4}-\\d{2} \\(${s.labels.currency}\\)$`).test(c.label))?.value));
    }
  }, 240_000);
});

describe.each(SERVICE_DATABASES)('cost metrics during the demo history on $name', ({ name }) => {
  let service: RunningService | undefined;
  let postgres: { url: string; drop(): Promise<void> } | undefined;

  afterAll(async () => {
    await service?.stop();
    await postgres?.drop();
  }, 60_000);

  it('are there once its first step is stored, not only after its last', async () => {
    if (name === 'Postgres') postgres = await freshPostgresDatabase(process.env.TEST_DATABASE_URL!);
    const env = postgres ? { DATABASE_URL: postgres.url } : {};
    const days = 2;
    service = await startService(loadConfig({ CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', ...env }), silentLogger(), { demoHistoryDays: days });
    let backfillEnded = false;
    void service.ready.finally(() => (backfillEnded = true));
    // Scrapes while the history is built: the first one with a total says how many steps were stored by then.
    let storedRuns: number | null = null;
    while (!backfillEnded) {
      const totals = samples(await (await fetch(`${service.url}/metrics`)).text(), 'cloudtally_cost_per_hour').filter((s) => s.labels.group_by === 'total');
      if (totals.length > 0) {
        expect(totals.every((s) => s.value > 0)).toBe(true);
        storedRuns = (await service.database.query<{ n: number }>("SELECT count(*)::int AS n FROM collection_runs WHERE status <> 'running'"))[0]!.n;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(storedRuns, 'no cost gauge while the demo history was built').not.toBeNull();
    expect(storedRuns!).toBeGreaterThan(0);
    expect(storedRuns!).toBeLessThan(demoHistorySteps(days));
    await service.ready;
  }, 240_000);
});

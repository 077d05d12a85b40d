/**
 * The demo answers finance's first questions (a fresh start in simulator mode, default history,
 * over real HTTP): the whole previous month and this month to date, a team whose spend jumps on
 * one day because instances were created (the anomalies report says so), one budget over, one on
 * track and one at risk by forecast, and Kubernetes clusters tagged by team. Figures by hand from
 * the demo company's list prices (src/simulator/catalog.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';

/** A start on 3 November at noon: the history goes back to 29 September (35 days), 140 steps of 6 h. */
const NOW = new Date('2026-11-03T12:00:00Z');

interface Line {
  change: string;
  name: string | null;
  price_per_hour_after: string | null;
  hours: string | null;
}
interface AnomalyRow {
  day: string;
  group: string | null;
  currency: string | null;
  kind: string;
  lines?: Line[];
}

describe('the demo a newcomer sees', () => {
  let service: RunningService;
  const json = async <T,>(path: string): Promise<T> => {
    const res = await fetch(`${service.url}${path}`);
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(200);
    return JSON.parse(text) as T;
  };

  beforeAll(async () => {
    const config = loadConfig(
      { CLOUDTALLY_DATA_DIR: 'memory://', PORT: '0', SIM_TASK_DELAY_MS: '20', CLOUDTALLY_CONFIG: 'demo.json' },
      { readFile: () => JSON.stringify({ collect_on_start: false }) },
    );
    service = await startService(config, silentLogger(), { now: () => NOW });
    await service.ready;
  }, 600_000);
  afterAll(async () => {
    await service?.stop();
  }, 60_000);

  it('holds the whole previous month and this month to date', async () => {
    const [span] = await service.database.query<{ first: Date; runs: number }>(
      `select min(taken_at) as first, count(distinct run_id)::int as runs from snapshots where kind = 'instance' and complete`,
    );
    expect(span!.runs).toBe(140);
    expect(span!.first.getTime()).toBeLessThanOrEqual(Date.parse('2026-10-01T00:00:00Z'));
    // 140 steps of 6 h before NOW (each step's snapshots a moment after the step's time).
    expect(NOW.getTime() - span!.first.getTime()).toBeGreaterThan(35 * 86_400_000 - 60_000);
    const overview = await json<{ summary: Array<{ label: string; value: unknown }> }>('/api/reports/overview');
    const forecast = overview.summary.find((s) => /daily history \(EUR\)/.test(s.label));
    expect(Number(forecast?.value)).toBeGreaterThan(0);
  });

  it('shows team research\'s spend jump on 29 October, explained by the ten H100 VMs created that day', async () => {
    const body = await json<{ rows: AnomalyRow[] }>('/api/reports/anomalies?by=tag%3Ateam&from=2026-10-15&to=2026-11-02&limit=1000');
    // 6-hour steps under the demo's 7-hour cap: every day is covered, none is a data gap.
    expect(body.rows.filter((r) => r.kind === 'data gap')).toEqual([]);
    const research = body.rows.filter((r) => r.group === 'research');
    expect(research.map((r) => [r.day, r.currency, r.kind])).toEqual([['2026-10-29', 'EUR', 'spike']]);
    const appeared = research[0]!.lines!.filter((l) => l.change === 'appeared');
    expect(appeared.map((l) => l.name).sort()).toEqual(Array.from({ length: 10 }, (_, n) => `research-burst-${String(n + 1).padStart(2, '0')}`));
    for (const line of appeared) {
      // EUR 3.10 an hour each (g3-ai-24-256-1600-h100-80-1 in 380101-38), created at the day's first step.
      expect(Number(line.price_per_hour_after)).toBe(3.1);
      expect(Number(line.hours)).toBeGreaterThan(23.99);
      expect(Number(line.hours)).toBeLessThanOrEqual(24);
    }
  });

  it('has one budget over, one on track and one at risk by forecast', async () => {
    const body = await json<{ rows: Array<Record<string, string>> }>('/api/reports/budgets');
    expect(body.rows.map((r) => [r.budget, r.currency, r.status])).toEqual([
      ['ML team (demo)', 'EUR', 'over'],
      ['Platform project (demo)', 'EUR', 'on track'],
      ['Inference project (demo)', 'USD', 'at risk'],
    ]);
    const inference = body.rows[2]!;
    // USD 6,698.10 a day (279.0875 an hour, every day alike): the forecast adds the mean of the
    // last 7 days for the 27.5 days left; the amount is set halfway between the spend so far and
    // the month's 30 days (6,698.10 x 16.25 = 108,844.13, rounded to 100).
    expect(inference.amount).toBe('108800');
    expect(Number(inference.forecast) - Number(inference.spend)).toBeCloseTo(6698.1 * 27.5, 2);
    expect(Number(inference.spend)).toBeLessThan(108_800);
    expect(Number(inference.forecast)).toBeGreaterThanOrEqual(108_800);
  });

  it('tags its Kubernetes clusters by team through its configuration, one left untagged for tag hygiene', async () => {
    const body = await json<{ rows: Array<{ kind: string; name: string; tags: Record<string, string> }> }>('/api/reports/inventory?kind=resources&limit=1000');
    const k8s = new Map(body.rows.filter((r) => r.kind === 'k8s_price').map((r) => [r.name, r.tags]));
    expect(k8s.get('k8s-prod-ml')).toEqual({ team: 'ml', env: 'prod' });
    expect(k8s.get('k8s-batch')).toEqual({ team: 'data-eng', env: 'prod' });
    expect(k8s.get('k8s-dev-sandbox')).toEqual({});
    const lacking = await json<{ rows: Array<{ kind: string; name: string }> }>('/api/reports/inventory?kind=resources&missing_tag=team&limit=1000');
    expect(new Set(lacking.rows.filter((r) => r.kind === 'k8s_price').map((r) => r.name))).toEqual(new Set(['k8s-dev-sandbox']));
  });
});

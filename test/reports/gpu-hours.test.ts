/**
 * GPU-hours and cost per GPU-hour on the cost and monthly reports, through the real web app over
 * HTTP (JSON, CSV, HTML), on the demo prices of allocation-fixture.ts. By hand, 2025-03-01, 24 h:
 *
 * EUR  ml        h100-1 (1 GPU) + a100-1 (1 GPU) = 48 GPU-hours, 133.20 -> 2.775 per GPU-hour
 *      data      l40s-2 (2 GPUs)                 = 48,  82.56 -> 1.72
 *      web       l40s-1 (1) + h100-1 stopped (0) = 24,  41.28 -> 1.72
 *      platform  l40s-1                          = 24,  41.28 -> 1.72
 *      (untagged) a100-1 = 24 GPU-hours for 58.80 -> 2.45; x-custom ("see datasheet") runs 24 h
 *                with its GPUs unknown: in "hours with GPU count unknown", not counted as 0 GPUs
 *      total 168 GPU-hours, 357.12 -> 2.125714 (357.12 / 168 = 2.1257142857..., 6 decimals); 24 h unknown
 * USD  ml a100-1 24 GPU-hours, 64.092 -> 2.6705; (untagged) l40s-1 24, 44.9952 -> 1.8748;
 *      web h100-1 24, 81.096 -> 3.379; total 72, 190.1832 -> 2.641433 (2.6414333...)
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import type { Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../web/fixtures.js';
import { ALLOCATION_NOW, allocationConfig, seedAllocation } from './allocation-fixture.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from './helpers.js';

const gpu = (rows: Row[]) => rows.map((r) => [r.group, r.currency, r.gpu_hours, r.cost_per_gpu_hour, r.gpu_unknown_hours]);

describe.each(testDatabases())('GPU-hours on $name', (database) => {
  let db: Database;
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ db, app } = await reportsApps.open(database, { seed: seedAllocation, config: allocationConfig([]), now: ALLOCATION_NOW }));
  }, 120_000);

  async function get(path: string): Promise<{ status: number; body: string }> {
    const res = await request(`${app.base}${path}`);
    return { status: res.statusCode, body: (await res.body.text()).replace(/^\uFEFF/, '') };
  }
  async function json(path: string): Promise<{ rows: Row[]; totals: Row[]; notes: string[] }> {
    const res = await get(path);
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    return JSON.parse(res.body);
  }

  const expectedRows = [
    ['ml', 'EUR', '48', '2.775', '0'],
    ['(untagged)', 'EUR', '24', '2.45', '24'],
    ['data', 'EUR', '48', '1.72', '0'],
    ['platform', 'EUR', '24', '1.72', '0'],
    ['web', 'EUR', '24', '1.72', '0'],
    ['web', 'USD', '24', '3.379', '0'],
    ['ml', 'USD', '24', '2.6705', '0'],
    ['(untagged)', 'USD', '24', '1.8748', '0'],
  ];
  const expectedTotals = [
    ['Total', 'EUR', '168', '2.125714', '24'],
    ['Total', 'USD', '72', '2.641433', '0'],
  ];

  it('gives GPU-hours and the cost per GPU-hour per group and in the totals of the cost report', async () => {
    const body = await json('/api/reports/cost?by=tag%3Ateam&period=2025-03');
    expect(gpu(body.rows)).toEqual(expectedRows);
    expect(gpu(body.totals)).toEqual(expectedTotals);
    expect(body.notes.join(' ')).toContain('GPU count cannot be read for x-custom ("see datasheet")');
  });

  it('gives the same on the monthly report', async () => {
    const body = await json('/api/reports/monthly?by=tag%3Ateam&period=2025-03');
    expect(gpu(body.rows)).toEqual(expectedRows);
    expect(gpu(body.totals)).toEqual(expectedTotals);
  });

  it('sorts the cost report by cost per GPU-hour', async () => {
    const body = await json('/api/reports/cost?by=tag%3Ateam&period=2025-03&sort=cost_per_gpu_hour&dir=desc');
    expect(body.rows.map((r) => r.cost_per_gpu_hour)).toEqual(['3.379', '2.775', '2.6705', '2.45', '1.8748', '1.72', '1.72', '1.72']);
  });

  it('writes GPU-hours and the hourly cost (4 decimals) in CSV and on the page', async () => {
    const csv = await get('/api/reports/monthly.csv?by=tag%3Ateam&period=2025-03');
    const records = parseCsv(csv.body);
    // The GPU columns, then the month's change (the last column).
    expect(records[0]!.slice(-4, -1)).toEqual(['GPU-hours', 'Cost per GPU-hour', 'Hours with GPU count unknown']);
    expect(records[1]!.slice(-4, -1)).toEqual(['48.00', '2.7750', '0.00']);
    expect(records.at(-2)!.slice(-4, -1)).toEqual(['168.00', '2.1257', '24.00']);
    const page = await get('/reports/cost?by=tag%3Ateam&period=2025-03');
    expect(page.body).toContain('Cost per GPU-hour');
    // A cell of its own (the Currency column names the currency).
    expect(page.body).toMatch(/<td[^>]*>\s*2\.7750\s*<\/td>/);
  });

  it('counts GPUs per flavor: running units x the GPUs of their flavor', async () => {
    const body = await json('/api/reports/cost?by=flavor&period=2025-03');
    const byFlavor = Object.fromEntries(body.rows.filter((r) => r.currency === 'EUR').map((r) => [r.group, r.gpu_hours]));
    // l40s-2: one instance x 2 GPUs x 24 h; h100-1: i-ml-1 24 h (i-web-2 is stopped); x-custom unknown.
    expect(byFlavor).toEqual({
      'g3-ai-24-256-1600-h100-80-1': '24',
      'g2-ai-12-120-800-a100-80-1': '48',
      'g3-ai-16-232-1600-l40s-48-1': '48',
      'g3-ai-32-464-3200-l40s-48-2': '48',
      // Only resources whose GPU count cannot be read: unknown, not 0.
      'x-custom': null,
    });
    expect(body.rows.find((r) => r.group === 'x-custom')?.gpu_unknown_hours).toBe('24');
  });

  it('lists the GPUs of each flavor in the GPU flavors report, empty where the description cannot be read', async () => {
    const body = await json('/api/reports/flavors?project=380101');
    expect(Object.fromEntries(body.rows.map((r) => [r.flavor_name, r.gpu_count]))).toEqual({
      'g2-ai-12-120-800-a100-80-1': 1,
      'g3-ai-16-232-1600-l40s-48-1': 1,
      'g3-ai-24-256-1600-h100-80-1': 1,
      'g3-ai-32-464-3200-l40s-48-2': 2,
      'x-custom': null,
    });
  });

  it('shows GPU-hours as unknown, never 0, for days whose rollups predate GPU counting', async () => {
    await db.execute('update cost_rollups set gpu_count = null, gpu_price_per_hour = null, gpu_unknown_count = null');
    // (kind=instance: the same figures, not the cached result of the first test.)
    const body = await json('/api/reports/cost?by=tag%3Ateam&period=2025-03&kind=instance');
    expect(body.rows.map((r) => [r.gpu_hours, r.cost_per_gpu_hour, r.gpu_unknown_hours])).toEqual(body.rows.map(() => [null, null, null]));
    expect(body.totals[0]!.cost).toBe('381.12');
    expect(body.notes.join(' ')).toContain('GPU-hours are empty (unknown) where the period includes days collected before cloudtally counted GPUs');
  });
});

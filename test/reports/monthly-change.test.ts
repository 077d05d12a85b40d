/**
 * Month over month in the monthly report (item 1's rule: a change only against a month covered at
 * least as well), through the real web app: JSON, the CSV parsed as a spreadsheet reads it, and
 * the page. Gaps capped at 24 h; one snapshot a day at 00:00 UTC from 2024-12-20 (collection
 * began then) to NOW = 2025-03-10 12:00.
 *
 * - p1-r1 (EUR): i1 {team: ml} g-a100 2.50/h = 60/day every day; i2 {team: web} g-h100 4.00/h =
 *   96/day from 2025-02-01 (new in February).
 * - p2-r2 (USD): j1 {team: web} g-a100 3.00/h = 72/day, stopped (costs 0) on 01-10 and 01-11.
 *
 * Coverage: 2024-11 none (0 of 720 h); 2024-12 12 days (288 of 744 h); 2025-01 744 of 744 h; 2025-02 672 of 672 h.
 * By hand:
 *   ml EUR:  Dec 12 x 60 = 720;  Jan 31 x 60 = 1860;  Feb 28 x 60 = 1680  -> Feb vs Jan (1680 - 1860) / 1860 = -9.677... % -> -9.68
 *   web EUR: Jan 0;              Feb 28 x 96 = 2688                      -> no change % (nothing to compare with)
 *   EUR:     Jan 1860;           Feb 1680 + 2688 = 4368                  -> (4368 - 1860) / 1860 = 134.838... % -> 134.84
 *   web USD: Dec 12 x 72 = 864;  Jan 29 x 72 = 2088;  Feb 28 x 72 = 2016 -> (2016 - 2088) / 2088 = -3.448... % -> -3.45
 */
import { describe, expect, it } from 'vitest';
import type { Coverage, Row } from '../../src/reports/report.js';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { instances, instancesKept } from '../../src/db/schema.js';
import { addDays } from '../../src/reports/shared/format.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { parseCsv } from '../web/fixtures.js';
import { okText, type ReportsApp } from './helpers.js';
import { A, B, instance, periodsConfig, run, seedPeriodFlavors, snapshot } from './periods-fixture.js';

const NOW = new Date('2025-03-10T12:00:00Z');
const FIRST = '2024-12-20';

async function seedMonths(db: Database): Promise<void> {
  await seedPeriodFlavors(db, new Date(`${addDays(FIRST, -1)}T23:00:00Z`));
  const ids: number[] = [];
  for (let day = FIRST; day <= '2025-03-10'; day = addDays(day, 1)) {
    const at = new Date(`${day}T00:00:00Z`);
    const runId = await run(db, at);
    const a = await snapshot(db, runId, 'instance', A, at);
    await bulkInsert(db, instancesKept, [
      { snapshotId: a, ...instance(A, 'i1', 'g-a100', 'ml', true) },
      ...(day >= '2025-02-01' ? [{ snapshotId: a, ...instance(A, 'i2', 'g-h100', 'web', true) }] : []),
    ]);
    const b = await snapshot(db, runId, 'instance', B, at);
    await bulkInsert(db, instancesKept, [{ snapshotId: b, ...instance(B, 'j1', 'g-a100', 'web', day !== '2025-01-10' && day !== '2025-01-11') }]);
    ids.push(a, b);
  }
  for (const id of ids) await computeCostRollups(db, id);
}

interface Body {
  rows: Row[];
  totals: Row[];
  columns: Array<{ key: string; label: string }>;
  notes: string[];
  previous_coverage?: Coverage;
}

describe.each(testDatabases())('month over month in the monthly report on $name', (database) => {
  let app: ReportsApp;
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedMonths, config: periodsConfig(), now: NOW }));
  }, 180_000);

  const text = (path: string) => okText(app, path);
  const json = async (path: string) => JSON.parse(await text(path)) as Body;
  const csv = async (path: string) => parseCsv(await text(path)).filter((r) => r.length > 1);
  const changes = (b: Body) => [...b.rows, ...b.totals].map((r) => [r.group, r.currency, r.change_percent]);
  /** The page's table: the header cells and each row's cells, as text. */
  const table = (html: string) => {
    const main = html.slice(html.indexOf('<table class="report-table'));
    const cells = (tr: string, tag: string) => [...tr.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((c) => c[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim());
    const head = cells(/<thead>([\s\S]*?)<\/thead>/.exec(main)![1]!, 'th');
    const rows = [...main.slice(main.indexOf('<tbody>'), main.indexOf('</tfoot>')).matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((r) => cells(r[1]!, 'td'));
    return { head, rows };
  };

  it('gives the change of the last month against a fully covered previous one, per row and per currency total', async () => {
    const body = await json('/api/reports/monthly?by=tag%3Ateam&from=2025-01&to=2025-02');
    expect(body.columns.at(-1)).toMatchObject({ key: 'change_percent', label: 'Change % 2025-02 vs 2025-01' });
    expect(changes(body)).toEqual([
      ['ml', 'EUR', -9.68],
      ['web', 'EUR', null], // no spend in January: nothing to compare with
      ['web', 'USD', -3.45],
      ['Total', 'EUR', 134.84],
      ['Total', 'USD', -3.45],
    ]);
    expect(body.previous_coverage).toMatchObject({ from: '2025-01-01T00:00:00.000Z', covered_hours: 744, period_hours: 744 });
    // One month shown: the previous month is read all the same.
    const feb = await json('/api/reports/monthly?by=tag%3Ateam&period=2025-02');
    const byKey = (b: Body) => new Map(changes(b).map(([g, c, v]) => [`${String(g)}|${String(c)}`, v]));
    expect(byKey(feb)).toEqual(byKey(body));

    const records = await csv('/api/reports/monthly.csv?by=tag%3Ateam&from=2025-01&to=2025-02');
    // The columns that were there keep their places; the change is the last one.
    expect(records[0]!.slice(0, 5)).toEqual(['tag team', 'Currency', '2025-01', '2025-02', 'Total']);
    expect(records[0]!.at(-1)).toBe('Change % 2025-02 vs 2025-01');
    expect(records.slice(1).map((r) => [r[0], r[1], r.at(-1)])).toEqual([
      ['ml', 'EUR', '-9.68'],
      ['web', 'EUR', ''],
      ['web', 'USD', '-3.45'],
      ['Total', 'EUR', '134.84'],
      ['Total', 'USD', '-3.45'],
    ]);
    const page = table(await text('/reports/monthly?by=tag%3Ateam&from=2025-01&to=2025-02&cols=all'));
    expect(page.head.at(-1)).toBe('Change % 2025-02 vs 2025-01');
    expect(page.rows.find((r) => r[0] === 'ml')!.at(-1)).toBe('-9.68');
  });

  it('compares a month in progress with as many days of the month before, as the cost report compares month to date', async () => {
    // March so far (03-01 .. 03-10 12:00, 9.5 days) against 02-01 .. 02-10 (10 days): ml EUR 570
    // against 600, web EUR 9.5 x 96 = 912 against 960, web USD 684 against 720: -5.00 % each (the
    // whole of February would have read as -66 %).
    const body = await json('/api/reports/monthly?by=tag%3Ateam&from=2025-02&to=2025-03');
    expect(body.columns.at(-1)).toMatchObject({ key: 'change_percent', label: 'Change % 2025-03 vs 2025-02-01 to 2025-02-10' });
    const march = new Map(changes(body).map(([g, c, v]) => [`${String(g)}|${String(c)}`, v]));
    expect([march.get('ml|EUR'), march.get('web|EUR'), march.get('web|USD')]).toEqual([-5, -5, -5]);
    expect(body.notes.join(' ')).toMatch(/Change % compares 2025-03 so far with 2025-02-01 to 2025-02-10/);
    // The cost report's month to date says the same for every group.
    const cost = await json('/api/reports/cost?by=tag%3Ateam&period=mtd');
    for (const row of cost.rows) expect(march.get(`${String(row.group)}|${String(row.currency)}`), String(row.group)).toBe(row.change_percent);
  });

  it('gives no change against a less covered previous month: null with the reason in JSON, an empty cell and a marked label in CSV, the reason on the page', async () => {
    const query = 'by=tag%3Ateam&from=2024-12&to=2025-01';
    const body = await json(`/api/reports/monthly?${query}`);
    expect(changes(body).map((c) => c[2])).toEqual([null, null, null, null]);
    expect(body.previous_coverage).toMatchObject({ from: '2024-12-01T00:00:00.000Z', covered_hours: 288, period_hours: 744 });
    const label = 'Change % 2025-01 vs 2024-12 (not given: 2024-12 covered 288 of 744 h)';
    expect(body.columns.at(-1)!.label).toBe(label);
    const reason = 'No change % is given: the previous period (2024-12-01 to 2024-12-31) covered 288 of 744 h, this one covered 744 of 744 h';
    expect(body.notes.some((n) => n.startsWith('Change % compares 2025-01 with 2024-12') && n.includes(reason))).toBe(true);
    const records = await csv(`/api/reports/monthly.csv?${query}`);
    expect(records[0]!.at(-1)).toBe(label);
    expect(records.slice(1).map((r) => r.at(-1))).toEqual(['', '', '', '']);
    const html = await text(`/reports/monthly?${query}&cols=all`);
    expect(html).toContain(reason);
    expect(table(html).head.at(-1)).toBe(label);
  });

  it('gives no change and says "no data" when the previous month has none, never 0', async () => {
    const query = 'by=tag%3Ateam&from=2024-11&to=2024-12';
    const body = await json(`/api/reports/monthly?${query}`);
    // November is unknown, not 0: its cells are null, and no change is computed against it.
    expect(body.rows.map((r) => [r.group, r.currency, r['2024-11'], r.change_percent])).toEqual([
      ['ml', 'EUR', null, null],
      ['web', 'USD', null, null],
    ]);
    expect(body.previous_coverage).toMatchObject({ covered_hours: 0, period_hours: 720 });
    expect(body.columns.at(-1)!.label).toBe('Change % 2024-12 vs 2024-11 (not given: 2024-11 has no data)');
    const records = await csv(`/api/reports/monthly.csv?${query}`);
    expect(records[0]!.slice(2, 4)).toEqual(['2024-11 (no data)', '2024-12 (covered 288 of 744 h)']);
    expect(records.slice(1).map((r) => [r[2], r.at(-1)])).toEqual([['', ''], ['', ''], ['', ''], ['', '']]);
    const html = await text(`/reports/monthly?${query}&cols=all`);
    expect(html).toContain('The previous period (2024-11-01 to 2024-11-30) has no data');
    expect(table(html).rows.find((r) => r[0] === 'ml')!.slice(2, 3)).toEqual(['no data']);
  });
});

/**
 * One rule of coverage for the cost figures, the cost report's coverage and the anomalies' data
 * gaps: snapshots taken on a 6 h schedule with seconds of drift under a 6 h cap cover every hour,
 * while a real hole of 8 h is a gap of exactly those hours, and the cost counts exactly the
 * covered hours.
 *
 * One scope, one instance of team ml on a 2.50 EUR/h flavor, cap 6 h. Snapshots every 6 h from
 * 2025-05-01 00:00 to 2025-05-15 12:00 UTC, each a few seconds early or late (-5 .. +5 s), except
 * on 05-10: 06:00:00 on time, none at 12:00, the 18:00 one taken at 20:00:00. So 05-10 is covered
 * 00:00-12:00 (the 06:00 rate holds its 6 h cap) and 20:00-24:00: 16 h, 40.00 EUR; every other
 * day 24 h, 60.00 EUR. NOW = 05-15 12:00: the last complete day is 05-14.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instances, gpuFlavorsKept, instancesKept } from '../../src/db/schema.js';
import { loadConfig } from '../../src/config/index.js';
import type { Coverage, Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { parseCsv } from '../web/fixtures.js';
import { dec, type ReportsApp } from './helpers.js';
import { instance, run, snapshot } from './periods-fixture.js';

const NOW = new Date('2025-05-15T12:00:00Z');
const S = { scopeKey: 'p1-r1', projectId: 1, regionId: 1 };
const config = loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 6 }) });

/** The drifted snapshot times. */
function times(): Date[] {
  const out: Date[] = [];
  let i = 0;
  for (let t = Date.parse('2025-05-01T00:00:00Z'); t <= NOW.getTime(); t += 6 * 3600_000, i++) {
    const at = new Date(t).toISOString();
    if (at === '2025-05-10T12:00:00.000Z') continue;
    if (at === '2025-05-10T18:00:00.000Z') out.push(new Date('2025-05-10T20:00:00Z'));
    else if (at === '2025-05-10T06:00:00.000Z' || i === 0) out.push(new Date(t));
    else out.push(new Date(t + (((i * 7) % 11) - 5) * 1000 + (i % 3) * 137));
  }
  return out;
}

async function seed(db: Database): Promise<void> {
  const flavorAt = new Date('2025-04-30T23:00:00Z');
  const f = await snapshot(db, await run(db, flavorAt), 'flavor', S, flavorAt);
  await bulkInsert(db, gpuFlavorsKept, [
    { snapshotId: f, flavorId: 'f-g-a100', flavorName: 'g-a100', currencyCode: 'EUR', pricePerHour: '2.50', pricePerMonth: null, priceStatus: 'show', projectId: 1, regionId: 1, raw: {} },
  ]);
  for (const at of times()) {
    const id = await snapshot(db, await run(db, at), 'instance', S, at);
    await bulkInsert(db, instancesKept, [{ snapshotId: id, ...instance(S, 'i1', 'g-a100', 'ml', true) }]);
    await computeCostRollups(db, id);
  }
}

interface Body {
  rows: Row[];
  totals?: Row[];
  coverage?: Coverage;
}

describe.each(testDatabases())('one rule of coverage on $name', (database) => {
  let app: ReportsApp;
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed, config, now: NOW }));
  }, 120_000);

  const get = async (path: string) => {
    const res = await request(`${app.base}${path}`);
    const text = await res.body.text();
    expect(res.statusCode, text.slice(0, 300)).toBe(200);
    return text;
  };
  const json = async (path: string) => JSON.parse(await get(path)) as Body;

  it('calls a week of drifted snapshots fully covered and counts every hour of it', async () => {
    const body = await json('/api/reports/cost?by=tag:team&from=2025-05-02&to=2025-05-08');
    expect(body.coverage).toMatchObject({ covered_hours: 168, period_hours: 168 });
    // 7 days x 24 h x 2.50
    expect(body.rows.map((r) => [r.group, dec(r.cost)])).toEqual([['ml', 420]]);
  });

  it('shows the 8 h hole as uncovered hours, and costs only the covered ones', async () => {
    const day = await json('/api/reports/cost?by=tag:team&from=2025-05-10&to=2025-05-10');
    expect(day.coverage).toMatchObject({ covered_hours: 16, period_hours: 24 });
    expect(day.rows.map((r) => [r.group, dec(r.cost)])).toEqual([['ml', 40]]); // 16 h x 2.50
  });

  it('lists only the day with the hole as a data gap, with its covered hours', async () => {
    const body = await json('/api/reports/anomalies?by=tag:team&from=2025-05-01&to=2025-05-14');
    expect(body.rows.map((r) => [r.day, r.kind, r.lines])).toEqual([['2025-05-10', 'data gap', [{ kind: 'instance', scope: 'p1-r1', covered_hours: 16 }]]]);
    const csv = parseCsv((await get('/api/reports/anomalies.csv?by=tag:team&from=2025-05-01&to=2025-05-14')).replace(/^\uFEFF/, ''));
    const kind = csv[0]!.indexOf('Kind');
    expect(csv.slice(1).filter((r) => r[kind] === 'data gap').map((r) => r[0])).toEqual(['2025-05-10']);
  });
});

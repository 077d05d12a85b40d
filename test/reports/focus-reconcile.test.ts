/**
 * The FOCUS export reconciles with the cost report, over real HTTP on both databases: summed by a
 * tag (the normalised tags, x_NormalizedTags) its rows give the cost report by that tag, exactly;
 * every ListUnitPrice is a price the cloud published and ListUnitPrice x PricingQuantity = ListCost
 * on every row; Kubernetes rows name their region; the dataset metadata (FOCUS version, schema) is
 * readable without the rows.
 *
 * The history, one day (2025-03-10), NOW = 20:00 UTC, gaps capped at 3 h, tag values lower-cased:
 * - Instance and Kubernetes snapshots at 00, 02, 04, 06, 12, 14, 16 and 18 h: the 06:00 one holds
 *   until 09:00 (cap), 09:00-12:00 is a gap; the 18:00 one holds until NOW.
 * - p1-r1 prices (EUR): g-a100 2.50/h and g-h100 4.00/h; a flavor snapshot at 13:00 reprices
 *   g-a100 to 3.00/h (g-h100 unchanged), so the instance snapshots from 14:00 on cost the new price.
 *   p2-r2 (USD): g-a100 3.00/h all day.
 * - a1 g-a100: untagged at 00 and 02; retagged `Team: Platform` (normalised team: platform) from 04.
 * - a2 g-a100 {team: ml}. a3 g-h100 {team: ml, gpu-reserved (no value)}, stopped from 16:00.
 * - k8s-prod (p1-r1) EUR 1.20/h, no tags. b1 (p2-r2) g-a100 {team: web}.
 *
 * By hand, per row (segment) and by team:
 *   a1: 00-04 untagged 2.50 x 4 = 10.00; 04-09 platform 2.50 x 5 = 12.50; 12-14 2.50 x 2 = 5.00;
 *       14-20 3.00 x 6 = 18.00
 *   a2: 00-09 2.50 x 9 = 22.50; 12-14 5.00; 14-20 18.00
 *   a3: 00-09 4.00 x 9 = 36.00; 12-16 4.00 x 4 = 16.00 (the new flavor snapshot kept its price: no split)
 *   k8s-prod: 00-09 1.20 x 9 = 10.80; 12-20 1.20 x 8 = 9.60
 *   b1: 00-09 3.00 x 9 = 27.00; 12-20 3.00 x 8 = 24.00
 *   EUR: (untagged) 10.00 + 20.40 = 30.40; platform 35.50; ml 45.50 + 52.00 = 97.50. USD: web 51.00.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { bulkInsert } from '../../src/db/bulk.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { gpuFlavors, instances, k8sClusterPrices, snapshots, gpuFlavorsKept, instancesKept, k8sClusterPricesKept } from '../../src/db/schema.js';
import { appTest } from '../helpers/reports-app.js';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../web/fixtures.js';
import { checkFocusRows } from './focus-rules.js';
import type { ReportsApp } from './helpers.js';

const NOW = new Date('2025-03-10T20:00:00Z');
const DAY = '2025-03-10';
const HOURS = [0, 2, 4, 6, 12, 14, 16, 18];
const A = { scopeKey: 'p1-r1', projectId: 1, regionId: 1 };
const B = { scopeKey: 'p2-r2', projectId: 2, regionId: 2 };
type Scope = typeof A;
const at = (hour: number, minute = 0) => new Date(Date.UTC(2025, 2, 10, hour, minute));

/** The prices the cloud published (flavor lists and the Kubernetes price), per currency. */
const PUBLISHED = { EUR: ['2.50', '4.00', '3.00', '1.20'], USD: ['3.00'] } as Record<string, string[]>;

function config(): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 3, tag_value_case: 'lower' }) });
}

async function runAt(db: Database, when: Date): Promise<number> {
  const [row] = await db.query<{ id: number }>(
    `insert into collection_runs (trigger, collectors, started_at, finished_at, heartbeat_at, status, counts, errors, runner_id)
     values ('schedule', '{instances,flavors,k8s_prices}', $1, $1, $1, 'succeeded', '{}', '[]', 'test') returning id`,
    [when],
  );
  return row!.id;
}

async function snapshotAt(db: Database, runId: number, kind: 'instance' | 'flavor' | 'k8s_price', scope: Scope, when: Date): Promise<number> {
  const [row] = await db.db
    .insert(snapshots)
    .values({ runId, kind, scopeKey: scope.scopeKey, projectId: scope.projectId, regionId: scope.regionId, takenAt: when, complete: true, rowCount: 0 })
    .returning({ id: snapshots.id });
  return row!.id;
}

function flavor(snapshotId: number, scope: Scope, name: string, currency: string, hour: string) {
  return { snapshotId, flavorId: `f-${name}`, flavorName: name, currencyCode: currency, pricePerHour: hour, priceStatus: 'show', hardware: { gpu: '8x A100' }, projectId: scope.projectId, regionId: scope.regionId, raw: {} };
}

/** An instance row: `original` is the tag list as the API gave it, `tags` what the collector normalised it to. */
function instance(snapshotId: number, scope: Scope, id: string, flavorName: string, active: boolean, original: Array<{ key: string; value: string | null }>, tags: Record<string, string>) {
  return {
    snapshotId,
    instanceId: id,
    name: id,
    status: active ? 'ACTIVE' : 'SHUTOFF',
    vmState: active ? 'active' : 'stopped',
    flavorId: `f-${flavorName}`,
    flavorName,
    projectId: scope.projectId,
    regionId: scope.regionId,
    region: `region-${scope.regionId}`,
    tags,
    tagsOriginal: original.map((t) => ({ key: t.key, value: t.value as string, read_only: false })),
    raw: { id },
  };
}

async function seedHistory(db: Database): Promise<void> {
  const priced: number[] = [];
  const before = new Date('2025-03-09T23:00:00Z');
  const runF = await runAt(db, before);
  const eur = await snapshotAt(db, runF, 'flavor', A, before);
  await bulkInsert(db, gpuFlavorsKept, [flavor(eur, A, 'g-a100', 'EUR', '2.50'), flavor(eur, A, 'g-h100', 'EUR', '4.00')]);
  const usd = await snapshotAt(db, runF, 'flavor', B, before);
  await bulkInsert(db, gpuFlavorsKept, [flavor(usd, B, 'g-a100', 'USD', '3.00')]);
  // The repricing: from 13:00 on, g-a100 costs 3.00 in p1-r1.
  const runR = await runAt(db, at(13));
  const repriced = await snapshotAt(db, runR, 'flavor', A, at(13));
  await bulkInsert(db, gpuFlavorsKept, [flavor(repriced, A, 'g-a100', 'EUR', '3.00'), flavor(repriced, A, 'g-h100', 'EUR', '4.00')]);

  for (const hour of HOURS) {
    const runId = await runAt(db, at(hour));
    const a = await snapshotAt(db, runId, 'instance', A, at(hour));
    const a1 = hour < 4 ? instance(a, A, 'a1', 'g-a100', true, [], {}) : instance(a, A, 'a1', 'g-a100', true, [{ key: 'Team', value: 'Platform' }], { team: 'platform' });
    await bulkInsert(db, instancesKept, [
      a1,
      instance(a, A, 'a2', 'g-a100', true, [{ key: 'team', value: 'ml' }], { team: 'ml' }),
      instance(a, A, 'a3', 'g-h100', hour < 16, [{ key: 'team', value: 'ml' }, { key: 'gpu-reserved', value: null }], { team: 'ml', 'gpu-reserved': '' }),
    ]);
    const b = await snapshotAt(db, runId, 'instance', B, at(hour));
    await bulkInsert(db, instancesKept, [instance(b, B, 'b1', 'g-a100', true, [{ key: 'team', value: 'web' }], { team: 'web' })]);
    const k = await snapshotAt(db, runId, 'k8s_price', A, at(hour));
    await bulkInsert(db, k8sClusterPricesKept, [
      { snapshotId: k, clusterName: 'k8s-prod', currencyCode: 'EUR', pricePerHour: '1.20', pricePerMonth: '876', priceStatus: 'show', projectId: 1, regionId: 1, raw: {} },
    ]);
    priced.push(a, b, k);
  }
  for (const id of priced) await computeCostRollups(db, id);
}

/** An exact decimal as an integer count of 10^-20 (every amount here has fewer decimals). */
const SCALE = 20;
function exact(text: unknown): bigint {
  const s = String(text);
  expect(s, 'a plain decimal').toMatch(/^-?\d+(\.\d{1,20})?$/);
  const [whole, fraction = ''] = s.replace('-', '').split('.');
  const value = BigInt(whole! + fraction.padEnd(SCALE, '0'));
  return s.startsWith('-') ? -value : value;
}
const ONE = 10n ** BigInt(SCALE);

type Rec = Record<string, unknown>;

/** Sum of BilledCost per (team in x_NormalizedTags, currency), exact. */
function byTeam(rows: readonly Rec[], tags: (row: Rec) => Record<string, unknown>): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  for (const row of rows) {
    const team = tags(row).team;
    const key = `${team === undefined ? '(untagged)' : String(team)}|${String(row.BillingCurrency)}`;
    sums.set(key, (sums.get(key) ?? 0n) + exact(row.BilledCost));
  }
  return sums;
}

describe.each(testDatabases())('FOCUS reconciles with the cost report on $name', (database) => {
  let app: ReportsApp;
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedHistory, config, now: NOW }));
  }, 120_000);

  async function get(path: string) {
    const res = await request(`${app.base}${path}`);
    const body = (await res.body.text()).replace(/^\uFEFF/, '');
    expect(res.statusCode, body.slice(0, 300)).toBe(200);
    return { headers: res.headers, body };
  }
  const json = async (path: string) => JSON.parse((await get(path)).body) as { rows: Rec[]; columns: Array<{ key: string }>; metadata?: Rec; metadata_url?: string };

  /** The FOCUS rows as a spreadsheet reads the CSV: the header row, then one record per row (empty cell = null, JSON cells parsed). */
  async function csvRows(path: string): Promise<{ rows: Rec[]; columns: string[]; headers: Record<string, unknown> }> {
    const { body, headers } = await get(path);
    const records = parseCsv(body).filter((r) => r.some((cell) => cell !== ''));
    const at = records.findIndex((r) => r.includes('BilledCost'));
    const columns = records[at]!;
    const rows = records.slice(at + 1).map((r) => {
      const row: Rec = {};
      columns.forEach((c, i) => {
        const cell = r[i] ?? '';
        row[c] = cell === '' ? null : ['Tags', 'x_NormalizedTags', 'SkuPriceDetails'].includes(c) ? JSON.parse(cell) : cell;
      });
      return row;
    });
    return { rows, columns, headers };
  }

  const COST_BY_TEAM = new Map([
    ['(untagged)|EUR', exact('30.40')],
    ['platform|EUR', exact('35.50')],
    ['ml|EUR', exact('97.50')],
    ['web|USD', exact('51.00')],
  ]);

  it('sums by team (x_NormalizedTags) to the cost report by tag:team, exactly, in CSV and JSON', async () => {
    const report = await json(`/api/reports/cost?by=tag:team&from=${DAY}&to=${DAY}&limit=1000`);
    const costReport = new Map(report.rows.filter((r) => r.cost !== null && exact(r.cost) !== 0n).map((r) => [`${String(r.group)}|${String(r.currency)}`, exact(r.cost)]));
    expect(costReport).toEqual(COST_BY_TEAM);

    const csv = await csvRows(`/api/reports/focus.csv?from=${DAY}&to=${DAY}`);
    const fromJson = (await json(`/api/reports/focus?from=${DAY}&to=${DAY}&limit=1000`)).rows;
    for (const rows of [csv.rows, fromJson]) {
      expect(byTeam(rows, (r) => r.x_NormalizedTags as Record<string, unknown>)).toEqual(COST_BY_TEAM);
      checkFocusRows(rows, Object.keys(rows[0]!));
    }
    // The provider's tags are passed on as given: the retagged instance says "Team": "Platform".
    const a1 = csv.rows.filter((r) => r.ResourceId === 'a1');
    expect(a1.map((r) => [r.ChargePeriodStart, r.ChargePeriodEnd, r.BilledCost, r.Tags, r.x_NormalizedTags])).toEqual([
      ['2025-03-10T00:00:00Z', '2025-03-10T04:00:00Z', '10', {}, {}],
      ['2025-03-10T04:00:00Z', '2025-03-10T09:00:00Z', '12.5', { Team: 'Platform' }, { team: 'platform' }],
      ['2025-03-10T12:00:00Z', '2025-03-10T14:00:00Z', '5', { Team: 'Platform' }, { team: 'platform' }],
      ['2025-03-10T14:00:00Z', '2025-03-10T20:00:00Z', '18', { Team: 'Platform' }, { team: 'platform' }],
    ]);
    // A tag without a value is `true` in Tags (FOCUS), the empty value in the normalised tags.
    const a3 = csv.rows.filter((r) => r.ResourceId === 'a3');
    expect(a3.map((r) => [r.ChargePeriodStart, r.ChargePeriodEnd, r.BilledCost, r.Tags])).toEqual([
      ['2025-03-10T00:00:00Z', '2025-03-10T09:00:00Z', '36', { team: 'ml', 'gpu-reserved': true }],
      ['2025-03-10T12:00:00Z', '2025-03-10T16:00:00Z', '16', { team: 'ml', 'gpu-reserved': true }],
    ]);
    expect(a3[0]!.x_NormalizedTags).toEqual({ team: 'ml', 'gpu-reserved': '' });
  });

  it('gives only published unit prices, ListUnitPrice x PricingQuantity = ListCost on every row, and the region on Kubernetes rows', async () => {
    const csv = await csvRows(`/api/reports/focus.csv?from=${DAY}&to=${DAY}`);
    const fromJson = (await json(`/api/reports/focus?from=${DAY}&to=${DAY}&limit=1000`)).rows;
    for (const rows of [csv.rows, fromJson]) {
      expect(rows).toHaveLength(13);
      for (const row of rows) {
        const published = PUBLISHED[String(row.BillingCurrency)]!.map(exact);
        expect(published, `${String(row.ResourceId)} ${String(row.ChargePeriodStart)} ListUnitPrice ${String(row.ListUnitPrice)}`).toContain(exact(row.ListUnitPrice));
        expect(exact(row.ListUnitPrice) * exact(row.PricingQuantity), `${String(row.ResourceId)} ${String(row.ChargePeriodStart)}`).toBe(exact(row.ListCost) * ONE);
        expect(row.RegionName, `${String(row.ResourceId)} RegionName`).toBe(`region-${String(row.RegionId)}`);
        expect(row.SkuPriceId).not.toBeNull();
      }
      // The repriced flavor: a2 at 2.50 until 14:00, then 3.00 (two rows, not one at a weighted price).
      expect(rows.filter((r) => r.ResourceId === 'a2').map((r) => [r.ChargePeriodStart, r.ChargePeriodEnd, exact(r.ListUnitPrice), exact(r.PricingQuantity), exact(r.BilledCost)])).toEqual([
        ['2025-03-10T00:00:00Z', '2025-03-10T09:00:00Z', exact('2.5'), exact('9'), exact('22.5')],
        ['2025-03-10T12:00:00Z', '2025-03-10T14:00:00Z', exact('2.5'), exact('2'), exact('5')],
        ['2025-03-10T14:00:00Z', '2025-03-10T20:00:00Z', exact('3'), exact('6'), exact('18')],
      ]);
      const k8s = rows.filter((r) => r.x_ResourceKind === 'k8s_price');
      expect(k8s.map((r) => [r.ResourceId, r.ChargePeriodStart, r.ChargePeriodEnd, r.BilledCost, r.RegionName, r.SkuPriceDetails])).toEqual([
        ['p1-r1/k8s-prod', '2025-03-10T00:00:00Z', '2025-03-10T09:00:00Z', '10.8', 'region-1', null],
        ['p1-r1/k8s-prod', '2025-03-10T12:00:00Z', '2025-03-10T20:00:00Z', '9.6', 'region-1', null],
      ]);
      const b1 = rows.find((r) => r.ResourceId === 'b1')!;
      expect([b1.SkuId, b1.SkuPriceId, b1.SkuMeter, b1.SkuPriceDetails]).toEqual(['g-a100', 'p2-r2/g-a100', 'GPU Instance Hours', { F_InstanceType: 'g-a100', F_GpuCount: 8 }]);
    }
  });

  it('states the FOCUS version and schema without the rows: headers, a metadata document and its link', async () => {
    const meta = await get('/api/reports/focus/metadata');
    const document = JSON.parse(meta.body) as { Schema: Array<{ SchemaId: string; FocusVersion: string; CreationDate: string; ColumnDefinition: Array<{ ColumnName: string; DataType: string }> }> };
    const schema = document.Schema[0]!;
    expect(schema.FocusVersion).toBe('1.2');
    // Pinned: a change of columns changes the id (then also change the schema's CreationDate in focus.ts).
    expect([schema.SchemaId, schema.CreationDate]).toEqual(['6b4a92a8-dda1-89ec-adec-b289d5370400', '2026-11-28T00:00:00Z']);
    expect(schema.SchemaId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const csv = await csvRows(`/api/reports/focus.csv?from=${DAY}&to=${DAY}`);
    // One column definition per column of the file, in its order, with FOCUS's data types.
    expect(schema.ColumnDefinition.map((c) => c.ColumnName)).toEqual(csv.columns);
    const typeOf = new Map(schema.ColumnDefinition.map((c) => [c.ColumnName, c.DataType]));
    expect([typeOf.get('BilledCost'), typeOf.get('ChargePeriodStart'), typeOf.get('Tags'), typeOf.get('ServiceName')]).toEqual(['DECIMAL', 'DATETIME', 'JSON', 'STRING']);
    for (const headers of [meta.headers, csv.headers, (await get(`/api/reports/focus?from=${DAY}&to=${DAY}`)).headers]) {
      expect(headers['x-focus-version']).toBe('1.2');
      expect(headers['x-focus-schema-id']).toBe(schema.SchemaId);
      expect(headers.link).toBe('</api/reports/focus/metadata>; rel="describedby"; type="application/json"');
    }
    const body = await json(`/api/reports/focus?from=${DAY}&to=${DAY}`);
    expect(body.metadata_url).toBe('/api/reports/focus/metadata');
    expect(body.metadata).toEqual(document);
    // Other reports are no dataset exports.
    expect((await request(`${app.base}/api/reports/cost/metadata`)).statusCode).toBe(404);
    expect((await request(`${app.base}/api/reports/cost.csv?by=kind`)).headers['x-focus-version']).toBeUndefined();
  });
});

/**
 * Rows that add up (docs/focus.md, "Rows that add up"): a history whose segments cost decimals
 * without end, so that each row divided on its own does not add up to the total. One day
 * (2025-03-10), NOW = 20:00 UTC, gaps capped at 3 h; instance snapshots at 00:00, 02:00, 04:40,
 * 06:00, 12:00, 14:00 and 17:00 (the 06:00 one holds until 09:00: 09:00-12:00 is a gap).
 * - p1-r1 (EUR): g-a 1.001/h, repriced to 1.002/h by a flavor list at 12:30 (from the 14:00 snapshot).
 *   x1 {team: a} all day: 00-09 9 h x 1.001 = 9.009; 12-14 2.002; 14-20 6 h x 1.002 = 6.012 = 17.023.
 *   x2 untagged until 04:40, then {team: b}: 00:00-04:40 16,800 s x 1.001 / 3600 = 4.671333...;
 *      04:40-09:00 15,600 s x 1.001 / 3600 = 4.337666...; 12-14 2.002; 14-20 6.012 (= 17.023).
 *   x3 {team: a} and x4 (untagged) stopped from 04:40: 4.671333... each.
 *   EUR 2 x 17.023 + 2 x 4.671333... = 43.388666...; a 21.694333..., b 12.351666..., untagged 9.342666...
 * - p2-r2 (USD): y1 {team: c} g-u 0.3335/h all day: 9 h + 8 h = 5.6695; y2 {team: c} g-v 1.001/h from
 *   04:40: 4.337666... + 8 h x 1.001 = 12.345666...; USD 18.015166...
 * At 16 decimals, half up: EUR 43.3886666666666667, USD 18.0151666666666667. Each of the four rows
 * of 4.671333... cut to 16 decimals loses a third of a unit of the 16th decimal: divided on their
 * own, the rows add up to 43.3886666666666666.
 */
const FOOT_HOURS: Array<[number, number]> = [[0, 0], [2, 0], [4, 40], [6, 0], [12, 0], [14, 0], [17, 0]];

async function seedEndless(db: Database): Promise<void> {
  const before = new Date('2025-03-09T23:00:00Z');
  const runF = await runAt(db, before);
  const eur = await snapshotAt(db, runF, 'flavor', A, before);
  await bulkInsert(db, gpuFlavorsKept, [flavor(eur, A, 'g-a', 'EUR', '1.001')]);
  const usd = await snapshotAt(db, runF, 'flavor', B, before);
  await bulkInsert(db, gpuFlavorsKept, [flavor(usd, B, 'g-u', 'USD', '0.3335'), flavor(usd, B, 'g-v', 'USD', '1.001')]);
  const runR = await runAt(db, at(12, 30));
  const repriced = await snapshotAt(db, runR, 'flavor', A, at(12, 30));
  await bulkInsert(db, gpuFlavorsKept, [flavor(repriced, A, 'g-a', 'EUR', '1.002')]);
  const priced: number[] = [];
  for (const [hour, minute] of FOOT_HOURS) {
    const early = hour < 4;
    const runId = await runAt(db, at(hour, minute));
    const a = await snapshotAt(db, runId, 'instance', A, at(hour, minute));
    const team = (t: string): [Array<{ key: string; value: string }>, Record<string, string>] => [[{ key: 'team', value: t }], { team: t }];
    await bulkInsert(db, instancesKept, [
      instance(a, A, 'x1', 'g-a', true, ...team('a')),
      early ? instance(a, A, 'x2', 'g-a', true, [], {}) : instance(a, A, 'x2', 'g-a', true, ...team('b')),
      instance(a, A, 'x3', 'g-a', early, ...team('a')),
      instance(a, A, 'x4', 'g-a', early, [], {}),
    ]);
    const b = await snapshotAt(db, runId, 'instance', B, at(hour, minute));
    await bulkInsert(db, instancesKept, [instance(b, B, 'y1', 'g-u', true, ...team('c')), ...(early ? [] : [instance(b, B, 'y2', 'g-v', true, ...team('c'))])]);
    priced.push(a, b);
  }
  for (const id of priced) await computeCostRollups(db, id);
}

/** An exact decimal as a count of 10^-16 (the scale of every exact figure). */
const UNITS = 16;
function units(text: unknown): bigint {
  const s = String(text);
  expect(s, 'a plain decimal with at most 16 decimals').toMatch(/^\d+(\.\d{1,16})?$/);
  const [whole, fraction = ''] = s.split('.');
  return BigInt(whole! + fraction.padEnd(UNITS, '0'));
}

describe.each(testDatabases())('FOCUS rows that add up to the total on $name', (database) => {
  let app: ReportsApp;
  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database, { seed: seedEndless, config, now: NOW }));
  }, 120_000);

  async function body(path: string): Promise<string> {
    const res = await request(`${app.base}${path}`);
    const text = (await res.body.text()).replace(/^\uFEFF/, '');
    expect(res.statusCode, text.slice(0, 300)).toBe(200);
    return text;
  }
  type Out = { rows: Rec[]; totals: Rec[]; summary: Array<{ label: string; value: unknown }> };
  const json = async (path: string) => JSON.parse(await body(path)) as Out;
  /** The CSV as a spreadsheet reads it: a header row, then one record per line. */
  async function csv(path: string): Promise<Rec[]> {
    const records = parseCsv(await body(path)).filter((r) => r.some((cell) => cell !== ''));
    const at = records.findIndex((r) => r.includes('BilledCost'));
    return records.slice(at + 1).map((r) => Object.fromEntries(records[at]!.map((c, i) => [c, c.endsWith('Tags') ? JSON.parse(r[i]!) : r[i]])));
  }
  const sumBy = (rows: readonly Rec[], key: (r: Rec) => string) => {
    const sums = new Map<string, bigint>();
    for (const r of rows) sums.set(key(r), (sums.get(key(r)) ?? 0n) + units(r.BilledCost));
    return sums;
  };
  const teamOf = (r: Rec) => `${String((r.x_NormalizedTags as Record<string, string>).team ?? '(untagged)')}|${String(r.BillingCurrency)}`;

  const TOTALS = new Map([['EUR', units('43.3886666666666667')], ['USD', units('18.0151666666666667')]]);
  const BY_TEAM = new Map([
    ['a|EUR', units('21.6943333333333333')],
    ['b|EUR', units('12.3516666666666667')],
    ['(untagged)|EUR', units('9.3426666666666667')],
    ['c|USD', units('18.0151666666666667')],
  ]);

  it('adds up, in CSV and JSON, per currency and by team, to the FOCUS total and the cost report to the last digit, one amount in every cost column', async () => {
    const q = `from=${DAY}&to=${DAY}`;
    const cost = await json(`/api/reports/cost?by=tag:team&${q}&limit=1000`);
    const costTotals = new Map(cost.totals.map((t) => [String(t.currency), units(t.cost)]));
    const costByTeam = new Map(cost.rows.filter((r) => r.cost !== null && units(r.cost) > 0n).map((r) => [`${String(r.group)}|${String(r.currency)}`, units(r.cost)]));
    expect(costTotals).toEqual(TOTALS);
    expect(costByTeam).toEqual(BY_TEAM);

    const focus = await json(`/api/reports/focus?${q}&limit=1000`);
    expect(new Map(focus.totals.map((t) => [String(t.BillingCurrency), units(t.BilledCost)]))).toEqual(TOTALS);
    expect(new Map(['EUR', 'USD'].map((c) => [c, units(focus.summary.find((s) => s.label === `BilledCost (${c})`)!.value)]))).toEqual(TOTALS);
    const file = await csv(`/api/reports/focus.csv?${q}`);
    expect(file).toHaveLength(13);
    for (const rows of [file, focus.rows]) {
      expect(sumBy(rows, (r) => String(r.BillingCurrency))).toEqual(TOTALS);
      expect(sumBy(rows, teamOf)).toEqual(BY_TEAM);
    }
    // The same figures in both formats, each within a unit of the 16th decimal of its exact value:
    // the two units the four 4.671333... and the 4.337666... rows lack go to the largest remainders.
    const figures = (rows: readonly Rec[]) => rows.map((r) => [r.ResourceId, r.ChargePeriodStart, r.BilledCost]);
    expect(figures(focus.rows)).toEqual(figures(file));
    expect(figures(file).filter(([id]) => id !== 'x1' && id !== 'y1')).toEqual([
      ['x2', '2025-03-10T00:00:00Z', '4.6713333333333334'],
      ['x2', '2025-03-10T04:40:00Z', '4.3376666666666667'],
      ['x2', '2025-03-10T12:00:00Z', '2.002'],
      ['x2', '2025-03-10T14:00:00Z', '6.012'],
      ['x3', '2025-03-10T00:00:00Z', '4.6713333333333333'],
      ['x4', '2025-03-10T00:00:00Z', '4.6713333333333333'],
      ['y2', '2025-03-10T04:40:00Z', '4.3376666666666667'],
      ['y2', '2025-03-10T12:00:00Z', '8.008'],
    ]);
    // Every cost column one amount, and ListUnitPrice x PricingQuantity = ListCost to the 16th decimal.
    for (const row of file) {
      const label = `${String(row.ResourceId)} ${String(row.ChargePeriodStart)}`;
      expect([row.ContractedCost, row.EffectiveCost, row.ListCost], label).toEqual([row.BilledCost, row.BilledCost, row.BilledCost]);
      // Both at 32 decimals: within (price + 1) units of the 16th decimal.
      const price = units(row.ListUnitPrice);
      const product = price * units(row.PricingQuantity);
      const cost = units(row.ListCost) * 10n ** BigInt(UNITS);
      const off = product > cost ? product - cost : cost - product;
      expect(off, label).toBeLessThanOrEqual(price + 10n ** BigInt(UNITS));
      // Whole hours: exactly.
      if (/:00:00Z$/.test(String(row.ChargePeriodStart)) && /:00:00Z$/.test(String(row.ChargePeriodEnd))) expect(product, label).toBe(cost);
    }
  });

  it('adds up to the cost report within a project too', async () => {
    const q = `from=${DAY}&to=${DAY}&project=1`;
    const cost = await json(`/api/reports/cost?by=project&${q}`);
    const focus = await csv(`/api/reports/focus.csv?${q}`);
    expect(cost.totals.map((t) => [t.currency, units(t.cost)])).toEqual([['EUR', TOTALS.get('EUR')]]);
    expect(sumBy(focus, (r) => String(r.BillingCurrency))).toEqual(new Map([['EUR', TOTALS.get('EUR')]]));
  });
});

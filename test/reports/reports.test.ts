/**
 * Report values against amounts computed by hand from the known dataset (fixture.ts).
 * NOW = 2025-03-10 17:30 UTC. Latest run-rates (T3 = 17:00):
 *   EUR: instances i1 2.50 + i5 2.50 + i7 2.50 (i2, i3 stopped) = 7.50; cluster bm-1 2 x 2.50 = 5.00;
 *        Kubernetes 1.20 -> 13.70/h; monthly 3 x 1825 + 2 x 1825 + 876 = 10001.
 *   USD: j1 3.00/h, 2190/month. Unpriced: i4 (hidden price), j2 (unknown flavor).
 * Cost per day (see test/costing/cost-model.test.ts): 03-09 EUR 2.50; 03-10 EUR 69.75, USD 13.50.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { refreshCostDaily } from '../../src/costing/derive/closed-days.js';
import { changesReport } from '../../src/reports/changes.js';
import { collectionHealthReport } from '../../src/reports/collection-health.js';
import { costReport } from '../../src/reports/cost.js';
import { flavorsReport } from '../../src/reports/flavors.js';
import { kindLabel } from '../../src/reports/shared/format.js';
import { focusReport, focusRows } from '../../src/reports/focus.js';
import { allReports, dataReports } from '../../src/reports/index.js';
import { inventoryReport, inventoryRows } from '../../src/reports/inventory.js';
import { k8sPricesReport } from '../../src/reports/k8s-prices.js';
import { overviewReport } from '../../src/reports/overview.js';
import type { Row } from '../../src/reports/report.js';
import { tagHygieneReport, variantGroups } from '../../src/reports/tag-hygiene.js';
import { trendReport } from '../../src/reports/trend.js';
import { testDatabases } from '../helpers/databases.js';
import { streamCsv } from '../../src/present/csv.js';
import { openKnownDataset, dec, exportRows, pick, run, summaryValue, type Ctx } from './helpers.js';

describe.each(testDatabases())('reports on $name', ({ open }) => {
  let db: Database;
  let ctx: Ctx;

  beforeAll(async () => ({ db, ctx } = await openKnownDataset(open)));
  afterAll(async () => {
    await db?.close();
  });

  describe('overview', () => {
    it('shows run-rate, month to date and the projection per currency', async () => {
      const out = await run(overviewReport, ctx);
      expect(dec(summaryValue(out, 'Run-rate per hour (EUR)'))).toBe(13.7);
      expect(dec(summaryValue(out, 'Run-rate per month (EUR)'))).toBe(10001);
      expect(dec(summaryValue(out, 'Run-rate per hour (USD)'))).toBe(3);
      expect(dec(summaryValue(out, 'Run-rate per month (USD)'))).toBe(2190);
      // 03-09: 2.50 + 03-10: 69.75 (instances 48.25 + cluster 12.50 + Kubernetes 9.00)
      expect(dec(summaryValue(out, 'Month to date 2025-03 (EUR)'))).toBe(72.25);
      expect(dec(summaryValue(out, 'Month to date 2025-03 (USD)'))).toBe(13.5);
      // 510.5 h left in March after 03-10 17:30: 72.25 + 13.70 x 510.5 = 7066.10; 13.50 + 3.00 x 510.5 = 1545.00
      expect(dec(summaryValue(out, 'Projected 2025-03, run-rate method (EUR)'))).toBe(7066.1);
      expect(dec(summaryValue(out, 'Projected 2025-03, run-rate method (USD)'))).toBe(1545);
      // History began 03-09 23:00: too short for the mean of the last 7 complete days, so no guess.
      expect(summaryValue(out, 'Projected 2025-03, daily history (EUR)')).toBeNull();
      expect(out.summary.find((s) => s.label === 'Projected 2025-03, daily history (EUR)')!.hint).toMatch(/needs 7 complete days of history before today; collection began 2025-03-09 23:00 UTC/);
      expect(summaryValue(out, 'Resources')).toBe(10);
      expect(summaryValue(out, 'Without a known price')).toBe(2);
      // Money never travels as a float.
      expect(typeof summaryValue(out, 'Run-rate per hour (EUR)')).toBe('string');
    });

    it('lists the top groups of the team tag with month to date, coverage and freshness', async () => {
      const out = await run(overviewReport, ctx);
      // Shares are percentages with two decimals: 7.5 / 13.7 = 54.74 %, 3.7 / 13.7 = 27.01 %, 2.5 / 13.7 = 18.25 %.
      expect(pick(out.rows, ['group', 'currency', 'price_per_hour', 'cost', 'share', 'resources', 'unpriced'], ['price_per_hour', 'cost'])).toEqual([
        ['ml', 'EUR', 7.5, 36.25, '54.74', 2, 0], // i1 + cluster; MTD i1 2.50 on 03-09 + 33.75
        ['(untagged)', 'EUR', 3.7, 20.25, '27.01', 2, 0], // i5 + Kubernetes
        ['data', 'EUR', 2.5, 3.75, '18.25', 1, 0],
        ['ML ', 'EUR', 0, 12, '0.00', 1, 0], // i2 ran 3 h before it was stopped
        ['web', 'EUR', 0, 0, '0.00', 1, 0],
        ['web', 'USD', 3, 13.5, '100.00', 1, 0],
        ['(untagged)', null, null, null, null, 2, 2], // no known price: n/a, never 0
      ]);
      expect(out.notes.join('\n')).toMatch(/2 resources without a known price.*g-hidden \(1\), g-zzz \(1\)/);
      expect(out.notes.join('\n')).toMatch(/p1-r1: 30 min old/);
      // One chart per currency: EUR and USD never share an axis.
      expect(out.charts.filter((c) => c.id.startsWith('cost-per-day')).map((c) => [c.id, c.currency])).toEqual([['cost-per-day-EUR', 'EUR'], ['cost-per-day-USD', 'USD']]);
      const daily = out.charts.find((c) => c.id === 'cost-per-day-EUR')!;
      // The last 30 days, but from the first covered day: the days before the history starts are not drawn.
      expect(daily.labels).toEqual(['2025-03-09', '2025-03-10']);
      // The top groups stacked; each day's cost is their sum.
      expect(daily.stacked).toBe(true);
      expect(daily.datasets.map((d) => d.label)).toEqual(expect.arrayContaining(['ml', 'data', '(untagged)']));
      const day = (i: number) => daily.datasets.reduce((n, d) => n + (d.data[i] ?? 0), 0);
      expect(day(0)).toBeCloseTo(2.5, 10);
      expect(day(1)).toBeCloseTo(69.75, 10);
    });
  });

  describe('cost', () => {
    it('groups by a tag key through the alias map, with (untagged) and shares per currency', async () => {
      const out = await run(costReport, ctx, { by: 'tag:Owner-Team' });
      expect(out.title).toBe('Cost by tag team, month to date (2025-03)');
      // Spend this month (the overview's month to date); spend first, the biggest first.
      // Nothing was collected before 03-09 23:00: the previous period's spend is unknown, not 0.
      expect(pick(out.rows, ['group', 'currency', 'cost', 'previous_cost', 'change_percent', 'price_per_hour', 'price_per_month', 'share', 'resources'], ['cost', 'price_per_hour', 'price_per_month'])).toEqual([
        ['ml', 'EUR', 36.25, null, null, 7.5, 5475, '54.74', 2],
        ['(untagged)', 'EUR', 20.25, null, null, 3.7, 2701, '27.01', 2], // 1825 + 876
        ['ML ', 'EUR', 12, null, null, 0, 0, '0.00', 1],
        ['data', 'EUR', 3.75, null, null, 2.5, 1825, '18.25', 1],
        ['web', 'EUR', 0, null, null, 0, 0, '0.00', 1],
        ['web', 'USD', 13.5, null, null, 3, 2190, '100.00', 1],
        ['(untagged)', null, null, null, null, null, null, null, 2], // no known price: n/a, never 0
      ]);
      // Totals per currency, summed over every group: 36.25 + 20.25 + 12 + 3.75 = 72.25.
      expect(pick(out.totals ?? [], ['group', 'currency', 'cost', 'price_per_hour', 'resources'], ['cost', 'price_per_hour'])).toEqual([
        ['Total', 'EUR', 72.25, 13.7, 7],
        ['Total', 'USD', 13.5, 3, 1],
      ]);
      expect(out.totalRows).toBe(7);
    });

    it('groups by project, flavor and state, and filters by kind', async () => {
      const byProject = await run(costReport, ctx, { by: 'project' });
      expect(pick(byProject.rows, ['group', 'currency', 'price_per_hour', 'resources', 'unpriced'], ['price_per_hour'])).toEqual([
        ['1', 'EUR', 13.7, 7, 0],
        ['2', 'USD', 3, 1, 0],
        ['1', null, null, 1, 1],
        ['2', null, null, 1, 1],
      ]);
      const byFlavor = await run(costReport, ctx, { by: 'flavor', sort: 'price_per_hour', dir: 'desc' });
      // g-a100 EUR: i1, i5, i7 + cluster = 12.50; "(none)": Kubernetes 1.20
      expect(pick(byFlavor.rows.slice(0, 3), ['group', 'currency', 'price_per_hour'], ['price_per_hour'])).toEqual([
        ['g-a100', 'EUR', 12.5],
        ['g-a100', 'USD', 3],
        ['(none)', 'EUR', 1.2],
      ]);
      const byState = await run(costReport, ctx, { by: 'state' });
      expect(pick(byState.rows, ['group', 'currency', 'price_per_hour', 'resources'], ['price_per_hour'])).toEqual([
        ['running', 'EUR', 13.7, 5], // i1, i5, i7, cluster, Kubernetes
        ['stopped', 'EUR', 0, 2], // i2, i3
        ['running', 'USD', 3, 1],
        ['running', null, null, 2],
      ]);
      const clusters = await run(costReport, ctx, { by: 'tag:team', kind: 'cluster' });
      expect(pick(clusters.rows, ['group', 'currency', 'price_per_hour'], ['price_per_hour'])).toEqual([['ml', 'EUR', 5]]);
      expect(dec(summaryValue(clusters, 'Run-rate per hour (EUR)'))).toBe(5);
    });

    it('names regions and kinds beside their codes', async () => {
      const byRegion = await run(costReport, ctx, { by: 'region' });
      expect(byRegion.columns.map((c) => c.key).slice(0, 3)).toEqual(['group', 'group_name', 'currency']);
      expect([...new Set(byRegion.rows.map((r) => `${String(r.group)}=${String(r.group_name)}`))].sort()).toEqual(['1=region-1', '2=region-2']);
      const overview = await run(overviewReport, ctx, { by: 'region' });
      expect(overview.rows.find((r) => r.group === '1')!.group_name).toBe('region-1');
      const byKind = await run(costReport, ctx, { by: 'kind' });
      expect(byKind.rows.find((r) => r.group === 'k8s_price')!.group_name).toBe(kindLabel('k8s_price'));
      // Groupings whose values are names have no such column.
      expect((await run(costReport, ctx, { by: 'project' })).columns.map((c) => c.key)).not.toContain('group_name');
    });

    it('links each number to the inventory rows that add up to it', async () => {
      const out = await run(costReport, ctx, { by: 'tag:team' });
      for (const row of out.rows) {
        const url = new URL(String(row.href), 'http://x');
        expect(url.pathname).toBe('/reports/inventory');
        const query: Record<string, string> = {};
        url.searchParams.forEach((v, k) => (query[k] = v));
        const behind = await run(inventoryReport, ctx, query);
        expect(behind.totalRows).toBe(row.resources);
        if (row.currency === null) {
          // Unpriced resources: unknown on both sides, never summed as 0.
          expect(row.price_per_hour).toBeNull();
          expect(behind.rows.every((r) => r.price_per_hour === null)).toBe(true);
          continue;
        }
        const sum = behind.rows.reduce((n, r) => n + (dec(r.price_per_hour) ?? 0), 0);
        expect(dec(sum)).toBe(dec(row.price_per_hour));
      }
    });

    it('works with tag keys holding dots, slashes, spaces and non-ASCII', async () => {
      const odd = await run(costReport, ctx, { by: 'tag:Ünï code/x' });
      expect(pick(odd.rows, ['group', 'currency', 'price_per_hour'], ['price_per_hour'])).toEqual([
        ['(untagged)', 'EUR', 13.7],
        ['ü', 'USD', 3],
        ['(untagged)', null, null],
      ]);
      expect(odd.columns[0]!.label).toBe('tag ünï code/x');
      const dotted = await run(costReport, ctx, { by: 'tag:cost.center' });
      expect(pick(dotted.rows, ['group', 'currency', 'price_per_hour'], ['price_per_hour'])[0]).toEqual(['(untagged)', 'EUR', 11.2]);
      const href = String(odd.rows.find((r) => r.group === 'ü')!.href);
      expect(href).toBe('/reports/inventory?kind=resources&currency=USD&tag=%C3%BCn%C3%AF+code%2Fx%3A%C3%BC');
    });
  });

  describe('tag hygiene', () => {
    it('counts resources and run-rate lacking each key, and finds look-alike values', async () => {
      const out = await run(tagHygieneReport, ctx);
      const byKey = new Map(out.rows.map((r) => [r.key, r]));
      expect([...byKey.keys()].sort()).toEqual(['cost.center', 'env', 'team', 'ünï code/x'].sort());
      const eur = out.columns.findIndex((c) => c.label === 'Run-rate lacking the key (EUR per hour)');
      expect(eur).toBeGreaterThan(0);
      const eurKey = out.columns[eur]!.key;
      const team = byKey.get('team')!;
      // Lacking team: i4, i5, j2 and the Kubernetes cluster (no tags at all); EUR 2.50 + 1.20.
      expect([team.resources, team.lacking, team.lacking_unpriced, dec(team[eurKey])]).toEqual([10, 4, 2, 3.7]);
      expect(team.lacking_share).toBe('40.00'); // 4 of 10, as a percentage
      expect(team.variants).toBe('"ML " ~ "ml"');
      expect(team.variant_groups).toBe(1);
      const env = byKey.get('env')!;
      expect([env.lacking, dec(env[eurKey])]).toEqual([9, 11.2]);
      expect(byKey.get('ünï code/x')!.lacking).toBe(9);
      expect(out.rows[0]!.lacking).toBe(9);
    });

    it('compares values ignoring case, spaces and punctuation', () => {
      expect(variantGroups(['ML', 'ml', ' ml', 'm-l', 'data', 'Data Science', 'data-science', 'web'])).toEqual([
        [' ml', 'ML', 'm-l', 'ml'],
        ['Data Science', 'data-science'],
      ]);
    });
  });

  describe('trend', () => {
    it('gives the run-rate at each snapshot hour, ignoring the incomplete snapshot', async () => {
      const out = await run(trendReport, ctx, { by: 'kind', days: '2' });
      const rows = pick(out.rows, ['time', 'group', 'currency', 'price_per_hour'], ['price_per_hour']).map(([t, ...rest]) => [(t as Date).toISOString().slice(5, 16), ...rest]);
      expect(rows).toEqual([
        ['03-09T23:00', 'instance', 'EUR', 2.5],
        ['03-10T10:00', 'instance', 'EUR', 11.5],
        ['03-10T10:00', 'cluster', 'EUR', 5],
        ['03-10T10:00', 'k8s_price', 'EUR', 1.2],
        ['03-10T10:00', 'instance', 'USD', 3],
        ['03-10T10:00', 'instance', null, null],
        ['03-10T11:00', 'instance', 'EUR', 11.5],
        ['03-10T11:00', 'instance', 'USD', 3],
        ['03-10T11:00', 'instance', null, null],
        ['03-10T16:00', 'instance', 'EUR', 7.5],
        ['03-10T16:00', 'instance', 'USD', 3],
        ['03-10T16:00', 'instance', null, null],
        ['03-10T17:00', 'instance', 'EUR', 7.5],
        ['03-10T17:00', 'cluster', 'EUR', 5],
        ['03-10T17:00', 'k8s_price', 'EUR', 1.2],
        ['03-10T17:00', 'instance', 'USD', 3],
        ['03-10T17:00', 'instance', null, null],
      ]);
      const eurChart = out.charts.find((c) => c.id === 'run-rate-EUR')!;
      expect(eurChart.labels).toEqual(['2025-03-09 23:00', '2025-03-10 10:00', '2025-03-10 11:00', '2025-03-10 16:00', '2025-03-10 17:00']);
      // Series by the kinds' names, largest first; at 17:00 the three kinds of the rows above.
      expect(eurChart.datasets.map((d) => d.label)).toEqual(['Instances', 'GPU clusters', 'Kubernetes clusters']);
      expect(eurChart.datasets.map((d) => d.data.at(-1))).toEqual([7.5, 5, 1.2]);
    });

    it('gives the accumulated cost per day for a tag grouping', async () => {
      const out = await run(trendReport, ctx, { by: 'tag:team', days: '2', measure: 'daily-cost' });
      const eur = out.rows.filter((r) => r.currency === 'EUR');
      expect(pick(eur, ['day', 'group', 'cost'], ['cost'])).toEqual([
        ['2025-03-09', 'ml', 2.5],
        ['2025-03-10', '(untagged)', 20.25],
        ['2025-03-10', 'ML ', 12],
        ['2025-03-10', 'data', 3.75],
        ['2025-03-10', 'ml', 33.75],
        ['2025-03-10', 'web', 0],
      ]);
    });
  });

  describe('inventory', () => {
    it('lists the latest instances with cost, first and last seen, and pages', async () => {
      const out = await run(inventoryReport, ctx, { kind: 'instances' });
      expect(out.totalRows).toBe(8);
      expect(pick(out.rows, ['resource_id', 'status', 'running', 'flavor', 'currency', 'price_per_hour', 'price_per_month'], ['price_per_hour', 'price_per_month'])).toEqual([
        ['i1', 'ACTIVE', true, 'g-a100', 'EUR', 2.5, 1825],
        ['i2', 'SHUTOFF', false, 'g-h100', 'EUR', 0, 0],
        ['i3', 'SHUTOFF', false, 'g-h100', 'EUR', 0, 0],
        ['i4', 'ACTIVE', true, 'g-hidden', null, null, null],
        ['i5', 'ACTIVE', true, 'g-a100', 'EUR', 2.5, 1825],
        ['i7', 'ACTIVE', true, 'g-a100', 'EUR', 2.5, 1825],
        ['j1', 'ACTIVE', true, 'g-a100', 'USD', 3, 2190],
        ['j2', 'ACTIVE', true, 'g-zzz', null, null, null],
      ]);
      const i1 = out.rows[0]!;
      expect((i1.first_seen as Date).toISOString()).toBe('2025-03-09T23:00:00.000Z');
      expect((i1.last_seen as Date).toISOString()).toBe('2025-03-10T17:00:00.000Z');
      expect(i1.tags).toEqual({ team: 'ml', 'cost.center': 'cc/1', env: 'prod' });
      const page = await run(inventoryReport, ctx, { kind: 'instances' }, { limit: 3, offset: 3 });
      expect(page.rows.map((r) => r.resource_id)).toEqual(['i4', 'i5', 'i7']);
      expect(page.totalRows).toBe(8);
    });

    it('filters by tag (through aliases, odd keys), missing tag, status, state, text and project', async () => {
      const ids = async (query: Record<string, string | string[]>) => (await run(inventoryReport, ctx, query)).rows.map((r) => r.resource_id).sort();
      expect(await ids({ kind: 'instances', tag: 'team:ml' })).toEqual(['i1']);
      expect(await ids({ kind: 'instances', tag: 'Owner-Team:ml' })).toEqual(['i1']);
      expect(await ids({ kind: 'instances', tag: ['team:ml', 'env:prod'] })).toEqual(['i1']);
      expect(await ids({ kind: 'instances', tag: 'cost.center:cc/1' })).toEqual(['i1']);
      expect(await ids({ kind: 'instances', tag: 'Ünï code/x:ü' })).toEqual(['j1']);
      expect(await ids({ kind: 'instances', missing_tag: 'team' })).toEqual(['i4', 'i5', 'j2']);
      expect(await ids({ kind: 'instances', status: 'shutoff' })).toEqual(['i2', 'i3']);
      expect(await ids({ kind: 'instances', state: 'stopped' })).toEqual(['i2', 'i3']);
      expect(await ids({ kind: 'instances', q: 'TRAIN' })).toEqual(['i1', 'i2']);
      expect(await ids({ kind: 'instances', q: '%' })).toEqual([]);
      expect(await ids({ kind: 'instances', project: '2' })).toEqual(['j1', 'j2']);
      expect(await ids({ kind: 'instances', priced: 'no' })).toEqual(['i4', 'j2']);
      expect(await ids({ kind: 'resources', type: 'k8s_price' })).toEqual(['k8s-prod']);
      // Its price status (show / hide) is not a status of the cluster.
      expect((await run(inventoryReport, ctx, { kind: 'resources', type: 'k8s_price' })).rows.map((r) => r.status)).toEqual([null]);
      expect(await ids({ kind: 'resources', flavor: 'g-a100', currency: 'eur' })).toEqual(['c1', 'i1', 'i5', 'i7']);
    });

    it('sorts by any sortable column, and exports the same rows in keyset batches', async () => {
      const sorted = await run(inventoryReport, ctx, { kind: 'instances', sort: 'price_per_hour', dir: 'desc' });
      expect(sorted.rows[0]!.resource_id).toBe('j1');
      expect(sorted.rows.slice(-2).map((r) => r.resource_id).sort()).toEqual(['i4', 'j2']);
      // Unpriced (unknown cost) last in ascending order too, not first as if cheapest.
      const ascending = await run(inventoryReport, ctx, { kind: 'instances', sort: 'price_per_hour', dir: 'asc' });
      expect(ascending.rows.slice(-2).map((r) => r.resource_id).sort()).toEqual(['i4', 'j2']);
      expect(ascending.rows.slice(0, -2).every((r) => r.price_per_hour !== null)).toBe(true);
      for (const query of <Array<Record<string, string>>>[{ kind: 'instances' }, { kind: 'instances', sort: 'name' }, { kind: 'instances', sort: 'price_per_hour', dir: 'desc' }, { kind: 'instances', sort: 'price_per_hour', dir: 'asc' }, { kind: 'resources', sort: 'first_seen' }]) {
        const page = await run(inventoryReport, ctx, query);
        // Small key pages and detail chunks, so every boundary (page, chunk, snapshot) is crossed.
        for (const sizes of [{ keyPage: 3, detailChunk: 2 }, { keyPage: 2, detailChunk: 3 }]) {
          const exported: Row[] = [];
          for await (const row of inventoryRows(ctx, inventoryReport.params.parse(query), sizes)) exported.push(row);
          expect(exported).toEqual(page.rows);
        }
        expect(await exportRows(inventoryReport, ctx, query)).toEqual(page.rows);
      }
    });

    it('exports the same rows, in the same order, from one cursor (Postgres) as from the paged queries', async () => {
      const queries = <Array<Record<string, string>>>[
        { kind: 'instances' },
        { kind: 'instances', sort: 'name' },
        { kind: 'instances', sort: 'price_per_hour', dir: 'desc' },
        { kind: 'instances', sort: 'price_per_hour', dir: 'asc', tag: 'team:ml' },
        { kind: 'resources', sort: 'first_seen' },
        { kind: 'resources' },
      ];
      const collect = async (query: Record<string, string>, sizes: { keyPage: number; detailChunk: number; cursorBatch?: number }, paged: boolean) => {
        const rows: Row[] = [];
        for await (const row of inventoryRows(ctx, inventoryReport.params.parse(query), sizes, { paged })) rows.push(row);
        return rows;
      };
      expect(ctx.db.cursorBatches === undefined).toBe(ctx.db.driver === 'pglite');
      for (const query of queries) {
        const paged = await collect(query, { keyPage: 3, detailChunk: 2 }, true);
        expect(paged.length).toBeGreaterThan(0);
        // Batches of 1 and 2 rows: every FETCH boundary is crossed, and the last batch is short or empty.
        for (const cursorBatch of [1, 2, 1000]) expect(await collect(query, { keyPage: 3, detailChunk: 2, cursorBatch }, false)).toEqual(paged);
        // And the CSV written from them, byte for byte.
        const columns = (await run(inventoryReport, ctx, query)).columns;
        const csv = async (rows: Row[]) => {
          const chunks: Buffer[] = [];
          await streamCsv(new Writable({ write: (chunk: Buffer, _enc, done) => (chunks.push(chunk), done()) }), columns, (async function* () { yield* rows; })());
          return Buffer.concat(chunks);
        };
        expect((await csv(await collect(query, { keyPage: 3, detailChunk: 2, cursorBatch: 2 }, false))).equals(await csv(paged))).toBe(true);
      }
      // Stopping early closes the cursor and gives the connection back: the database still answers.
      for await (const _row of inventoryRows(ctx, inventoryReport.params.parse({ kind: 'instances' }), { keyPage: 3, detailChunk: 2, cursorBatch: 1 })) break;
      expect((await ctx.db.query<{ n: number }>('select 1 as n'))[0]!.n).toBe(1);
    });

    it('lists cluster servers, ports, keypairs, storage keys, image tags and free features', async () => {
      const servers = await run(inventoryReport, ctx, { kind: 'servers' });
      expect(pick(servers.rows, ['resource_id', 'cluster_name', 'running', 'price_per_hour'], ['price_per_hour'])).toEqual([
        ['s1', 'bm-1', true, 2.5],
        ['s2', 'bm-1', true, 2.5],
        ['s3', 'bm-1', false, 0],
      ]);
      const clusters = await run(inventoryReport, ctx, { kind: 'clusters' });
      expect(pick(clusters.rows, ['resource_id', 'servers_running', 'servers_total', 'price_per_hour'], ['price_per_hour'])).toEqual([['c1', 2, 3, 5]]);
      const ports = await run(inventoryReport, ctx, { kind: 'ports' });
      expect(pick(ports.rows, ['resource_id', 'instance_id', 'security_groups'])).toEqual([
        ['port-1', 'i1', 'default'],
        ['port-2', 'i2', null],
      ]);
      const keys = await run(inventoryReport, ctx, { kind: 'keypairs', sort: 'name' });
      expect(keys.rows.map((r) => r.name).sort()).toEqual(['=cmd', 'deploy']);
      const storage = await run(inventoryReport, ctx, { kind: 'storage-keys' });
      expect(pick(storage.rows, ['resource_id', 'name'])).toEqual([['9007199254740993', 'backup']]);
      expect(storage.notes[0]).toMatch(/^Data: the latest complete snapshot of storage SSH keys in its one scope, taken /);
      const images = await run(inventoryReport, ctx, { kind: 'image-tags', q: 'owner' });
      expect(pick(images.rows, ['image_id', 'key', 'value'])).toEqual([['img-1', 'Owner.Team', 'ml']]);
      const features = await run(inventoryReport, ctx, { kind: 'free-features' });
      expect(pick(features.rows, ['resource_id', 'name', 'is_free'])).toEqual([['101', 'CDN logs', true]]);
    });
  });

  describe('flavors and Kubernetes prices', () => {
    it('lists the GPU flavor catalogue per scope with use counts', async () => {
      const out = await run(flavorsReport, ctx, { sort: 'in_use', dir: 'desc' });
      expect(out.totalRows).toBe(5);
      // g-a100 in p1-r1: i1, i5 (by id), i7 and the cluster; g-h100: i2, i3 (stopped, still in use).
      expect(pick(out.rows.slice(0, 2), ['scope', 'flavor_name', 'in_use', 'price_per_hour', 'currency'], ['price_per_hour'])).toEqual([
        ['p1-r1', 'g-a100', 4, 2.5, 'EUR'],
        ['p1-r1', 'g-h100', 2, 4, 'EUR'],
      ]);
      const hidden = out.rows.find((r) => r.flavor_name === 'g-hidden')!;
      expect([hidden.price_per_hour, hidden.price_status]).toEqual([null, 'hide']);
      expect(out.rows.find((r) => r.flavor_name === 'g-old')!.disabled).toBe(true);
      // The count without a price is the catalogue's, whatever the page shows.
      const unpricedHere = out.rows.filter((r) => r.currency === null || (r.price_per_hour === null && r.price_per_month === null)).length;
      expect(unpricedHere).toBeGreaterThan(0);
      for (const limit of [1, 1000]) {
        const paged = await run(flavorsReport, ctx, { sort: 'in_use', dir: 'desc' }, { limit, offset: 0 });
        expect(summaryValue(paged, 'Without a price')).toBe(unpricedHere);
      }
      const history = await run(flavorsReport, ctx, { flavor: 'g-a100', days: '3' });
      // One price chart per currency: the EUR and the USD scope never share an axis.
      const prices = history.charts.filter((c) => c.id.startsWith('price-history'));
      expect(prices.map((c) => [c.id, c.currency, c.title, c.datasets.map((d) => d.label)])).toEqual([
        ['price-history-EUR', 'EUR', 'Price per hour of g-a100 (EUR)', ['p1-r1']],
        ['price-history-USD', 'USD', 'Price per hour of g-a100 (USD)', ['p2-r2']],
      ]);
    });

    it('breaks Kubernetes prices into instances, public IPs and volumes', async () => {
      const out = await run(k8sPricesReport, ctx);
      expect(pick(out.rows, ['cluster_name', 'price_per_hour', 'instances_per_hour', 'instances_items', 'publicips_per_hour', 'volumes_per_hour'], ['price_per_hour', 'instances_per_hour', 'publicips_per_hour', 'volumes_per_hour'])).toEqual([
        ['k8s-prod', 1.2, 1.1, 2, 0.05, 0.05],
      ]);
      expect(dec(summaryValue(out, 'Run-rate per hour (EUR)'))).toBe(1.2);
      expect(dec(summaryValue(out, 'Run-rate per month (EUR)'))).toBe(876);
      // Names repeat across scopes, so the chart's bars name theirs.
      expect(out.charts.find((c) => c.id === 'breakdown-EUR')!.labels).toEqual(['k8s-prod (p1-r1)']);
      // One bar across per cluster, its parts by name: 1.1 + 0.05 + 0.05.
      const breakdown = out.charts.find((c) => c.id === 'breakdown-EUR')!;
      expect(breakdown.horizontal).toBe(true);
      expect(breakdown.datasets.map((d) => [d.label, d.data[0]])).toEqual([['Instances', 1.1], ['Public IPs', 0.05], ['Volumes', 0.05]]);
    });
  });

  describe('changes', () => {
    it('refuses a since in the future instead of comparing the latest two snapshots', async () => {
      await expect(run(changesReport, ctx, { kind: 'instances', since: '2099-01-01' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/since must not be in the future/) });
      const fields = await changesReport.filters!(ctx, changesReport.params.parse({ since: '2025-03-10T11:00:00Z' }));
      expect(fields.find((f) => f.name === 'since')?.value).toBe('2025-03-10T11:00:00.000Z');
    });

    it('lists added, removed and changed resources with the fields and tags that changed', async () => {
      // hours=6: T3 (17:00) vs the latest complete snapshot at or before 11:00 (T1).
      const out = await run(changesReport, ctx, { kind: 'instances', hours: '6' });
      expect(pick(out.rows, ['scope', 'change', 'resource_id', 'changed_fields', 'tag_changes'])).toEqual([
        ['p1-r1', 'added', 'i7', '', ''],
        ['p1-r1', 'changed', 'i1', 'tags', '+env="prod"'],
        ['p1-r1', 'changed', 'i2', 'status, vm_state', ''],
        ['p1-r1', 'removed', 'i6', '', ''],
      ]);
      expect(out.rows[2]!.details).toEqual({ status: ['ACTIVE', 'SHUTOFF'], vm_state: ['active', 'stopped'] });
      expect([summaryValue(out, 'Added'), summaryValue(out, 'Removed'), summaryValue(out, 'Changed')]).toEqual([1, 1, 2]);
      const removed = await run(changesReport, ctx, { kind: 'instances', hours: '6', change: 'removed' });
      expect(removed.rows.map((r) => r.resource_id)).toEqual(['i6']);
      const since = await run(changesReport, ctx, { kind: 'instances', since: '2025-03-10T16:00:00Z' });
      expect(pick(since.rows, ['change', 'resource_id'])).toEqual([['changed', 'i1']]);
    });

    it('says when there is no snapshot old enough to compare with', async () => {
      const out = await run(changesReport, ctx, { kind: 'instances' });
      expect(out.rows).toEqual([]);
      expect(out.notes.join('\n')).toMatch(/No earlier complete snapshot to compare with in: p1-r1, p2-r2/);
    });
  });

  describe('collection health', () => {
    it('lists runs with their errors and flags stale scopes', async () => {
      const runs = await run(collectionHealthReport, ctx);
      expect(pick(runs.rows, ['status', 'error_count'])).toEqual([
        ['succeeded', 0],
        ['partial', 1],
        ['failed', 1],
        ['succeeded', 0],
        ['succeeded', 0],
        ['succeeded', 0],
      ]);
      expect(runs.rows[2]!.errors).toBe('instances / p1-r1: no status connect ECONNREFUSED');
      expect(summaryValue(runs, 'Failed or partial runs, last 24 h')).toBe(2);
      // Flavors are collected every 6 h: their snapshot of 03-09 22:55 is 18.6 h old, over 2 x 6 h.
      expect(summaryValue(runs, 'Stale scopes')).toBe(2);
      const scopes = await run(collectionHealthReport, ctx, { view: 'scopes' });
      const flavor = scopes.rows.find((r) => r.scope === 'p1-r1' && r.kind === 'GPU flavors')!;
      expect([flavor.stale, flavor.age_hours, flavor.max_age_hours]).toEqual([true, '18.58', '12']);
      const instance = scopes.rows.find((r) => r.scope === 'p1-r1' && r.kind === 'Instances')!;
      expect([instance.stale, instance.age_hours, instance.last_error]).toEqual([false, '0.50', null]);
      const failed = await run(collectionHealthReport, ctx, { status: 'failed' });
      expect(failed.totalRows).toBe(1);
    });
  });

  describe('FOCUS export', () => {
    const COST_ROWS = [
      // charge period, kind, resource, currency, cost, pricing quantity (hours x running units), list unit price.
      // A row ends where the resource's price stops holding (a gap past the cap) or its tags change.
      ['2025-03-09T23:00:00Z', '2025-03-10T00:00:00Z', 'instance', 'i1', 'EUR', 2.5, 1, 2.5],
      ['2025-03-10T10:00:00Z', '2025-03-10T12:00:00Z', 'cluster', 'c1', 'EUR', 10, 4, 2.5], // 2 servers x 2 h (capped)
      ['2025-03-10T17:00:00Z', '2025-03-10T17:30:00Z', 'cluster', 'c1', 'EUR', 2.5, 1, 2.5],
      ['2025-03-10T00:00:00Z', '2025-03-10T01:00:00Z', 'instance', 'i1', 'EUR', 2.5, 1, 2.5], // TP held 2 h over midnight
      ['2025-03-10T10:00:00Z', '2025-03-10T13:00:00Z', 'instance', 'i1', 'EUR', 7.5, 3, 2.5],
      ['2025-03-10T16:00:00Z', '2025-03-10T17:00:00Z', 'instance', 'i1', 'EUR', 2.5, 1, 2.5],
      ['2025-03-10T17:00:00Z', '2025-03-10T17:30:00Z', 'instance', 'i1', 'EUR', 1.25, 0.5, 2.5], // env: prod added at T3
      ['2025-03-10T10:00:00Z', '2025-03-10T13:00:00Z', 'instance', 'i2', 'EUR', 12, 3, 4],
      ['2025-03-10T10:00:00Z', '2025-03-10T13:00:00Z', 'instance', 'i5', 'EUR', 7.5, 3, 2.5],
      ['2025-03-10T16:00:00Z', '2025-03-10T17:30:00Z', 'instance', 'i5', 'EUR', 3.75, 1.5, 2.5],
      ['2025-03-10T10:00:00Z', '2025-03-10T13:00:00Z', 'instance', 'i6', 'EUR', 7.5, 3, 2.5],
      ['2025-03-10T16:00:00Z', '2025-03-10T17:30:00Z', 'instance', 'i7', 'EUR', 3.75, 1.5, 2.5],
      ['2025-03-10T10:00:00Z', '2025-03-10T13:00:00Z', 'instance', 'j1', 'USD', 9, 3, 3],
      ['2025-03-10T16:00:00Z', '2025-03-10T17:30:00Z', 'instance', 'j1', 'USD', 4.5, 1.5, 3],
      ['2025-03-10T10:00:00Z', '2025-03-10T17:30:00Z', 'k8s_price', 'p1-r1/k8s-prod', 'EUR', 9, 7.5, 1.2], // a name is unique within its scope only
    ];
    const focusPick = (rows: readonly Row[]) =>
      rows.map((r) => [r.ChargePeriodStart, r.ChargePeriodEnd, r.x_ResourceKind, r.ResourceId, r.BillingCurrency, dec(r.BilledCost), dec(r.PricingQuantity), dec(r.ListUnitPrice)]);

    it('gives one row per priced resource and day that adds up to the daily cost', async () => {
      const out = await run(focusReport, ctx, { from: '2025-03-09', to: '2025-03-10' });
      expect(focusPick(out.rows)).toEqual(COST_ROWS);
      const i1 = out.rows[6]!;
      expect(i1).toMatchObject({
        ChargePeriodStart: '2025-03-10T17:00:00Z',
        ChargePeriodEnd: '2025-03-10T17:30:00Z',
        BillingPeriodStart: '2025-03-01T00:00:00Z',
        BillingPeriodEnd: '2025-04-01T00:00:00Z',
        ChargeClass: null,
        ServiceCategory: 'Compute',
        ServiceSubcategory: 'Virtual Machines',
        BillingAccountId: 'default',
        ProviderName: 'Cloud provider',
        ChargeCategory: 'Usage',
        PricingUnit: 'Hours',
        ServiceName: 'GPU Instances',
        SkuId: 'g-a100',
        SubAccountId: '1',
        RegionId: '1',
        RegionName: 'region-1',
        SkuPriceId: 'p1-r1/g-a100',
        SkuMeter: 'GPU Instance Hours',
        SkuPriceDetails: { F_InstanceType: 'g-a100', F_GpuCount: 8 },
        Tags: { team: 'ml', 'cost.center': 'cc/1', env: 'prod' },
        x_NormalizedTags: { team: 'ml', 'cost.center': 'cc/1', env: 'prod' },
        x_ScopeKey: 'p1-r1',
      });
      for (const key of ['EffectiveCost', 'ListCost', 'ContractedCost']) expect(i1[key]).toBe(i1.BilledCost);
      expect(out.notes.join(' ')).toMatch(/[Ee]stimate/);
      // The totals per currency are those of every row, whatever the page shows.
      const paged = await run(focusReport, ctx, { from: '2025-03-09', to: '2025-03-10' }, { limit: 2, offset: 0 });
      const sumOf = (currency: string) => dec(COST_ROWS.filter((r) => r[4] === currency).reduce((n, r) => n + (r[5] as number), 0));
      expect(dec(summaryValue(paged, 'BilledCost (EUR)'))).toBe(sumOf('EUR'));
      expect(dec(summaryValue(paged, 'BilledCost (USD)'))).toBe(sumOf('USD'));
      const page = await run(focusReport, ctx, { from: '2025-03-09', to: '2025-03-10' }, { limit: 3, offset: 4 });
      expect(focusPick(page.rows)).toEqual(COST_ROWS.slice(4, 7));
      const batched: Row[] = [];
      for await (const row of focusRows(ctx, focusReport.params.parse({ from: '2025-03-09', to: '2025-03-10' }), 2)) batched.push(row);
      expect(focusPick(batched)).toEqual(COST_ROWS);
      const usd = await run(focusReport, ctx, { from: '2025-03-09', to: '2025-03-10', project: '2' });
      expect(focusPick(usd.rows)).toEqual(COST_ROWS.slice(12, 14));
    });

    it('reads the same rows whatever the batch size and whatever row_count hints that a group is small', async () => {
      // row_count only decides which groups are read together in one query (fits in one batch)
      // and which in id-bounded batches: as the fixture wrote it (0: every group looks small), as
      // the snapshot writer writes it (exact), and too large (every group bounded, batch by batch).
      const exact = `update snapshots s set row_count = case s.kind
          when 'instance' then (select count(*) from instances t where t.snapshot_id = s.id)
          when 'cluster' then (select count(*) from gpu_clusters t where t.snapshot_id = s.id)
          when 'k8s_price' then (select count(*) from k8s_cluster_prices t where t.snapshot_id = s.id) else 0 end`;
      const params = focusReport.params.parse({ from: '2025-03-09', to: '2025-03-10' });
      try {
        for (const hints of ['update snapshots set row_count = 0', exact, 'update snapshots set row_count = 1000']) {
          await db.execute(hints);
          for (const batch of [1, 2, 3, 100]) {
            const rows: Row[] = [];
            for await (const row of focusRows(ctx, params, batch)) rows.push(row);
            expect(focusPick(rows), `${hints.slice(0, 40)}, batch ${batch}`).toEqual(COST_ROWS);
          }
        }
        await db.execute(exact);
        expect(focusPick((await run(focusReport, ctx, { from: '2025-03-09', to: '2025-03-10' }, { limit: 3, offset: 4 })).rows)).toEqual(COST_ROWS.slice(4, 7));
      } finally {
        await db.execute('update snapshots set row_count = 0');
      }
    });

    it('spreads sealed days over the day\'s last snapshot so they add up to the stored daily cost', async () => {
      await refreshCostDaily(db, { fromDay: '2025-03-09', toDay: '2025-03-10' }, { now: ctx.now });
      await db.execute("insert into cost_daily_sealed_days (day) values ('2025-03-10')");
      try {
        const rows = await exportRows(focusReport, ctx, { from: '2025-03-10', to: '2025-03-10', kind: 'instance', project: '1' });
        // The 17:00 snapshot's running EUR instances (i1, i5, i7, 2.50 each) carry the day's 48.25.
        expect(rows.map((r) => r.ResourceId)).toEqual(['i1', 'i5', 'i7']);
        expect(dec(rows.reduce((n, r) => n + Number(r.BilledCost), 0))).toBe(48.25);
        expect(rows.every((r) => r.x_CostSource === 'estimate (sealed daily total)')).toBe(true);
      } finally {
        await db.execute('delete from cost_daily_sealed_days');
        await db.execute('delete from cost_daily');
      }
    });

    it('rejects a period that ends before it starts', async () => {
      await expect(run(focusReport, ctx, { from: '2025-03-11', to: '2025-03-10' })).rejects.toMatchObject({ status: 400 });
    });
  });

  describe('every report', () => {
    const QUERIES: Record<string, Record<string, string>> = {
      changes: { kind: 'instances', hours: '6' },
      focus: { from: '2025-03-09', to: '2025-03-10' },
      trend: { by: 'tag:team', days: '2' },
    };

    it('exports exactly the rows it shows, as JSON-safe values with every column', async () => {
      for (const report of dataReports()) {
        const query = QUERIES[report.name] ?? {};
        const out = await run(report, ctx, query, { limit: 10_000, offset: 0 });
        const exported = await exportRows(report, ctx, query);
        expect(exported, report.name).toEqual(out.rows);
        // Anomalies need two weeks of history (tested with their own fixture in anomalies.test.ts).
        if (report.name !== 'anomalies') expect(out.rows.length, report.name).toBeGreaterThan(0);
        const json = JSON.parse(JSON.stringify(out)) as typeof out;
        expect(json.rows.length).toBe(out.rows.length);
        for (const row of out.rows) {
          for (const column of out.columns) {
            expect(row[column.key], `${report.name}.${column.key}`).not.toBeUndefined();
            const value = row[column.key];
            if (column.kind === 'money' && value !== null) expect(typeof value, `${report.name}.${column.key}`).toBe('string');
            if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
          }
        }
        expect(out.notes.length, report.name).toBeGreaterThan(0);
      }
    });

    it('rejects bad parameters with a message naming them', () => {
      const bad: Array<[string, Record<string, string | string[]>, RegExp]> = [
        ['overview', { by: 'colour' }, /by must be one of/],
        ['overview', { days: '0' }, /days must be a whole number/],
        ['cost', { by: 'tag:' }, /by must be one of/],
        ['cost', { kind: 'vm' }, /kind must be one of/],
        ['cost', { project: 'abc' }, /project must be a positive whole number/],
        ['cost', { sort: 'nope' }, /sort must be one of/],
        ['cost', { colour: 'blue' }, /colour/],
        ['trend', { measure: 'weekly' }, /measure must be/],
        ['anomalies', { kind: 'bump' }, /kind must be one of spike, drop, data gap/],
        ['anomalies', { period: 'fortnight' }, /period must be one of/],
        ['tag-hygiene', { dir: 'up' }, /dir must be asc or desc/],
        ['inventory', { kind: 'vms' }, /kind must be one of/],
        ['inventory', { tag: 'novalue' }, /tag must be key:value/],
        ['inventory', { kind: 'instances', sort: 'cluster_name' }, /kind instances sorts by/],
        ['inventory', { kind: 'instances', sort: 'fingerprint' }, /sort must name a sortable column/],
        ['inventory', { kind: 'ports', tag: 'team:ml' }, /tag does not apply to kind ports/],
        ['flavors', { days: '9999' }, /days must be a whole number from 1 to 366/],
        ['k8s-prices', { sort: 'cheapest' }, /sort must be one of/],
        ['changes', { hours: '0' }, /hours must be/],
        ['changes', { since: 'yesterday' }, /since must be an ISO 8601 time/],
        ['collection-health', { view: 'everything' }, /view must be runs, scopes, notifications or deliveries/],
        ['focus', { from: '2025-02-30' }, /from must be a real calendar date/],
      ];
      const reports = new Map(allReports().map((r) => [r.name, r]));
      for (const [name, query, message] of bad) {
        const result = reports.get(name)!.params.safeParse(query);
        expect(result.success, `${name} ${JSON.stringify(query)}`).toBe(false);
        expect(result.error!.issues.map((i) => i.message).join('; '), name).toMatch(message);
      }
    });
  });
});

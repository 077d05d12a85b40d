/**
 * CSV written by Postgres (COPY, csv-sql.ts) against CSV written by Node (csv.ts): on the known
 * dataset made hostile (formula starts, quotes, line breaks, empty names, tag keys that JavaScript
 * orders first, a JPY price with half a yen, a stop through cloudtally since the snapshot), every
 * inventory export the database writes is byte for byte the file Node writes from the same rows,
 * and the web route serves it. withCrlf is checked on pieces cut everywhere.
 */
import { Writable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { INVENTORY_KINDS } from '../../src/reports/inventory-kinds.js';
import { inventoryReport } from '../../src/reports/inventory.js';
import { exportRegionNames } from '../../src/reports/shared/regions.js';
import type { Row } from '../../src/reports/report.js';
import { csvCellSql, withCrlf } from '../../src/present/csv-sql.js';
import { csvRecord, streamCsv, type CsvColumn } from '../../src/present/csv.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { SCOPE_A, SCOPE_B, T1, T3, TP, seedKnownDataset } from '../reports/fixture.js';
import type { Ctx, ReportsApp } from '../reports/helpers.js';

async function* pieces(chunks: string[]): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield Buffer.from(chunk);
}
async function joined(source: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of source) parts.push(part);
  return Buffer.concat(parts).toString();
}

describe('withCrlf', () => {
  const copied = 'a,"x\ny",1\n"say ""hi""\n, then","",\n,,"\n"\nlast,"\r\n",z\n';
  const expected = 'a,"x\ny",1\r\n"say ""hi""\n, then","",\r\n,,"\n"\r\nlast,"\r\n",z\r\n';

  it('ends records with CRLF and leaves line breaks inside quoted cells alone', async () => {
    expect(await joined(withCrlf(pieces([copied])))).toBe(expected);
  });

  it('gives the same bytes however the pieces are cut', async () => {
    for (let cut = 1; cut < copied.length; cut++) {
      expect(await joined(withCrlf(pieces([copied.slice(0, cut), copied.slice(cut)]))), `cut at ${cut}`).toBe(expected);
    }
    expect(await joined(withCrlf(pieces([...copied])))).toBe(expected);
  });
});

describe.each(testDatabases())('full-width formula starts ($name)', ({ open }) => {
  let db: Database;
  beforeAll(async () => {
    db = await open();
  });
  afterAll(async () => {
    await db?.close();
  });

  it('get the apostrophe from both writers, like their ASCII forms', async () => {
    const columns: CsvColumn[] = [{ header: 't', key: 'name', kind: 'text' }];
    const names = ['＝SUM(A1)', '＋1', '－1', '＠x', '=1', 'a＝b', '１'];
    const cells = columns.map((c) => csvCellSql(c, (key) => `v.${key}`, { exact: false }));
    const rows = await db.query<Record<string, string | null>>(`select ${cells.map((c, i) => `${c} as c${i}`).join(', ')} from unnest($1::text[]) as v(name)`, [names]);
    const fromNode = names.map((name) => csvRecord({ name }, columns, { exact: false }));
    expect(fromNode.map((cells) => cells[0])).toEqual(["'＝SUM(A1)", "'＋1", "'－1", "'＠x", "'=1", 'a＝b', '１']);
    expect(rows.map((r) => columns.map((_, i) => r[`c${i}`] ?? ''))).toEqual(fromNode);
  });
});

const postgres = testDatabases().filter((d) => d.name === 'postgres');

describe.runIf(postgres.length > 0)('inventory CSV written by Postgres', () => {
  let db: Database;
  let app: ReportsApp;
  let ctx: () => Ctx;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ db, app, context: ctx } = await reportsApps.open(postgres[0], {
      seed: async (db) => {
        const seeded = await seedKnownDataset(db);
        const snapshot = (kind: string, scope: string, at: Date) => seeded.snapshots.get(`${kind}@${scope}@${at.toISOString()}`)!;
        const latestA = snapshot('instance', SCOPE_A.scopeKey, T3);
        await db.execute(
          `update instances_kept set name = $2, tags = $3::jsonb where snapshot_id = $1 and instance_id = 'i4'`,
          [latestA, '=1+2\n"quoted", end', JSON.stringify({ z: 'say "hi"\nthen', 10: 'ten', 2: 'two', a: '=SUM(A1)', 'tab\tkey': '\u0001' })],
        );
        await db.execute(`update instances_kept set name = '' where snapshot_id = $1 and instance_id = 'i3'`, [latestA]);
        await db.execute(`update instances_kept set name = $2, tags = '{}'::jsonb where snapshot_id = $1 and instance_id = 'i5'`, [latestA, '@home, -1']);
        // Full-width formula starts, which spreadsheets in East Asian locales read as formulas.
        await db.execute(`update instances_kept set name = '＝SUM(A1)' where instance_id = 'i2'`);
        await db.execute(`update instances_kept set name = '＋1' where instance_id = 'i7'`);
        await db.execute(`update instances_kept set name = '－1' where instance_id = 'j2'`);
        await db.execute(`update keypairs_kept set fingerprint = '＠cc:dd' where keypair_id = 'kp-2'`);
        // Scope B priced in yen with half a yen: rounded half away from zero to whole yen (hourly: 2 digits).
        await db.execute(
          `update gpu_flavors_kept set currency_code = 'jpy', price_per_hour = 333.125, price_per_month = 243181.5
            where snapshot_id = $1 and flavor_name = 'g-a100'`,
          [snapshot('flavor', SCOPE_B.scopeKey, new Date(TP.getTime() - 5 * 60_000))],
        );
        // i1 stopped through cloudtally after the latest snapshot: shown stopped, costing 0.
        await db.execute(
          `insert into audit_log (at, actor, role, action, instance_id, project_id, region_id, result)
           values ($1, 'ops', 'operator', 'stop', 'i1', 1, 1, 'stopped')`,
          [new Date(T3.getTime() + 10 * 60_000)],
        );
      },
    }));
  });

  async function csvOf(query: Record<string, string>, written: 'database' | 'node'): Promise<string> {
    const { exact, ...reportQuery } = query;
    const params = inventoryReport.params.parse(reportQuery);
    const exported = await inventoryReport.export(ctx(), params);
    const parts: Buffer[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, done) {
        parts.push(chunk);
        done();
      },
    });
    if (written === 'database') expect(exported.sql, 'the export offers its SQL').toBeDefined();
    // Region names as the web route reads them: the "Region name" column is written by both writers too.
    const regionNames = await exportRegionNames(db, exported.columns, params);
    await streamCsv(out, exported.columns, exported.rows, { exact: exact === '1', totals: exported.totals, ...(regionNames ? { regionNames } : {}), ...(written === 'database' ? { sql: exported.sql } : {}) });
    return Buffer.concat(parts).toString();
  }

  const queries: Array<Record<string, string>> = [
    {},
    { exact: '1' },
    { sort: 'name', dir: 'desc' },
    { sort: 'price_per_month' },
    { at: T1.toISOString() },
    { tag: 'team:ml' },
  ];

  for (const kind of INVENTORY_KINDS.filter((k) => k !== 'ports')) {
    it(`writes the ${kind} exports byte for byte as Node does`, async () => {
      let compared = 0;
      for (const query of queries) {
        const q: Record<string, string> = { kind, ...query };
        // Not every kind has a name, a price or tags to sort or filter by.
        const { exact: _exact, ...reportQuery } = q;
        if (!inventoryReport.params.safeParse(reportQuery).success) continue;
        const node = await csvOf(q, 'node');
        if (!query.tag) expect(node.split('\r\n').length, JSON.stringify(q)).toBeGreaterThan(2);
        expect(await csvOf(q, 'database'), JSON.stringify(q)).toBe(node);
        compared++;
      }
      expect(compared).toBeGreaterThanOrEqual(3);
    });
  }

  it('shows the hostile cells as Node writes them (the comparison above compares something)', async () => {
    const text = await csvOf({ kind: 'instances' }, 'database');
    expect(text).toContain(`"'=1+2\n""quoted"", end"`);
    expect(text).toContain(`"{""2"": ""two"", ""a"": ""=SUM(A1)"", ""z"": ""say \\""hi\\""\\nthen"", ""10"": ""ten"", ""tab\\tkey"": ""\\u0001""}"`);
    expect(text).toContain(`i5,"'@home, -1"`);
    expect(text).toContain(`i2,'＝SUM(A1),`);
    expect(text).toContain(`i7,'＋1,`);
    expect(text).toContain(`j2,'－1,`);
    expect(await csvOf({ kind: 'keypairs' }, 'database')).toContain(`,'＠cc:dd,`);
    // Yen: 333.125 an hour to 2 digits (333.13), 243181.5 a month to whole yen (243182).
    expect(text).toMatch(/\r\nj1,web-1,2,2,region-2,ACTIVE,true,g-a100,333\.13,243182,deploy,JPY,/);
    // i1 was stopped through cloudtally since the snapshot: SHUTOFF, not running, 0.
    expect(text).toMatch(/\r\ni1,train-1,1,1,region-1,SHUTOFF,false,g-a100,0\.0000,0\.00,deploy,EUR,/);
  });

  it('serves the database-written file from the web route', async () => {
    const res = await request(`${app.base}/api/reports/inventory.csv?kind=instances&sort=name`);
    expect(res.statusCode).toBe(200);
    expect(Buffer.from(await res.body.arrayBuffer()).toString()).toBe(await csvOf({ kind: 'instances', sort: 'name' }, 'node'));
  });

  it('writes every cell as csvRecord does, edge values included', async () => {
    const columns: CsvColumn[] = [
      { header: 'h', key: 'hour', kind: 'money', currencyKey: 'cur', hourly: true },
      { header: 'm', key: 'month', kind: 'money', currencyKey: 'cur' },
      { header: 'd', key: 'month', kind: 'decimal' },
      { header: 'n', key: 'n', kind: 'int' },
      { header: 't', key: 'name', kind: 'text' },
      { header: 'b', key: 'flag', kind: 'bool' },
      { header: 'at', key: 'at', kind: 'timestamp' },
      { header: 'tags', key: 'tags', kind: 'tags' },
      // A name looked up by the id in n (a region's name beside its id): names come from the cloud API.
      { header: 'name of n', key: 'region_name', kind: 'text', names: { from: 'n', byId: { '7': "O'Hare \\ east\\", '1': '=HYPERLINK("x")', '2': '＠home', '-3': '' } } },
    ];
    const values: Array<[string | null, string | null, string | null, number | null, string | null, boolean | null, string | null, string | null]> = [
      ['2.345', '2.345', 'EUR', -3, '=cmd', true, '2025-03-10T17:00:00.123456Z', '{"b": "x", "aa": "y"}'],
      ['-0.004', '-0.004', 'eur', 0, '-2', false, '1999-12-31T23:59:59Z', '{}'],
      ['0.125', '1234.5', 'JPY', null, '', null, null, null],
      ['1.00005', '0.0005', 'BHD', 7, '\t tab', true, '2025-01-01T00:00:00.999Z', JSON.stringify({ k: { nested: [1, 'two'] }, ü: 'é\n' })],
      ['NaN', '-Infinity', null, 1, '+1', false, '2025-01-01T00:00:00Z', '{"10": "a", "2": "b"}'],
      ['Infinity', '-1.5', 'XXX', 2, '@x, "y"', true, '2025-01-01T00:00:00Z', '{"a": null, "b": true, "c": 1.5}'],
    ];
    for (const exact of [false, true]) {
      const cells = columns.map((c) => csvCellSql(c, (key) => `v.${key}`, { exact }));
      const source = `unnest($1::numeric[], $2::numeric[], $3::text[], $4::int[], $5::text[], $6::bool[], $7::timestamptz[], $8::jsonb[])
        as v(hour, month, cur, n, name, flag, at, tags)`;
      const params = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => values.map((v) => v[i]));
      const rows = await db.query<Record<string, string | null>>(`select ${cells.map((c, i) => `${c} as c${i}`).join(', ')} from ${source}`, params);
      const read = await db.query<Row>(`select * from ${source}`, params);
      expect(rows.map((r) => columns.map((_, i) => r[`c${i}`] ?? '')), `exact: ${exact}`).toEqual(read.map((r) => csvRecord(r, columns, { exact })));
    }
  });

  it('writes the ports in Node: their "last known" age is counted there', async () => {
    const exported = await inventoryReport.export(ctx(), inventoryReport.params.parse({ kind: 'ports' }));
    expect(exported.sql).toBeUndefined();
  });
});

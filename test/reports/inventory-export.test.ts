/**
 * The inventory export reads every row with one query (the cursor export's rows, and the SQL the
 * database writes the CSV from): it must give exactly what the paged export gives (each page's
 * keys, then each row's details, the page's own SQL), record for record and cell for cell, on a
 * history with a price change, a gap, resources removed and added, ports, a stop through
 * cloudtally and a scheduled stop, now and as of past collections. PGlite has no cursor: the one
 * query is read there in one batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { csvColumns, csvRecord } from '../../src/present/csv.js';
import { csvCellSql } from '../../src/present/csv-sql.js';
import { INVENTORY_KINDS } from '../../src/reports/inventory-kinds.js';
import { inventoryReport, inventoryRows } from '../../src/reports/inventory.js';
import type { Row } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { SCOPE_A, T0, T1, T2, T3, TP } from './fixture.js';
import { contextFor, openKnownDataset, type Ctx } from './helpers.js';

/** `db` with a cursor and a COPY where it has none (PGlite): the one query in one batch; COPY only offered, never read here. */
function withOneQuery(db: Database): Database {
  const extra: Partial<Database> = {
    async *cursorBatches<R extends Record<string, unknown>>(text: string, params: readonly unknown[]) {
      yield await db.query<R>(text, [...params]);
    },
    // eslint-disable-next-line require-yield
    async *csvCopy() {
      throw new Error('not read in this test');
    },
  };
  return new Proxy(db, {
    get(target, key) {
      if (key in extra && target[key as keyof Database] === undefined) return extra[key as keyof Database];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe.each(testDatabases())('inventory export in one query on $name', ({ open }) => {
  let db: Database;
  let ctx: Ctx;
  let oneQuery: Ctx;

  beforeAll(async () => {
    ({ db } = await openKnownDataset(open));
    ctx = contextFor(db);
    oneQuery = { ...ctx, db: withOneQuery(db) };
    // A price change: a flavor snapshot of scope A between T2 and T3 where g-a100 costs 2.75 (2.50 before).
    const [flavors] = await db.query<{ id: number }>(
      `insert into snapshots (run_id, kind, scope_key, project_id, region_id, taken_at, complete, row_count)
        select run_id, 'flavor', scope_key, project_id, region_id, taken_at - interval '1 minute', true, 0
          from snapshots where kind = 'instance' and scope_key = $1 and taken_at = $2
        returning id`,
      [SCOPE_A.scopeKey, T3],
    );
    await db.execute(
      `insert into gpu_flavors_kept
        select (jsonb_populate_record(null::gpu_flavors_kept, to_jsonb(f) || jsonb_build_object('snapshot_id', $1::int,
                'price_per_hour', case when f.flavor_name = 'g-a100' then 2.75 else f.price_per_hour end,
                'price_per_month', case when f.flavor_name = 'g-a100' then null else f.price_per_month end))).*
          from gpu_flavors_kept f
         where f.snapshot_id = (select id from snapshots where kind = 'flavor' and scope_key = $2 and id <> $1 order by taken_at desc limit 1)`,
      [flavors!.id, SCOPE_A.scopeKey],
    );
    // i1 stopped through cloudtally after the latest snapshot; i3 has a scheduled stop.
    await db.execute(
      `insert into audit_log (at, actor, role, action, instance_id, project_id, region_id, result) values ($1, 'ops', 'operator', 'stop', 'i1', 1, 1, 'stopped')`,
      [new Date(T3.getTime() + 10 * 60_000)],
    );
    await db.execute(
      `insert into scheduled_stops (instance_id, project_id, region_id, reason, created_by, created_by_role, due_at, status) values ('i3', 1, 1, 'idle', 'ops', 'operator', $1, 'pending')`,
      [new Date(T3.getTime() + 3600_000)],
    );
  });
  afterAll(async () => {
    await db?.close();
  });

  async function paged(query: Record<string, string>): Promise<Row[]> {
    const rows: Row[] = [];
    // Small pages and chunks: several keyset pages and detail chunks per snapshot.
    for await (const row of inventoryRows(ctx, inventoryReport.params.parse(query), { keyPage: 3, detailChunk: 2 }, { paged: true })) rows.push(row);
    return rows;
  }

  async function inOneQuery(query: Record<string, string>): Promise<Row[]> {
    const rows: Row[] = [];
    for await (const row of inventoryRows(oneQuery, inventoryReport.params.parse(query))) rows.push(row);
    return rows;
  }

  /** The CSV cells of the one query as the database writes them (the export's SQL), each row's cells in column order. */
  async function cellsInSql(query: Record<string, string>): Promise<string[][] | null> {
    const params = inventoryReport.params.parse(query);
    const exported = await inventoryReport.export(oneQuery, params);
    if (!exported.sql) return null;
    const columns = csvColumns(exported.columns);
    const cells: string[][] = [];
    for (const { text, values } of exported.sql.queries((value) => columns.map((c, i) => `${csvCellSql(c, value, {})} as c${i}`))) {
      const rows = await db.query<Record<string, string | null>>(text, values);
      cells.push(...rows.map((r) => columns.map((_, i) => r[`c${i}`] ?? '')));
    }
    return cells;
  }

  const queries: Array<Record<string, string>> = [
    {},
    { sort: 'price_per_month' },
    { sort: 'first_seen', dir: 'asc' },
    { sort: 'last_seen' },
    { sort: 'name', dir: 'desc' },
    { tag: 'team:ml' },
    { state: 'running' },
    // Past collections: before the gap, after it (i6 removed, i7 added), and the day before.
    { at: T1.toISOString() },
    { at: T2.toISOString() },
    { at: T0.toISOString(), sort: 'price_per_hour' },
    { at: TP.toISOString() },
  ];

  for (const kind of INVENTORY_KINDS) {
    it(`gives the ${kind} rows and cells of the paged export`, async () => {
      let compared = 0;
      let rowsSeen = 0;
      for (const extra of queries) {
        const query = { kind, ...extra };
        if (!inventoryReport.params.safeParse(query).success) continue;
        const reference = await paged(query);
        expect(await inOneQuery(query), JSON.stringify(query)).toEqual(reference);
        const cells = await cellsInSql(query);
        if (kind === 'ports') expect(cells, 'ports are written in Node').toBeNull();
        else {
          const columns = csvColumns((await inventoryReport.export(oneQuery, inventoryReport.params.parse(query))).columns);
          expect(cells, JSON.stringify(query)).toEqual(reference.map((row) => csvRecord(row, columns)));
        }
        rowsSeen += reference.length;
        compared++;
      }
      expect(compared).toBeGreaterThanOrEqual(3);
      expect(rowsSeen).toBeGreaterThan(0);
    });
  }

  it('compares rows that show the history (the comparisons above compare something)', async () => {
    const now = await inOneQuery({ kind: 'instances' });
    const byId = new Map(now.map((r) => [r.resource_id, r]));
    // The price change: i7 (g-a100, running) at 2.75 now, 2.50 as of T2; i1 stopped since: 0.
    expect(byId.get('i7')).toMatchObject({ price_per_hour: expect.stringMatching(/^2\.750*$/), currency: 'EUR' });
    expect(byId.get('i1')).toMatchObject({ status: 'SHUTOFF', running: false, price_per_hour: '0' });
    expect(byId.get('i3')!.scheduled_stop_at).toEqual(new Date(T3.getTime() + 3600_000));
    expect(byId.has('i6')).toBe(false);
    expect(byId.get('i1')!.first_seen).toEqual(TP);
    const atT2 = await inOneQuery({ kind: 'instances', at: T2.toISOString() });
    expect(atT2.find((r) => r.resource_id === 'i7')).toMatchObject({ price_per_hour: expect.stringMatching(/^2\.50*$/) });
    const atT1 = await inOneQuery({ kind: 'instances', at: T1.toISOString() });
    expect(atT1.map((r) => r.resource_id)).toContain('i6');
    expect(atT1.map((r) => r.resource_id)).not.toContain('i7');
    expect((await inOneQuery({ kind: 'ports' })).length).toBeGreaterThan(0);
  });
});

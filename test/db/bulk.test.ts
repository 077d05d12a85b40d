import { and, asc, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arrayLiteral, bulkCopy, bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
// Rows of complete snapshots written directly, as tools and tests write them, are kept rows (the
// views read them; the collectors' unlogged staging tables are read by the fold only).
import { collectionRuns, gpuFlavorsKept as gpuFlavors, instancesKept as instances, snapshots, storageSshKeysKept as storageSshKeys } from '../../src/db/schema.js';
import { testDatabases } from '../helpers/databases.js';

const ODD_TAGS = {
  'cost.center': 'R&D "core"',
  'team/sub': 'ml\\infra',
  'Ünïcode key': 'välue ✓ 日本',
  'with space': '',
  '{braces},comma': 'NULL',
};

function instanceRow(snapshotId: number, i: number) {
  return {
    snapshotId,
    instanceId: `inst-${String(i).padStart(5, '0')}`,
    name: i % 7 === 0 ? null : `vm ${i} "quoted" \\ back`,
    status: i % 3 === 0 ? 'SHUTOFF' : 'ACTIVE',
    flavorName: 'g1-gpu-1',
    vcpus: i % 5 === 0 ? null : 8,
    projectId: 1,
    regionId: 2,
    createdAt: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, i % 1000)),
    securityGroupIds: i % 2 === 0 ? ['sg-a', 'sg "b", {c}'] : [],
    securityGroupNames: ['default', null as unknown as string],
    tags: i % 4 === 0 ? {} : { ...ODD_TAGS, team: `team-${i % 3}` },
    tagsReadOnly: i % 4 === 0 ? [] : ['cost.center'],
    tagsOriginal: [{ key: 'Cost.Center', value: 'R&D "core"', read_only: true }],
    raw: { id: `inst-${i}`, nested: { list: [1, null, 'x'], quote: '"\'\\', emoji: '🚀' }, empty: {} },
  };
}

/** A run and a complete instance snapshot to hang rows on; returns the snapshot's id. */
async function instanceSnapshot(database: Database): Promise<number> {
  const [run] = await database.db.insert(collectionRuns).values({ trigger: 'manual', collectors: ['instances'], runnerId: 'test' }).returning();
  const [snap] = await database.db
    .insert(snapshots)
    .values({ runId: run!.id, kind: 'instance', scopeKey: 'p1-r2', projectId: 1, regionId: 2, complete: true })
    .returning();
  return snap!.id;
}

describe.each(testDatabases())('bulkInsert on $name', ({ open }) => {
  let database: Database;
  let snapshotId: number;

  beforeAll(async () => {
    database = await open();
    snapshotId = await instanceSnapshot(database);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('round-trips nulls, quotes, unicode, odd tag keys, arrays and timestamps exactly', async () => {
    const rows = Array.from({ length: 1203 }, (_, i) => instanceRow(snapshotId, i));
    const inserted = await bulkInsert(database, instances, rows, { chunkSize: 500 });
    expect(inserted).toBe(1203);

    const back = await database.db
      .select()
      .from(instances)
      .where(eq(instances.snapshotId, snapshotId))
      .orderBy(asc(instances.instanceId));
    expect(back).toHaveLength(1203);
    for (const [i, row] of back.entries()) {
      const sent = rows[i]!;
      expect(row).toMatchObject({
        instanceId: sent.instanceId,
        name: sent.name,
        status: sent.status,
        vcpus: sent.vcpus,
        createdAt: sent.createdAt,
        securityGroupIds: sent.securityGroupIds,
        securityGroupNames: sent.securityGroupNames,
        tags: sent.tags,
        tagsReadOnly: sent.tagsReadOnly,
        tagsOriginal: sent.tagsOriginal,
        raw: sent.raw,
        // columns not given get their defaults or NULL
        description: null,
        volumeCount: null,
      });
    }
  });

  it('stores numeric money exactly and sums it exactly in SQL', async () => {
    const rows = [
      { flavorId: 'a', pricePerHour: '0.1', pricePerMonth: '72.000000000000000001' },
      { flavorId: 'b', pricePerHour: '0.2', pricePerMonth: null },
      { flavorId: 'c', pricePerHour: null, pricePerMonth: '0' },
      { flavorId: 'd', pricePerHour: '123456789012345678.987654321', pricePerMonth: '1e-9' },
    ].map((r) => ({ ...r, snapshotId, currencyCode: 'EUR', hardware: { gpu: '8x H100', 'odd.key': 'v' }, raw: {} }));
    await bulkInsert(database, gpuFlavors, rows);

    const sums = await database.query<{ hour: string; month: string; ab: string }>(
      `SELECT sum(price_per_hour)::text AS hour, sum(price_per_month)::text AS month,
              sum(price_per_hour) FILTER (WHERE flavor_id IN ('a', 'b'))::text AS ab
         FROM gpu_flavors WHERE snapshot_id = $1`,
      [snapshotId],
    );
    expect(sums).toEqual([{ hour: '123456789012345679.287654321', month: '72.000000001000000001', ab: '0.3' }]);

    const back = await database.db.select().from(gpuFlavors).where(eq(gpuFlavors.snapshotId, snapshotId)).orderBy(asc(gpuFlavors.flavorId));
    expect(back.map((r) => r.pricePerHour)).toEqual(['0.1', '0.2', null, '123456789012345678.987654321']);
    expect(back[0]!.hardware).toEqual({ gpu: '8x H100', 'odd.key': 'v' });
  });

  it('keeps int64 ids above 2^53 exact', async () => {
    await bulkInsert(database, storageSshKeys, [
      { snapshotId, keyId: '9223372036854775807', name: 'max', raw: { id: 9223372036854775807n.toString() } },
      { snapshotId, keyId: 9007199254740993n as unknown as string, name: 'bigint', raw: {} },
    ]);
    const back = await database.db.select({ keyId: storageSshKeys.keyId }).from(storageSshKeys).orderBy(asc(storageSshKeys.name));
    expect(back.map((r) => r.keyId)).toEqual(['9007199254740993', '9223372036854775807']);
    const raw = await database.query<{ key_id: string }>('SELECT key_id FROM storage_ssh_keys ORDER BY key_id');
    expect(raw.map((r) => r.key_id)).toEqual(['9007199254740993', '9223372036854775807']);
  });

  it('finds rows by one tag value through the GIN index operator, odd keys included', async () => {
    const byOddKey = await database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM instances WHERE snapshot_id = $1 AND tags @> $2::jsonb`,
      [snapshotId, JSON.stringify({ 'Ünïcode key': 'välue ✓ 日本', 'team/sub': 'ml\\infra' })],
    );
    const expected = Array.from({ length: 1203 }, (_, i) => i).filter((i) => i % 4 !== 0).length;
    expect(byOddKey).toEqual([{ n: expected }]);

    const byTeam = await database.query<{ team: string | null; n: number }>(
      `SELECT tags->>'team' AS team, count(*)::int AS n FROM instances WHERE snapshot_id = $1
        GROUP BY 1 ORDER BY 1 NULLS FIRST`,
      [snapshotId],
    );
    const counts = new Map<string | null, number>();
    for (let i = 0; i < 1203; i++) {
      const team = i % 4 === 0 ? null : `team-${i % 3}`;
      counts.set(team, (counts.get(team) ?? 0) + 1);
    }
    expect(byTeam).toEqual([null, 'team-0', 'team-1', 'team-2'].map((team) => ({ team, n: counts.get(team) })));
  });

  it('is atomic inside a transaction: a failing chunk rolls back the earlier ones', async () => {
    const before = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM instances');
    const rows = Array.from({ length: 30 }, (_, i) => instanceRow(snapshotId, 100_000 + i));
    rows[25] = { ...rows[25]!, instanceId: rows[3]!.instanceId }; // duplicate key in a later chunk
    await expect(
      database.transaction((tx) => bulkInsert(tx, instances, rows, { chunkSize: 10 })),
    ).rejects.toThrow(/bulk insert into "instances" \(rows 20\.\.29 of 30\) failed: .*duplicate key/);
    const after = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM instances');
    expect(after).toEqual(before);
  });

  it('gives NOT NULL columns their default where a row has no value, and NULL elsewhere', async () => {
    const rows = [
      { ...instanceRow(snapshotId, 500_000), tags: { team: 'x' }, tagsReadOnly: ['team'] },
      { snapshotId, instanceId: 'defaults-only', raw: { a: 1 }, tags: undefined, tagsReadOnly: undefined, name: undefined },
    ];
    await bulkInsert(database, instances, rows);
    const [row] = await database.db.select().from(instances).where(eq(instances.instanceId, 'defaults-only'));
    expect(row).toMatchObject({ tags: {}, tagsReadOnly: [], securityGroupIds: [], tagsOriginal: [], name: null, raw: { a: 1 } });

    const [run] = await database.db.select().from(collectionRuns).limit(1);
    await bulkInsert(database, snapshots, [
      { runId: run!.id, kind: 'port', scopeKey: 'defaults' },
      { runId: run!.id, kind: 'keypair', scopeKey: 'defaults', takenAt: new Date('2020-01-01T00:00:00Z'), complete: true },
    ]);
    const made = await database.query<{ kind: string; complete: boolean; row_count: number; recent: boolean }>(
      `SELECT kind, complete, row_count, taken_at > now() - interval '1 hour' AS recent FROM snapshots WHERE scope_key = 'defaults' ORDER BY kind`,
    );
    expect(made).toEqual([
      { kind: 'keypair', complete: true, row_count: 0, recent: false },
      { kind: 'port', complete: false, row_count: 0, recent: true },
    ]);
  });

  it('skips colliding rows when asked to', async () => {
    const rows = [instanceRow(snapshotId, 1), instanceRow(snapshotId, 999_999)];
    const inserted = await bulkInsert(database, instances, rows, { onConflictDoNothing: true });
    expect(inserted).toBe(1);
  });

  it('names the row and column of a value it cannot store', async () => {
    const bad = { ...instanceRow(snapshotId, 5), vcpus: Number.NaN };
    await expect(bulkInsert(database, instances, [instanceRow(snapshotId, 6), bad])).rejects.toThrow(
      'bulk insert into "instances": row 1, column "vcpus" (integer): not a finite number (NaN)',
    );
    await expect(
      bulkInsert(database, instances, [instanceRow(snapshotId, 7), { ...instanceRow(snapshotId, 8), raw: { id: 1n } }]),
    ).rejects.toThrow(/^bulk insert into "instances": row 1, column "raw" \(json\): .*BigInt/);
    await expect(bulkInsert(database, instances, [{ ...bad, vcpus: 1, bogus: 1 } as never])).rejects.toThrow(
      'unknown column key "bogus"',
    );
  });
});

/** Text that COPY's text format must escape: tab, newline, carriage return and backslash, in every kind of column. */
const COPY_HOSTILE = 'tab\there\nnew line\r\nCRLF \\N not null \\. end \\\\ two';

describe.each(testDatabases())('bulkCopy on $name', ({ open }) => {
  let database: Database;
  let snapshotId: number;

  beforeAll(async () => {
    database = await open();
    snapshotId = await instanceSnapshot(database);
  });
  afterAll(async () => {
    await database?.close();
  });

  it('round-trips the same values as bulkInsert, and text COPY must escape, exactly', async () => {
    const rows = Array.from({ length: 2345 }, (_, i) => {
      const row = instanceRow(snapshotId, i);
      if (i % 10 !== 3) return row;
      return {
        ...row,
        name: COPY_HOSTILE,
        description: '\\N',
        securityGroupIds: [COPY_HOSTILE, 'plain'],
        tags: { [COPY_HOSTILE]: COPY_HOSTILE },
        raw: { text: COPY_HOSTILE, nested: [COPY_HOSTILE, { '\t': '\\' }] },
      };
    });
    expect(await bulkCopy(database, instances, rows)).toBe(2345);

    const back = await database.db
      .select()
      .from(instances)
      .where(eq(instances.snapshotId, snapshotId))
      .orderBy(asc(instances.instanceId));
    expect(back).toHaveLength(2345);
    for (const [i, row] of back.entries()) {
      const sent = rows[i]!;
      expect(row).toMatchObject({
        instanceId: sent.instanceId,
        name: sent.name,
        description: 'description' in sent ? sent.description : null,
        status: sent.status,
        vcpus: sent.vcpus,
        createdAt: sent.createdAt,
        securityGroupIds: sent.securityGroupIds,
        securityGroupNames: sent.securityGroupNames,
        tags: sent.tags,
        tagsReadOnly: sent.tagsReadOnly,
        tagsOriginal: sent.tagsOriginal,
        raw: sent.raw,
        volumeCount: null,
      });
    }
  });

  it('stores numeric money and int64 ids exactly', async () => {
    await bulkCopy(
      database,
      gpuFlavors,
      [
        { flavorId: 'copy-a', pricePerHour: '0.1', pricePerMonth: '72.000000000000000001' },
        { flavorId: 'copy-b', pricePerHour: '123456789012345678.987654321', pricePerMonth: null },
      ].map((r) => ({ ...r, snapshotId, currencyCode: 'EUR', raw: {} })),
    );
    const sums = await database.query<{ hour: string; month: string }>(
      `SELECT sum(price_per_hour)::text AS hour, sum(price_per_month)::text AS month FROM gpu_flavors WHERE flavor_id LIKE 'copy-%'`,
    );
    expect(sums).toEqual([{ hour: '123456789012345679.087654321', month: '72.000000000000000001' }]);

    await bulkCopy(database, storageSshKeys, [{ snapshotId, keyId: 9223372036854775807n as unknown as string, name: 'copy-max', raw: {} }]);
    expect(await database.query(`SELECT key_id FROM storage_ssh_keys WHERE name = 'copy-max'`)).toEqual([{ key_id: '9223372036854775807' }]);
  });

  it('gives NOT NULL columns their default where a row has no value, in one COPY per set of columns left out', async () => {
    const first = { ...instanceRow(snapshotId, 600_000), tags: { team: 'x' }, tagsReadOnly: ['team'] };
    const last = { ...instanceRow(snapshotId, 600_001), name: 'last' };
    const rows = [
      first,
      { snapshotId, instanceId: 'copy-defaults-1', raw: { a: 1 }, tags: undefined, tagsReadOnly: undefined, name: undefined },
      { snapshotId, instanceId: 'copy-defaults-2', raw: { a: 2 }, tags: null as never, tagsReadOnly: ['kept'], securityGroupIds: ['sg'] },
      last,
    ];
    expect(await bulkCopy(database, instances, rows)).toBe(4);
    const back = await database.db
      .select()
      .from(instances)
      .where(and(eq(instances.snapshotId, snapshotId), inArray(instances.instanceId, rows.map((r) => r.instanceId))))
      .orderBy(asc(instances.instanceId));
    expect(back.map((r) => [r.instanceId, r.name, r.tags, r.tagsReadOnly, r.securityGroupIds, r.tagsOriginal])).toEqual([
      ['copy-defaults-1', null, {}, [], [], []],
      ['copy-defaults-2', null, {}, ['kept'], ['sg'], []],
      [first.instanceId, first.name, { team: 'x' }, ['team'], first.securityGroupIds, first.tagsOriginal],
      [last.instanceId, 'last', last.tags, last.tagsReadOnly, last.securityGroupIds, last.tagsOriginal],
    ]);
  });

  it('names the row and column of a value it cannot store, before sending anything', async () => {
    const before = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM instances');
    await expect(bulkCopy(database, instances, [instanceRow(snapshotId, 700_000), { ...instanceRow(snapshotId, 700_001), vcpus: Number.NaN }])).rejects.toThrow(
      'bulk copy into "instances": row 1, column "vcpus" (integer): not a finite number (NaN)',
    );
    await expect(
      bulkCopy(database, instances, [instanceRow(snapshotId, 700_002), { ...instanceRow(snapshotId, 700_003), raw: { id: 1n } }]),
    ).rejects.toThrow(/^bulk copy into "instances": row 1, column "raw" \(json\): .*BigInt/);
    expect(await database.query('SELECT count(*)::int AS n FROM instances')).toEqual(before);
  });

  it('names the row of a server error, writes nothing of the copy, and rolls back with its transaction', async () => {
    const before = await database.query<{ n: number }>('SELECT count(*)::int AS n FROM instances');
    const rows = Array.from({ length: 2500 }, (_, i) => instanceRow(snapshotId, 800_000 + i));
    rows[2100] = { ...rows[2100]!, instanceId: rows[5]!.instanceId }; // a repeated key, in the copy's third piece of text
    await expect(bulkCopy(database, instances, rows)).rejects.toThrow(/^bulk copy into "instances" \(2500 rows\) failed at row 2100: .*duplicate key/);
    expect(await database.query('SELECT count(*)::int AS n FROM instances')).toEqual(before);

    await expect(
      database.transaction(async (tx) => {
        await bulkCopy(tx, instances, [instanceRow(snapshotId, 900_000)]);
        await bulkCopy(tx, instances, [instanceRow(snapshotId, 900_001), { ...instanceRow(snapshotId, 900_002), createdAt: 'not a time' as never }]);
      }),
    ).rejects.toThrow(/^bulk copy into "instances" \(2 rows\) failed at row 1, column "created_at": .*timestamp/);
    expect(await database.query('SELECT count(*)::int AS n FROM instances')).toEqual(before);

    // The connection that saw the errors is usable again.
    expect(await bulkCopy(database, instances, [instanceRow(snapshotId, 900_003)])).toBe(1);
  });
});

describe('arrayLiteral', () => {
  it('quotes every element and escapes quotes and backslashes', () => {
    expect(arrayLiteral(['a', null, 'NULL', 'x "y" \\z', '{,}', ''])).toBe('{"a",NULL,"NULL","x \\"y\\" \\\\z","{,}",""}');
  });
});

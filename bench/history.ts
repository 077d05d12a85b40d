/**
 * `npm run bench history [-- --instances 100000 --scopes 10 --days 30 --rounds 3 --collection-only]`: the history storage
 * (versions) on the local Postgres, each figure with the baseline it is compared with:
 *
 *  1. a collection of N instances with nothing changed, through the snapshot writer (COPY into
 *     the staging table page by page + the finalising transaction that folds into versions),
 *     against a plain COPY of the same rows into a table of the same shape;
 *  2. the storage a collection adds when 1% of the instances changed (pg_total_relation_size of
 *     every table it writes, before and after; the staging table is vacuumed after each
 *     collection, as autovacuum does), against the old storage's full copy (the same rows);
 *  3. `days` of hourly history with 1% hourly churn built synthetically in SQL (versions as the
 *     writer stores them), measured;
 *  4. the rows of a past collection, first page (50 by instance id), through the view.
 */
import { loadAverage, out, secs as secsOf } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import { performance } from 'node:perf_hooks';
import { deleteSnapshots } from '../src/db/delete-snapshots.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { loadConfig } from '../src/config/index.js';
import { refreshCurrentInstances } from '../src/costing/derive/current-instances.js';
import { idleTagExtraction } from '../src/read-models/idle-rules-sql.js';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { collect, copyPlain, T0 } from './synthetic-instances.js';


const parseOptions = (args: string[]) =>
  parseBenchOptions('history', args, { databaseUrl: BENCH_SERVER as string, instances: 100_000, scopes: 10, days: 30, rounds: 3, collectionOnly: false, keep: false });
type Options = ReturnType<typeof parseOptions>;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const secs = (n: number) => secsOf(n, 2);
// With the read model the service refreshes after each run (notify/after-run.ts): what the idle list reads.
const STORAGE_TABLES = ['instances_versions', 'instances_staged', 'snapshots', 'resource_presence', 'cost_rollups', 'current_instances'];
async function sizes(db: Database): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of STORAGE_TABLES) {
    const [r] = await db.query<{ n: string }>(`select pg_total_relation_size($1::regclass) as n`, [t]);
    out[t] = Number(r!.n);
  }
  return out;
}

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const dbName = benchDatabaseName('history');
  const url = withDatabase(o.databaseUrl, dbName);
  await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  try {
    db = await openDatabase({ driver: 'pg', url }, { poolSize: 4 });
    await migrateDatabase(db);
    out(`history benchmark: ${o.instances.toLocaleString('en-US')} instances in ${o.scopes} scopes -> ${dbName}`);

    // 1. First collection (everything new), then one with nothing changed, against plain COPY.
    const first = await collect(db, o, T0, () => 0);
    out(`first collection (all new): COPY into staging ${secs(first.copyMs)}, finalise + fold ${secs(first.finaliseMs)}`);
    // What autovacuum does after a bulk load: statistics, so the fold's anti-joins are hash joins.
    await db.execute('ANALYZE');
    // Baseline: the same rows COPYed into a table of the same shape without versions (the old storage's write).
    await db.execute('CREATE TABLE plain_copy (LIKE instances_staged INCLUDING ALL)');
    await db.execute('ALTER TABLE plain_copy DROP CONSTRAINT IF EXISTS plain_copy_pkey');
    const ratios: number[] = [];
    for (let round = 1; round <= o.rounds; round++) {
      const same = await collect(db, o, new Date(T0.getTime() + round * 3600_000), () => 0, true);
      await db.execute('TRUNCATE plain_copy');
      const plain = await copyPlain(db, o);
      const sameMs = same.copyMs + same.finaliseMs;
      ratios.push(sameMs / plain);
      out(`collection, nothing changed (${round}/${o.rounds}): ${secs(sameMs)} (COPY into staging ${secs(same.copyMs)} + finalise/fold ${secs(same.finaliseMs)}: ${same.profile})`);
      out(`  plain COPY of the same ${same.rows.toLocaleString('en-US')} rows: ${secs(plain)} -> ratio ${(sameMs / plain).toFixed(2)} x (load ${loadAverage()})`);
    }
    ratios.sort((a, b) => a - b);
    out(`nothing-changed collection / plain COPY: median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)} x, range ${ratios[0]!.toFixed(2)}-${ratios.at(-1)!.toFixed(2)} x over ${ratios.length} rounds (target <= 2 x)`);
    if (o.collectionOnly) return;

    // After a run the service refreshes current_instances (notify/after-run.ts), outside the
    // collection's transaction: timed apart, with nothing changed it computes every row and writes none.
    const config = loadConfig({});
    await refreshCurrentInstances(db, idleTagExtraction(config));
    const sameAgain = await collect(db, o, new Date(T0.getTime() + (o.rounds + 1) * 3600_000), () => 0);
    let t = performance.now();
    const unchanged = await refreshCurrentInstances(db, idleTagExtraction(config));
    out(`after the run (not part of it): current instances refreshed in ${secs(performance.now() - t)}, ${unchanged?.written ?? 0} rows written (nothing changed; collection ${secs(sameAgain.copyMs + sameAgain.finaliseMs)})`);

    // 2. Storage added by a collection in which 1% changed, with the refresh after it.
    await db.execute('VACUUM ANALYZE');
    const before = await sizes(db);
    const churn = await collect(db, o, new Date(T0.getTime() + (o.rounds + 2) * 3600_000), (n) => (n % 100 === 0 ? 1 : 0));
    t = performance.now();
    const refreshed = await refreshCurrentInstances(db, idleTagExtraction(config));
    out(`after the run: current instances refreshed in ${secs(performance.now() - t)}, ${refreshed?.written ?? 0} rows written`);
    await db.execute('VACUUM instances_staged');
    const after = await sizes(db);
    const added = STORAGE_TABLES.reduce((sum, t) => sum + (after[t]! - before[t]!), 0);
    const [fullCopy] = await db.query<{ n: string }>(`select pg_total_relation_size('plain_copy') as n`);
    out(`collection with 1% changed: ${secs(churn.copyMs + churn.finaliseMs)}; storage added ${mb(added)} (target <= 5 MB)`);
    for (const t of STORAGE_TABLES) out(`  ${t.padEnd(20)} ${mb(after[t]! - before[t]!)} (now ${mb(after[t]!)})`);
    out(`  baseline, the old storage's copy of every row: ${mb(Number(fullCopy!.n))} -> ratio ${(added / Number(fullCopy!.n)).toFixed(4)}`);
    const [per] = await db.query<{ n: string; c: string }>(`select pg_total_relation_size('instances_versions') as n, count(*) as c from instances_versions`);
    out(`  one instance version with its indexes: ${(Number(per!.n) / Number(per!.c)).toFixed(0)} B`);

    // 3. `days` hourly with 1% hourly churn, synthetic: each instance changes every 100 hours.
    await buildMonth(db, o);
    const [month] = await db.query<{ v: string; s: string; c: string }>(
      `select pg_total_relation_size('instances_versions') + pg_total_relation_size('snapshots') as v, pg_total_relation_size('snapshots') as s, (select count(*) from instances_versions) as c`,
    );
    out(`${o.days} days hourly, 1% hourly churn: ${Number(month!.c).toLocaleString('en-US')} versions, ${mb(Number(month!.v))} (target <= 2.5 GB); the old storage: ${o.days * 24} x ${mb(Number(fullCopy!.n))} = ${mb(o.days * 24 * Number(fullCopy!.n))}`);

    // 4. Rows of a past collection, first page.
    await db.execute('VACUUM ANALYZE');
    const past = await db.query<{ id: number }>(`select id from snapshots where kind = 'instance' and scope_key = 'p1-r1' order by taken_at limit 1 offset ${Math.floor((o.days * 24) / 3)}`);
    const latest = await db.query<{ id: number }>(`select id from snapshots where kind = 'instance' and scope_key = 'p1-r1' order by taken_at desc limit 1`);
    for (const [label, id] of [['a past collection', past[0]!.id], ['the latest collection', latest[0]!.id]] as const) {
      const times: number[] = [];
      for (let i = 0; i < 7; i++) {
        const t = performance.now();
        await db.query(`select instance_id, name, status, flavor_name, tags from instances where snapshot_id = $1 order by instance_id limit 50`, [id]);
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      out(`first page of ${label} (snapshot ${id}): median ${times[3]!.toFixed(1)} ms, max ${times[6]!.toFixed(1)} ms (target < 200 ms)`);
    }
    const plan = await db.query<{ 'QUERY PLAN': string }>(`explain select * from instances where snapshot_id = $1`, [past[0]!.id]);
    out('plan of `select * from instances where snapshot_id = $1`:');
    for (const r of plan) out(`  ${r['QUERY PLAN']}`);
  } finally {
    await db?.close();
    if (o.keep) out(`kept database ${dbName}`);
    else await onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  }
}

/**
 * `days` x 24 hourly instance snapshots per scope and their versions, in SQL: instance n of a
 * scope changes at the hours h > 0 with h % 100 = n % 100 (1% of the instances every hour), so it
 * has a version per change; content copied from the stored first version, `rev` tag bumped.
 */
async function buildMonth(db: Database, o: Options): Promise<void> {
  const hours = o.days * 24;
  await db.transaction((tx) => deleteSnapshots(tx, `s.kind = 'instance'`));
  await db.execute('truncate instances_versions');
  await db.execute(
    `insert into snapshots (run_id, kind, scope_key, project_id, region_id, taken_at, complete, row_count, versioned)
     select null, 'instance', 'p' || s || '-r' || s, s, s, $1::timestamptz + h * interval '1 hour', true, $3, true
       from generate_series(1, $2::int) s cross join generate_series(0, $4::int - 1) h`,
    [T0, o.scopes, Math.ceil(o.instances / o.scopes), hours],
  );
  // Content from plain_copy (every instance's first content); version k bumps the `rev` tag.
  await db.execute(
    `insert into instances_versions (scope_key, instance_id, name, description, status, vm_state, task_state, flavor_id, flavor_name, vcpus, ram,
        project_id, region_id, region, created_at, ssh_key_name, security_group_ids, security_group_names, volume_count, tags, tags_read_only, tags_original, raw,
        valid_from, valid_to)
     select 'p' || c.project_id || '-r' || c.region_id, c.instance_id, c.name, c.description, c.status, c.vm_state, c.task_state, c.flavor_id, c.flavor_name, c.vcpus, c.ram,
        c.project_id, c.region_id, c.region, c.created_at, c.ssh_key_name, c.security_group_ids, c.security_group_names, c.volume_count,
        c.tags || jsonb_build_object('rev', b.k::text), c.tags_read_only, c.tags_original, c.raw,
        $1::timestamptz + b.h * interval '1 hour',
        $1::timestamptz + b.nxt * interval '1 hour'
       from plain_copy c
       cross join lateral (
         select h, lead(h) over (order by h) as nxt, row_number() over (order by h) - 1 as k
           from (select 0 as h union all
                 select g from generate_series(substring(c.instance_id from '.{7}$')::int % 100, $2::int - 1, 100) g where g > 0) x
       ) b`,
    [T0, hours],
  );
}

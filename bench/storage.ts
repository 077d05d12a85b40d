/**
 * `npm run bench storage [-- --instances 10000 --scopes 10 --days 30 --keep]`: the storage a month
 * of hourly history really takes, every table, built the way the service builds it: each hour the
 * instances of every scope through the snapshot writer (staging COPY, the fold into versions,
 * presence, cost rollups), 1% of them changed each hour; every 6 hours the flavors with their
 * prices (the default schedule), also through the writer; at each UTC midnight what the service
 * does after a run (statistics, current instances, anomaly explanations) and the closing of the
 * complete days. Autovacuum is not relied on: the staging tables are vacuumed after each
 * collection and the whole database every simulated day, as autovacuum would.
 *
 * Figure: `pg_database_size` after a final VACUUM, the empty migrated database subtracted and
 * also shown; baseline, measured in the same run: one collection's rows as a plain table (the
 * storage without versions), times the hours.
 */
import { performance } from 'node:perf_hooks';
import { openSnapshot } from '../src/collect/snapshot-writer.js';
import { closeCompleteDays } from '../src/costing/derive/closed-days.js';
import { deriveAfterRun } from '../src/costing/derive/after-run.js';
import { gapCapsFor } from '../src/costing/gap-caps.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { gpuFlavors } from '../src/db/schema.js';
import { silentLogger } from '../src/logger.js';
import { idleTagExtraction } from '../src/read-models/idle-rules-sql.js';
import { explanationSource } from '../src/reports/anomalies.js';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { loadAverage, out, percentile } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import { collect, copyPlain, T0 } from './synthetic-instances.js';

const parseOptions = (args: string[]) =>
  parseBenchOptions('storage', args, { databaseUrl: BENCH_SERVER as string, instances: 10_000, scopes: 10, days: 30, keep: false });
type Options = ReturnType<typeof parseOptions>;

const HOUR_MS = 3600_000;
const FLAVOR_EVERY_HOURS = 6;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * The content version of instance n at hour h: it changes at the hours h > 0 with h % 100 = n % 100
 * (1% of the instances every hour), as the history benchmark's SQL-built month.
 */
export function versionAt(n: number, hour: number): number {
  const first = n % 100 === 0 ? 100 : n % 100;
  return hour >= first ? Math.floor((hour - first) / 100) + 1 : 0;
}

/** Eight GPU flavors of a scope, priced in EUR, matched by the instances' flavor names. */
function flavorRows(scope: number, snapshotId: number): (typeof gpuFlavors.$inferInsert)[] {
  return Array.from({ length: 8 }, (_, k) => {
    const pricePerHour = (1.25 + k * 0.75).toFixed(2);
    return {
      snapshotId,
      flavorId: `f-${k}`,
      flavorName: `g${k}-large`,
      disabled: false,
      capacity: 4,
      currencyCode: 'EUR',
      pricePerHour,
      pricePerMonth: (Number(pricePerHour) * 730).toFixed(2),
      priceStatus: 'show',
      resourceClass: 'gpu',
      hardware: { cpu: '32', ram: '256G', gpu: `${k}x A100`, disk: '960G', network: '100G', ephemeral: null },
      projectId: scope,
      regionId: scope,
      raw: { flavor_id: `f-${k}`, flavor_name: `g${k}-large`, price_per_hour: pricePerHour, currency_code: 'EUR' },
    };
  });
}

async function collectFlavors(db: Database, o: Options, takenAt: Date): Promise<void> {
  for (let scope = 1; scope <= o.scopes; scope++) {
    const writer = await openSnapshot(db, { runId: null, kind: 'flavor', scopeKey: `p${scope}-r${scope}`, projectId: scope, regionId: scope, takenAt });
    await writer.insert(gpuFlavors, flavorRows(scope, writer.id));
    await writer.finalise();
  }
}

async function databaseSize(db: Database): Promise<number> {
  const [r] = await db.query<{ n: string }>(`select pg_database_size(current_database()) as n`);
  return Number(r!.n);
}

/** The storage without versions: one collection's rows as a plain table of the staging table's shape. */
async function plainCopySize(db: Database, o: Options): Promise<number> {
  await db.execute('CREATE TABLE plain_copy (LIKE instances_staged INCLUDING ALL)');
  await copyPlain(db, o);
  await db.execute('VACUUM ANALYZE plain_copy');
  const [r] = await db.query<{ n: string }>(`select pg_total_relation_size('plain_copy') as n`);
  await db.execute('DROP TABLE plain_copy');
  return Number(r!.n);
}

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const hours = o.days * 24;
  const dbName = benchDatabaseName('storage');
  await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  try {
    db = await openDatabase({ driver: 'pg', url: withDatabase(o.databaseUrl, dbName) }, { poolSize: 4 });
    await migrateDatabase(db);
    await db.execute('VACUUM');
    const empty = await databaseSize(db);
    out(`storage benchmark: ${o.instances.toLocaleString('en-US')} instances in ${o.scopes} scopes, ${o.days} days hourly (${hours} collections) through the snapshot writer -> ${dbName}`);
    out(`empty migrated database: ${mb(empty)}`);

    const config = loadConfig({});
    const database = db;
    const afterRun = { db, logger: silentLogger(), tagExtraction: idleTagExtraction(config), explanations: (now: Date) => explanationSource({ db: database, config, now }) };
    const collectionMs: number[] = [];
    const started = performance.now();
    for (let hour = 0; hour < hours; hour++) {
      const takenAt = new Date(T0.getTime() + hour * HOUR_MS);
      if (hour % FLAVOR_EVERY_HOURS === 0) await collectFlavors(db, o, takenAt);
      const t = performance.now();
      await collect(db, o, takenAt, (n) => versionAt(n, hour));
      collectionMs.push(performance.now() - t);
      if ((hour + 1) % 24 === 0) {
        const finishedAt = new Date(takenAt.getTime() + 5 * 60_000);
        await deriveAfterRun(afterRun, finishedAt);
        await closeCompleteDays(db, { now: new Date(takenAt.getTime() + HOUR_MS), maxGapHours: gapCapsFor(config) });
        await db.execute('VACUUM');
        out(`  day ${(hour + 1) / 24}/${o.days}: ${mb((await databaseSize(db)) - empty)} so far, ${((performance.now() - started) / 60_000).toFixed(1)} min (load ${loadAverage()})`);
      }
    }
    await db.execute('VACUUM ANALYZE');
    const total = await databaseSize(db);
    const month = total - empty;
    const plain = await plainCopySize(db, o);
    const [counts] = await db.query<{ snapshots: string; versions: string; rollups: string; daily: string; presence: string }>(
      `select (select count(*) from snapshots) as snapshots, (select count(*) from instances_versions) as versions,
              (select count(*) from cost_rollups) as rollups, (select count(*) from cost_daily) as daily, (select count(*) from resource_presence) as presence`,
    );
    const tables = await db.query<{ name: string; n: string }>(
      `select c.relname as name, pg_total_relation_size(c.oid) as n from pg_class c join pg_namespace ns on ns.oid = c.relnamespace
        where c.relkind in ('r', 'p') and ns.nspname = 'public' order by 2 desc limit 8`,
    );
    out(`collection of ${o.instances.toLocaleString('en-US')} instances through the writer: median ${(percentile(collectionMs, 50) / 1000).toFixed(2)} s, p95 ${(percentile(collectionMs, 95) / 1000).toFixed(2)} s`);
    out(
      `${o.days} days hourly, 1% hourly churn, every table after VACUUM: ${mb(month)} above the empty database (pg_database_size ${mb(total)}); ` +
        `${Number(counts!.snapshots).toLocaleString('en-US')} snapshots, ${Number(counts!.versions).toLocaleString('en-US')} instance versions, ` +
        `${Number(counts!.rollups).toLocaleString('en-US')} rollup rows, ${Number(counts!.daily).toLocaleString('en-US')} daily cost rows, ${Number(counts!.presence).toLocaleString('en-US')} presence rows`,
    );
    out(`  largest tables: ${tables.map((t) => `${t.name} ${mb(Number(t.n))}`).join(', ')}`);
    out(`  baseline, every row copied every hour: ${hours} x ${mb(plain)} = ${mb(hours * plain)} -> ratio ${(month / (hours * plain)).toFixed(4)}`);
    out(`  per instance for the ${o.days} days: ${((month / o.instances) / 1024).toFixed(1)} KB`);
  } finally {
    await db?.close();
    if (o.keep) out(`kept database ${dbName}`);
    else await onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  }
}

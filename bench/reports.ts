/**
 * `npm run bench reports [-- --instances 100000 --scopes 10 --days 30 --hourly-days 7 --samples 30 --users 50 --keep --team-scope --reuse <db> --only csv]`
 *
 * Reports over a month of history in the local Postgres: a fresh database `ct_bench_reports_<pid>_<time>_<random>`
 * (on --database-url, default postgres://postgres@127.0.0.1:5432/postgres; dropped afterwards
 * unless --keep) gets hourly runs for the last --hourly-days days and one run per day before that
 * (what retention keeps by default: hourly detail for a week, then one snapshot per day), rows
 * generated in SQL (generate_series). Every priced snapshot gets its rollups through
 * computeCostRollups (timed), the thinned days their sealed cost_daily. Then, through the real
 * web app on loopback: p50/p95 of each report's JSON and HTML, first with the report cache off
 * (every request computes, as the first one after a collection does) and then on (as served), a
 * full 100,000-row CSV export (time, peak memory growth), the FOCUS export of the month, and the
 * overview's p95 under --users concurrent users (cache off, then on).
 * With --team-scope the history gets the cost partitions of the `team` key (as when a team scope is
 * configured): the rollups are timed with and without them in the same run, and a user scoped to
 * team data (signed in through the proxy header) reads the cost reports, cache off.
 * The CSV export is timed against `psql \copy` of its own SQL, of its unformatted rows, and of a plain
 * ordered select of the same rows (issue 30: within 2 x); --only csv runs that part alone (with --reuse).
 */
import { loadAverage, ms, out, percentile, secs, spread } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { benchDatabaseName, onServer, reusedDatabaseName, withDatabase } from './database.js';
import { childRuntime, moduleUrl, ROOT, rssOf } from './runtime.js';
import { request } from 'undici';
import { loadConfig } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { closeCompleteDays, refreshCostDaily } from '../src/costing/derive/closed-days.js';
import { computeCostRollups } from '../src/costing/derive/rollups.js';
import { gapCapsFor } from '../src/costing/gap-caps.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { silentLogger } from '../src/logger.js';
import { allReports } from '../src/reports/index.js';
import { storeExplanations } from '../src/costing/derive/anomaly-explanations.js';
import { explanationSource } from '../src/reports/anomalies.js';
import { refreshCurrentInstances } from '../src/costing/derive/current-instances.js';
import { idleTagExtraction } from '../src/read-models/idle-rules-sql.js';
import { inventoryExportQueries, inventoryReport } from '../src/reports/inventory.js';
import { inlineParams } from '../src/db/sql-literal.js';
import { latestSnapshots, latestSnapshotsSql } from '../src/db/latest-snapshots.js';
import { csvColumns, csvQueries } from '../src/present/csv.js';
import { DEFAULT_CACHE_OPTIONS } from '../src/reports/shared/cache.js';
import { reportCache } from '../src/reports/shared/define.js';
import { createWebApp } from '../src/web/app.js';
import { BENCH_SCOPE, rollupsWithPartitions, scopedReportTimings } from './partitions.js';
import { ensurePartitionKeys, partitionKeys } from '../src/costing/derive/partition-keys.js';
import { foldSnapshots, generateClustersAndK8s, generateFlavors, generateInstances, generatePresence, generateRunsAndSnapshots, type BenchShape } from './reports-data.js';



function parseArgs(args: string[]): Options {
  const o = parseOptions(args);
  if (o.hourlyDays > o.days) throw new Error('bench reports: --hourly-days must not exceed --days');
  if (o.only !== null && o.only !== 'csv') throw new Error('bench reports: --only takes csv (the inventory CSV export and its baselines alone)');
  return o;
}

const parseOptions = (args: string[]) =>
  parseBenchOptions('reports', args, { databaseUrl: BENCH_SERVER as string, instances: 100_000, scopes: 10, days: 30, hourlyDays: 7, samples: 30, users: 50, requestsPerUser: 10, keep: false, noFocusExport: false, teamScope: false, reuse: null as string | null, only: null as string | null });
type Options = ReturnType<typeof parseOptions>;



// ---------------------------------------------------------------------------------------------
// Data.

/**
 * Generates the history run by run, each finalised as a collection is: the run's priced snapshots
 * is folded into versions, then its priced snapshots get their rollups (computeCostRollups, timed),
 * as the snapshot writer finalises. Returns ms of rollups per run of `instances` instances.
 */
export async function generate(db: Database, shape: BenchShape): Promise<{ perRun: number[]; total: number }> {
  let t = performance.now();
  await generateRunsAndSnapshots(db, shape);
  await generateFlavors(db);
  await generateClustersAndK8s(db);
  const runs = await db.query<{ n: number }>('select count(*)::int as n from collection_runs');
  out(`runs, snapshots, flavors, clusters, Kubernetes prices (staged): ${runs[0]!.n} runs in ${secs(performance.now() - t)}`);
  t = performance.now();
  let last = t;
  const perRun: number[] = [];
  let rollupMs = 0;
  await generateInstances(
    db,
    shape,
    (done, total) => {
      if (performance.now() - last > 30_000 || done === total) {
        last = performance.now();
        out(`  instances: ${done}/${total} runs (${secs(last - t)})`);
      }
    },
    async (runId) => {
      // Statistics of the freshly filled staging table, as a collection refreshes them before finalising.
      await db.execute('ANALYZE instances_staged');
      // The fold first, as the snapshot writer finalises: the rollups read the rows from versions
      // and kept tables, not from staging (before the fold they would find no rows).
      await foldSnapshots(db, ['flavor', 'instance', 'cluster', 'k8s_price'], runId);
      const snaps = await db.query<{ id: number; kind: string }>(
        "select id, kind from snapshots where run_id = $1 and kind in ('instance', 'cluster', 'k8s_price') order by taken_at, id",
        [runId],
      );
      let runMs = 0;
      for (const s of snaps) {
        const started = performance.now();
        await computeCostRollups(db, s.id);
        if (s.kind === 'instance') runMs += performance.now() - started;
        rollupMs += performance.now() - started;
      }
      perRun.push(runMs);
      // What autovacuum does between hourly collections: the folded rows' space is reused by the
      // next run's staging (without it the staging table grows by a run's rows every run).
      await db.execute('VACUUM instances_staged');
    },
  );
  // Every priced snapshot has rollups, as after a collection: the cost reports read them.
  const unrolled = await db.query<{ n: number }>(
    `select count(*)::int as n from snapshots s where s.complete and s.kind in ('instance', 'cluster', 'k8s_price')
       and not exists (select 1 from cost_rollups r where r.snapshot_id = s.id)`,
  );
  if (unrolled[0]!.n > 0) throw new Error(`bench reports: ${unrolled[0]!.n} priced snapshot(s) of the generated history have no rollups`);
  const rows = await db.query<{ n: string; versions: string }>('select count(*) as n, (select count(*) from instances_versions) as versions from instances');
  out(`instances: ${Number(rows[0]!.n).toLocaleString('en-US')} rows (${Number(rows[0]!.versions).toLocaleString('en-US')} versions), rollups and fold, in ${secs(performance.now() - t)}`);
  t = performance.now();
  await generatePresence(db, shape);
  // What autovacuum does to freshly inserted tables: statistics, and the visibility map that
  // lets counts and key-only reads use index-only scans.
  await db.execute('vacuum analyze');
  out(`presence, vacuum analyze: ${secs(performance.now() - t)}`);
  return { perRun, total: rollupMs };
}

/** cost_daily for the thinned days (a day's rate held 24 h, as the hourly detail would have given) and sealed. */
export async function sealThinnedDays(db: Database, shape: BenchShape): Promise<void> {
  if (shape.totalDays <= shape.hourlyDays) return;
  const firstHourly = new Date(shape.end.getTime() - (shape.hourlyDays * 24 - 1) * 3600_000);
  const lastThinned = new Date(firstHourly.getTime() - 86_400_000).toISOString().slice(0, 10);
  const first = new Date(firstHourly.getTime() - (shape.totalDays - shape.hourlyDays) * 86_400_000).toISOString().slice(0, 10);
  const t = performance.now();
  await refreshCostDaily(db, { fromDay: first, toDay: lastThinned }, { maxGapHours: 24, now: shape.end });
  await db.execute('insert into cost_daily_sealed_days (day) select d::date from generate_series($1::date, $2::date, interval \'1 day\') d', [first, lastThinned]);
  out(`cost_daily of the thinned days ${first}..${lastThinned}, sealed: ${secs(performance.now() - t)}`);
}

// ---------------------------------------------------------------------------------------------
// HTTP measurements.

async function timedGet(url: string, headers?: Record<string, string>): Promise<{ ms: number; status: number; bytes: number }> {
  const t = performance.now();
  const res = await request(url, headers ? { headers } : {});
  let bytes = 0;
  for await (const chunk of res.body) bytes += (chunk as Buffer).length;
  return { ms: performance.now() - t, status: res.statusCode, bytes };
}

async function sample(url: string, n: number, headers?: Record<string, string>): Promise<number[]> {
  for (let i = 0; i < 2; i++) await timedGet(url, headers); // warm-up
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await timedGet(url, headers);
    if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}`);
    times.push(r.ms);
  }
  return times;
}

/** One streamed download: its time, bytes and CSV records (lines less the header); `sample` runs every 20 ms meanwhile. */
async function timedDownload(url: string, sample: () => void): Promise<{ ms: number; bytes: number; rows: number }> {
  const timer = setInterval(sample, 20);
  try {
    const t = performance.now();
    const res = await request(url);
    let bytes = 0;
    let lines = 0;
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      bytes += buf.length;
      for (let i = 0; i < buf.length; i++) if (buf[i] === 10) lines++;
    }
    const ms = performance.now() - t;
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
    return { ms, bytes, rows: lines - 1 };
  } finally {
    clearInterval(timer);
    sample();
  }
}

/** Time and memory of one streamed download; RSS sampled every 20 ms (server and client share the process). */
async function download(url: string): Promise<{ ms: number; bytes: number; rows: number; rssGrowthMb: number; heapGrowthMb: number }> {
  global.gc?.();
  const rss0 = process.memoryUsage().rss;
  const heap0 = process.memoryUsage().heapUsed;
  let rssMax = rss0;
  let heapMax = heap0;
  const result = await timedDownload(url, () => {
    const m = process.memoryUsage();
    rssMax = Math.max(rssMax, m.rss);
    heapMax = Math.max(heapMax, m.heapUsed);
  });
  return { ...result, rssGrowthMb: (rssMax - rss0) / 1048576, heapGrowthMb: (heapMax - heap0) / 1048576 };
}

/**
 * The live heap's peak growth during one streamed download: a full GC every 16 chunks, so only
 * what the export holds counts, not garbage not yet collected (slows the download; not timed).
 */
async function downloadLiveHeap(url: string): Promise<number> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  let chunks = 0;
  const res = await request(url);
  for await (const _chunk of res.body) {
    if (++chunks % 16 === 0) {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
  }
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}`);
  return (peak - base) / 1048576;
}

interface ChildServer {
  base: string;
  pid: number;
  close(): Promise<void>;
}

/**
 * The web app in a child process started as the image runs it, so a download's memory is the
 * server's alone (in this harness, the client's buffers and the other benchmarks' heap share the
 * process).
 */
async function startChildServer(url: string, now: Date): Promise<ChildServer> {
  const runtime = childRuntime('dist');
  const m = (path: string) => moduleUrl(runtime, path);
  const program = `
    const { loadConfig } = await import(${m('config/index')});
    const { openDatabase } = await import(${m('db/connection')});
    const { silentLogger } = await import(${m('logger')});
    const { allReports } = await import(${m('reports/index')});
    const { createWebApp } = await import(${m('web/app')});
    const input = JSON.parse(process.env.CT_BENCH_INPUT);
    const db = await openDatabase({ driver: 'pg', url: input.url }, { poolSize: 10 });
    const config = loadConfig({});
    const now = new Date(input.now);
    const app = createWebApp({ reports: allReports(), context: () => ({ db, config, now }), logger: silentLogger(), demo: false });
    const server = app.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
    process.stdin.on('end', () => server.close(() => db.close()));
    process.stdin.resume();
  `;
  const child = spawn(process.execPath, [...runtime.execArgv, '--input-type=module', '-e', program], {
    cwd: ROOT,
    env: { ...process.env, CT_BENCH_INPUT: JSON.stringify({ url, now: now.toISOString() }) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let buffered = '';
  for await (const chunk of child.stdout!) {
    buffered += String(chunk);
    if (buffered.includes('\n')) break;
  }
  const port = (JSON.parse(buffered.split('\n')[0]!) as { port: number }).port;
  return {
    base: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    async close() {
      child.stdin!.end();
      await exited;
    },
  };
}

/** Time and the server process's peak RSS growth (sampled every 20 ms from /proc) of one download. */
async function downloadFromChild(server: ChildServer, path: string): Promise<{ ms: number; bytes: number; rows: number; rssGrowthMb: number }> {
  const rss0 = rssOf(server.pid) ?? 0;
  let rssMax = rss0;
  const result = await timedDownload(`${server.base}${path}`, () => {
    rssMax = Math.max(rssMax, rssOf(server.pid) ?? 0);
  });
  return { ...result, rssGrowthMb: (rssMax - rss0) / 1048576 };
}

export async function concurrentUsers(url: string, users: number, perUser: number): Promise<number[]> {
  await timedGet(url);
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: users }, async () => {
      for (let i = 0; i < perUser; i++) {
        const r = await timedGet(url);
        if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}`);
        times.push(r.ms);
      }
    }),
  );
  return times;
}

/**
 * The baseline of the CSV export: `psql \copy (<the export's SQL>) to '/dev/null' csv`, the same
 * query with the same session settings (UTC, JIT off), timed from spawning psql to its exit.
 */
/** `psql \copy` of each statement in turn, in one session (the export's statements, one per snapshot). */
async function psqlCopy(url: string, statements: string | readonly string[]): Promise<number> {
  const t = performance.now();
  const copies = (typeof statements === 'string' ? [statements] : statements).flatMap((sql) => ['-c', `\\copy (${sql}) to '/dev/null' csv`]);
  const child = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, ...copies], {
    env: { ...process.env, PGOPTIONS: '-c TimeZone=UTC -c jit=off', PGAPPNAME: 'cloudtally-bench' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += String(c)));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`psql \\copy failed (${code}): ${stderr.slice(0, 500)}`);
  return performance.now() - t;
}

/**
 * The issue's baseline of the instances export: a plain ordered select of the same rows (the
 * instances of each scope's latest complete snapshot) with the columns of the export that an
 * instance row holds, in the export's order, without lookups (price, first / last seen, stops)
 * or formatting: what reading the export's rows costs at the least.
 */
function plainReadSql(): string {
  return `select i.instance_id, i.name, i.project_id, i.region_id, i.status, i.vm_state, i.flavor_name, i.ssh_key_name, i.tags, i.created_at
    from (${latestSnapshotsSql("array['instance']")}) l join instances i on i.snapshot_id = l.id
    order by l.scope_key collate "C", i.snapshot_id, i.instance_id collate "C"`.replace(/\s+/g, ' ');
}



// ---------------------------------------------------------------------------------------------

export async function main(args: string[]): Promise<void> {
  const o = parseArgs(args);
  const dbName = reusedDatabaseName('reports', 'reports', o.reuse) ?? benchDatabaseName('reports');
  const url = withDatabase(o.databaseUrl, dbName);
  let end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
  const shape: BenchShape = { instances: o.instances, scopes: o.scopes, hourlyDays: o.hourlyDays, totalDays: o.days, end };
  let historyDays = o.days;
  // A reused database has the shape it was built with (printed below from its data), not the options'.
  out(
    o.reuse
      ? `reports benchmark on the kept database ${dbName}`
      : `reports benchmark: ${o.instances.toLocaleString('en-US')} instances in ${o.scopes} scopes, ${o.days} days (hourly for the last ${o.hourlyDays}, then daily) -> ${dbName}`,
  );
  if (!o.reuse) await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  let server: Server | null = null;
  const results: Record<string, unknown> = { shape: { ...shape, end: end.toISOString() } };
  try {
    db = await openDatabase({ driver: 'pg', url }, { poolSize: 10 });
    // A kept database is brought to the current schema first (the code measured expects it).
    await migrateDatabase(db);
    if (o.reuse) {
      const [last] = await db.query<{ t: Date; first: Date }>("select max(taken_at) as t, min(taken_at) as first from snapshots where kind = 'instance'");
      end = new Date(Math.floor(last!.t.getTime() / 3600_000) * 3600_000);
      // The days the kept history spans (what --days was when it was built): the past inventories measured.
      historyDays = Math.round((last!.t.getTime() - last!.first.getTime()) / 86_400_000) + 1;
      out(`reusing ${dbName}: newest snapshot ${end.toISOString()}, ${historyDays} days of history`);
      results.shape = { reused: dbName, end: end.toISOString() };
    } else {
      // With --team-scope, as the service does when a team scope is configured: the history gets the team key's cost partitions.
      if (o.teamScope) await ensurePartitionKeys(db, [BENCH_SCOPE.key], silentLogger());
      const roll = await generate(db, shape);
      const perRun = roll.perRun;
      results.rollups = { runs: perRun.length, p50Ms: percentile(perRun, 50), p95Ms: percentile(perRun, 95), totalMs: roll.total };
      out(`computeCostRollups: ${perRun.length} runs of ${o.instances.toLocaleString('en-US')} instances: p50 ${ms(percentile(perRun, 50))}, p95 ${ms(percentile(perRun, 95))} per run (${o.scopes} snapshots); all priced snapshots ${secs(roll.total)}`);
      await sealThinnedDays(db, shape);
    }
    const size = await db.query<{ db: string; instances: string; staged: string; versions: string; rollups: string }>(
      "select pg_size_pretty(pg_database_size(current_database())) as db, pg_size_pretty(pg_total_relation_size('instances_versions')) as instances, (select count(*) from instances_staged)::text as staged, (select count(*) from instances_versions)::text as versions, (select count(*) from cost_rollups)::text as rollups",
    );
    out(`database ${size[0]!.db} (instance versions ${Number(size[0]!.versions).toLocaleString('en-US')}, ${size[0]!.instances}; staged rows left ${size[0]!.staged}); ${Number(size[0]!.rollups).toLocaleString('en-US')} rollup rows`);

    const teamScoped = (await partitionKeys(db)).includes(BENCH_SCOPE.key);
    if (teamScoped) results.partitionRollups = await rollupsWithPartitions(db, 3);
    const config = loadConfig({});
    const database = db;
    const now = new Date(end.getTime() + 30 * 60_000);
    // What the service does after every collection run: complete days get their cost_daily
    // (collect/close-days.ts), so reports over periods integrate only the hours of today live.
    const closing = performance.now();
    const closed = await closeCompleteDays(db, { now, maxGapHours: gapCapsFor(config) });
    out(`days closed as the service closes them after a run: ${closed.length ? `${closed[0]}..${closed[closed.length - 1]}` : 'none left'} (${secs(performance.now() - closing)})`);
    // Then (notify/after-run.ts) the current instances the idle list reads...
    const rebuilding = performance.now();
    const rebuilt = await refreshCurrentInstances(db, idleTagExtraction(config));
    out(`current instances refreshed as the service refreshes them after a run: ${rebuilt === null ? 'already current' : `${rebuilt.rows.toLocaleString('en-US')} rows, ${rebuilt.written.toLocaleString('en-US')} written`} (${secs(performance.now() - rebuilding)})`);
    // ...and the explanations of the anomalies the report shows by default.
    const explaining = performance.now();
    const stored = await storeExplanations(db, now, explanationSource({ db, config, now }));
    out(`anomaly explanations stored as the service stores them after a run: ${stored.explained} explained, ${stored.kept} kept (${secs(performance.now() - explaining)})`);
    const app = createWebApp({ reports: allReports(), context: () => ({ db: database, config, now }), logger: silentLogger(), demo: false });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString().slice(0, 10);
    const thirtyAgo = new Date(now.getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
    const today = now.toISOString().slice(0, 10);

    // --only csv: the inventory CSV export and its baselines alone (on a kept database, --reuse).
    const csvOnly = o.only === 'csv';
    if (!csvOnly) {
      // Global search (reports/search.ts): one query over every kind's versions, no cache.
      const [probe] = await db.query<{ id: string; name: string | null; tag: string | null; ip: string | null }>(
        `select instance_id as id, name, (select value from jsonb_each_text(tags) limit 1) as tag,
            raw::jsonb -> 'fixed_ip_assignments' -> 0 ->> 'ip_address' as ip
          from instances_versions where valid_to is null order by instance_id limit 1`,
      );
      if (!probe) throw new Error('bench reports: no current instance to search for');
      const searches: Array<[string, string]> = [
        ['exact id', probe.id],
        ['id prefix', probe.id.slice(0, 6)],
        ['name substring', (probe.name ?? 'node').slice(1, 5)],
        ...(probe.tag ? [['tag value', probe.tag] as [string, string]] : []),
        ...(probe.ip ? [['IP address', probe.ip] as [string, string]] : []),
      ];
      out(`global search over loopback HTTP, GET /api/search (${o.samples} samples after warm-up; target p95 < 100 ms; load ${loadAverage()})`);
      out('search                  |      p50 |      p95 | static p95 | p95 / static p95');
      const searchTimings: Record<string, unknown> = {};
      for (const [label, q] of searches) {
        const t = await sample(`${base}/api/search?q=${encodeURIComponent(q)}`, o.samples);
        // The same-run baseline, sampled right after: a static file through the same app.
        const staticP95 = percentile(await sample(`${base}/static/app.css`, o.samples), 95);
        searchTimings[label] = { q, p50: percentile(t, 50), p95: percentile(t, 95), staticP95 };
        out(`search ${label.padEnd(16)} | ${ms(percentile(t, 50)).padStart(8)} | ${ms(percentile(t, 95)).padStart(8)} | ${ms(staticP95).padStart(10)} | ${(percentile(t, 95) / staticP95).toFixed(1)} x`);
      }
      results.search = searchTimings;

      const cases: Array<[string, string]> = [
        ['overview', 'overview'],
        ['cost by tag', 'cost?by=tag%3Ateam'],
        ['trend (team, 7 days hourly)', 'trend?by=tag%3Ateam&days=7'],
        ['trend (kind, 30 days daily cost)', 'trend?by=kind&days=30&measure=daily-cost'],
        ['inventory page', 'inventory?kind=instances'],
        ['inventory page, tag filter', 'inventory?kind=instances&tag=team%3Adata'],
        // Past inventory (issue target: first page p95 < 200 ms): the instances as collected 1, 10 and 30 days back, within the history built.
        ...[1, 10, 30]
          .filter((days) => days < historyDays)
          .map((days): [string, string] => [`inventory ${days} day${days === 1 ? '' : 's'} back`, `inventory?kind=instances&at=${encodeURIComponent(new Date(now.getTime() - days * 86_400_000).toISOString())}`]),
        ['changes (24 h)', 'changes?kind=instances'],
        ['FOCUS (first page of 30 days)', `focus?from=${thirtyAgo}&to=${today}`],
        ['anomalies (30 days, explained)', 'anomalies'],
        ['idle candidates', 'idle'],
      ];
      // Every request computes (cache off: what the first request after a collection costs), then
      // as served (cache on: repeated requests within the cache lifetime reuse the result).
      for (const mode of ['uncached', 'cached'] as const) {
        reportCache.configure({ ttlMs: mode === 'cached' ? DEFAULT_CACHE_OPTIONS.ttlMs : 0 });
        const timings: Record<string, unknown> = {};
        out('');
        out(`report timings over loopback HTTP, ${mode === 'cached' ? 'report cache on' : 'report cache off (every request computes)'} (${o.samples} samples after warm-up)`);
        // The same-run baseline: a static file of the same app through the same HTTP path, sampled
        // before each report, so the ratio shows what the report adds whatever the machine's load.
        out('report                               | JSON p50 | JSON p95 | HTML p50 | HTML p95 | static p95 | worst p95 / static p95');
        for (const [label, path] of cases) {
          const fixed = await sample(`${base}/static/app.css`, o.samples);
          const json = await sample(`${base}/api/reports/${path}${path.includes('?') ? '&' : '?'}limit=50`, o.samples);
          const html = await sample(`${base}/reports/${path}`, o.samples);
          const staticP95 = percentile(fixed, 95);
          const worst = Math.max(percentile(json, 95), percentile(html, 95));
          timings[label] = { jsonP50: percentile(json, 50), jsonP95: percentile(json, 95), htmlP50: percentile(html, 50), htmlP95: percentile(html, 95), staticP95 };
          out(
            `${label.padEnd(36)} | ${ms(percentile(json, 50)).padStart(8)} | ${ms(percentile(json, 95)).padStart(8)} | ${ms(percentile(html, 50)).padStart(8)} | ${ms(percentile(html, 95)).padStart(8)} | ${ms(staticP95).padStart(10)} | ${(worst / staticP95).toFixed(1)} x`,
          );
        }
        results[mode === 'cached' ? 'timings' : 'timingsUncached'] = timings;
        if (mode === 'uncached') {
          const p95s = Object.entries(timings as Record<string, { jsonP95: number; htmlP95: number }>).flatMap(([label, t]) => [
            [`${label} JSON`, t.jsonP95] as const,
            [`${label} HTML`, t.htmlP95] as const,
          ]);
          const over = p95s.filter(([, p95]) => p95 >= 100);
          out(`cache off: ${p95s.length - over.length}/${p95s.length} p95s under 100 ms (target: all)${over.length ? `; over: ${over.map(([l, p]) => `${l} ${ms(p)}`).join(', ')}` : ''} (load ${loadAverage()})`);
        }
      }
      if (teamScoped) {
        reportCache.configure({ ttlMs: 0 });
        results.teamScoped = await scopedReportTimings(database, now, o.samples, sample);
        reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs });
      }
    }

    out('');
    // The export against its baseline, `psql \copy` of the same SQL (one line, values inlined),
    // alternated so both see the same load; the first export of a process also pays for
    // compiling its code paths, so it runs once before.
    const csvUrl = `${base}/api/reports/inventory.csv?kind=instances`;
    const exported = await inventoryReport.export({ db: database, config, now }, inventoryReport.params.parse({ kind: 'instances' }));
    if (!exported.sql) throw new Error('bench reports: the inventory export offers no SQL on Postgres');
    const exportQueries = csvQueries(csvColumns(exported.columns), exported.sql);
    if (!exportQueries) throw new Error('bench reports: the inventory columns have no SQL writer');
    const copySql = exportQueries.map((q) => inlineParams(q.text.replace(/\s+/g, ' '), q.values));
    // A second baseline: the same rows unformatted (the columns Node would read to write the file
    // itself), so the cost of formatting in SQL shows too, not only the ratio to its own query.
    const rowsQueries = inventoryExportQueries({ db: database, config, now }, inventoryReport.params.parse({ kind: 'instances' }), await latestSnapshots(database, ['instance']));
    const rowsSql = rowsQueries.map((q) => inlineParams(q.sql.replace(/\s+/g, ' '), q.values));
    const warm = await download(csvUrl);
    out(`CSV export of every instance (warm-up): ${warm.rows.toLocaleString('en-US')} rows, ${(warm.bytes / 1048576).toFixed(1)} MB in ${secs(warm.ms)}`);
    // The issue's baseline: a plain ordered select of the same rows and columns (plainReadSql).
    const plainSql = plainReadSql();
    const csvRuns = [];
    const ratios: number[] = [];
    const rowsRatios: number[] = [];
    const plainRatios: number[] = [];
    for (let i = 0; i < 5; i++) {
      const baseline = await psqlCopy(url, copySql);
      const rowsBaseline = await psqlCopy(url, rowsSql);
      const plain = await psqlCopy(url, plainSql);
      const csv = await download(csvUrl);
      csvRuns.push({ ...csv, psqlCopyMs: baseline, psqlCopyRowsMs: rowsBaseline, psqlCopyPlainMs: plain });
      ratios.push(csv.ms / baseline);
      rowsRatios.push(csv.ms / rowsBaseline);
      plainRatios.push(csv.ms / plain);
      out(`CSV export of every instance (${i + 1}/5): ${csv.rows.toLocaleString('en-US')} rows, ${(csv.bytes / 1048576).toFixed(1)} MB in ${secs(csv.ms)}; psql \\copy of the same query ${secs(baseline)}: ratio ${(csv.ms / baseline).toFixed(2)}; of the unformatted rows ${secs(rowsBaseline)}: ratio ${(csv.ms / rowsBaseline).toFixed(2)}; of a plain read ${secs(plain)}: ratio ${(csv.ms / plain).toFixed(2)}; peak growth RSS ${csv.rssGrowthMb.toFixed(1)} MB, heap (with garbage) ${csv.heapGrowthMb.toFixed(1)} MB (load ${loadAverage()})`);
    }
    const r = spread(ratios);
    const rr = spread(rowsRatios);
    const rp = spread(plainRatios);
    results.csvVsPsqlCopy = { ...r, ratios, target: 1.5, unformattedRows: { ...rr, ratios: rowsRatios }, plainRead: { ...rp, ratios: plainRatios, target: 2 } };
    out(`CSV export / psql \\copy: median ${r.median.toFixed(2)} x (min ${r.min.toFixed(2)}, max ${r.max.toFixed(2)}; target <= 1.5 x); / psql \\copy of the unformatted rows: median ${rr.median.toFixed(2)} x (min ${rr.min.toFixed(2)}, max ${rr.max.toFixed(2)}); / psql \\copy of a plain read: median ${rp.median.toFixed(2)} x (min ${rp.min.toFixed(2)}, max ${rp.max.toFixed(2)}; target <= 2 x) (load ${loadAverage()})`);
    const liveHeapMb = await downloadLiveHeap(csvUrl);
    out(`CSV export of every instance, live heap (after GC) peak growth: ${liveHeapMb.toFixed(1)} MB`);
    // The same export from the web app alone in a child process started as the image runs it.
    const child = await startChildServer(url, now);
    const childRuns = [];
    try {
      out(`web app in a child process (pid ${child.pid}, compiled dist/, the image's NODE_OPTIONS): RSS ${((rssOf(child.pid) ?? 0) / 1048576).toFixed(0)} MB at start`);
      for (let i = 0; i < 3; i++) {
        const csv = await downloadFromChild(child, '/api/reports/inventory.csv?kind=instances');
        childRuns.push(csv);
        out(`  CSV export of every instance (${i + 1}/3): ${csv.rows.toLocaleString('en-US')} rows in ${secs(csv.ms)}; server's peak RSS growth ${csv.rssGrowthMb.toFixed(1)} MB`);
      }
      const small = await downloadFromChild(child, '/api/reports/inventory.csv?kind=instances&project=1&region=1');
      out(`  for comparison, one scope (${small.rows.toLocaleString('en-US')} rows) in ${secs(small.ms)}; server's peak RSS growth ${small.rssGrowthMb.toFixed(1)} MB`);
    } finally {
      await child.close();
    }
    results.csv = { runs: csvRuns, liveHeapGrowthMb: liveHeapMb, childServer: childRuns };
    if (csvOnly) {
      out('');
      out(`results: ${JSON.stringify(results)}`);
      return;
    }

    reportCache.configure({ ttlMs: 0 });
    const usersCold = await concurrentUsers(`${base}/api/reports/overview`, o.users, o.requestsPerUser);
    results.concurrentUncached = { users: o.users, requests: usersCold.length, p50: percentile(usersCold, 50), p95: percentile(usersCold, 95) };
    out(`overview JSON under ${o.users} concurrent users, report cache off (${usersCold.length} requests): p50 ${ms(percentile(usersCold, 50))}, p95 ${ms(percentile(usersCold, 95))}`);
    reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs });
    const users = await concurrentUsers(`${base}/api/reports/overview`, o.users, o.requestsPerUser);
    results.concurrent = { users: o.users, requests: users.length, p50: percentile(users, 50), p95: percentile(users, 95) };
    out(`overview JSON under ${o.users} concurrent users (${users.length} requests): p50 ${ms(percentile(users, 50))}, p95 ${ms(percentile(users, 95))}`);
    const usersHtml = await concurrentUsers(`${base}/reports/overview`, o.users, o.requestsPerUser);
    results.concurrentHtml = { users: o.users, requests: usersHtml.length, p50: percentile(usersHtml, 50), p95: percentile(usersHtml, 95) };
    out(`overview HTML under ${o.users} concurrent users (${usersHtml.length} requests): p50 ${ms(percentile(usersHtml, 50))}, p95 ${ms(percentile(usersHtml, 95))}`);
    // The baseline: a static file of the same app (express.static) under the same load.
    const usersStatic = await concurrentUsers(`${base}/static/app.css`, o.users, o.requestsPerUser);
    const htmlRatio = percentile(usersHtml, 95) / percentile(usersStatic, 95);
    results.concurrentStatic = { users: o.users, requests: usersStatic.length, p50: percentile(usersStatic, 50), p95: percentile(usersStatic, 95), overviewHtmlRatio: htmlRatio };
    out(`static file /static/app.css under ${o.users} concurrent users: p50 ${ms(percentile(usersStatic, 50))}, p95 ${ms(percentile(usersStatic, 95))}; overview HTML p95 / static p95: ${htmlRatio.toFixed(2)} x (target <= 3 x; load ${loadAverage()})`);

    if (!o.noFocusExport) {
      const focus = await download(`${base}/api/reports/focus.csv?from=${monthStart}&to=${today}`);
      results.focusExport = focus;
      out(`FOCUS export ${monthStart}..${today}: ${focus.rows.toLocaleString('en-US')} rows, ${(focus.bytes / 1048576).toFixed(1)} MB in ${secs(focus.ms)} (${Math.round(focus.rows / (focus.ms / 1000)).toLocaleString('en-US')} rows/s); peak growth RSS ${focus.rssGrowthMb.toFixed(1)} MB`);
    }
    out('');
    out(`results: ${JSON.stringify(results)}`);
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await db?.close();
    if (!o.keep && !o.reuse) await onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    else out(`kept database ${dbName}`);
  }
}

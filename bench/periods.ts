/**
 * `npm run bench periods [-- --instances 100000 --scopes 10 --hourly-days 7 --samples 30 --runs 3 --keep]`
 *
 * The reports over periods at a year and more of history: a fresh database
 * `ct_bench_periods_<pid>_<time>_<random>` gets, for every scope, one instance snapshot per day from 1 January of
 * last year (what retention keeps: the day's last one) and hourly ones for the last --hourly-days
 * days, with rollups synthesised in SQL (a realistic number of groups per dimension: 8 flavors,
 * 20 teams, 4 environments, 30 cost centres, the fixed dimensions) standing for --instances
 * instances in all, and the older days sealed with their cost_daily rows (as retention leaves
 * them), then the complete days since closed by the service's own routine (closeCompleteDays), as
 * the collection service leaves them. No instance rows: reports over periods read rollups and
 * cost_daily only.
 *
 * Then, through the web app on loopback with the report cache off: p50/p95 of the JSON of
 * cost?period=<last year>, monthly over 12 months and overview?period=ytd, beside two baselines
 * measured in the same round on the same pool: a `select 1` round trip and a plain
 * `select sum(cost) from cost_daily` over the same year (what summing the stored days per scope
 * reads). Each report's p95 is also given as a ratio to that baseline's p95, which says more than
 * milliseconds on a shared machine. --runs rounds (baselines, then each report) are measured one
 * after the other: the table shows every round's p95 and ratio and, below, the spread.
 */
import { ms, out, percentile, secs } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { request } from 'undici';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { closeCompleteDays } from '../src/costing/derive/closed-days.js';
import { gapCapsFor } from '../src/costing/gap-caps.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { silentLogger } from '../src/logger.js';
import { allReports } from '../src/reports/index.js';
import { DEFAULT_CACHE_OPTIONS } from '../src/reports/shared/cache.js';
import { reportCache } from '../src/reports/shared/define.js';
import { createWebApp } from '../src/web/app.js';


const parseOptions = (args: string[]) =>
  parseBenchOptions('periods', args, { databaseUrl: BENCH_SERVER as string, instances: 100_000, scopes: 10, hourlyDays: 7, samples: 30, runs: 3, keep: false });
type Options = ReturnType<typeof parseOptions>;



/**
 * Snapshots, rollups and sealed cost_daily in SQL. Each scope holds instances/scopes instances,
 * 90 % running at 2.50 per hour (EUR; every fifth scope USD); each dimension splits them evenly.
 */
async function generate(db: Database, o: Options, firstDay: string, end: Date): Promise<void> {
  const perScope = Math.floor(o.instances / o.scopes);
  const rate = perScope * 0.9 * 2.5;
  const hourlyFrom = new Date(end.getTime() - (o.hourlyDays * 24 - 1) * 3600_000);
  // One run per snapshot time (a run holds one snapshot per kind and scope): the day's last one
  // (23:00) before the hourly ones, then every hour.
  await db.execute(
    `insert into collection_runs (trigger, collectors, started_at, finished_at, heartbeat_at, status, counts, errors, runner_id)
     select 'schedule', '{instances}', t, t, t, 'succeeded', '{}', '[]', 'bench'
     from (
       select d + interval '23 hours' as t from generate_series($1::date, ($2::timestamptz - interval '1 day')::date, interval '1 day') d
       union all
       select h from generate_series($2::timestamptz, $3::timestamptz, interval '1 hour') h
     ) times`,
    [firstDay, hourlyFrom.toISOString(), end.toISOString()],
  );
  await db.execute(
    `insert into snapshots (run_id, kind, scope_key, project_id, region_id, taken_at, complete, row_count)
     select r.id, 'instance', 'p' || sc || '-r' || sc, sc, sc, r.started_at, true, $2
     from collection_runs r cross join generate_series(1, $1::int) sc`,
    [o.scopes, perScope],
  );
  await db.execute(`create temporary table bench_groups as
    select 'flavor' as dimension, 'gpu-' || i as group_value, 1.0 / 8 as count_share, 1.0 / 8 as cost_share from generate_series(1, 8) i
    union all select 'tag:team', 'team-' || i, 1.0 / 20, 1.0 / 20 from generate_series(1, 20) i
    union all select 'tag:env', 'env-' || i, 1.0 / 4, 1.0 / 4 from generate_series(1, 4) i
    union all select 'tag:cost-center', 'cc-' || i, 1.0 / 30, 1.0 / 30 from generate_series(1, 30) i
    union all select 'kind', 'instance', 1, 1
    union all select 'state', 'running', 0.9, 1
    union all select 'state', 'stopped', 0.1, 0`);
  let t = performance.now();
  await db.execute(
    `insert into cost_rollups (snapshot_id, taken_at, kind, scope_key, project_id, region_id, dimension, group_value, currency,
       price_per_hour, price_per_month, resource_count, unpriced_count)
     select s.id, s.taken_at, s.kind, s.scope_key, s.project_id, s.region_id, g.dimension,
       case g.dimension when 'project' then s.project_id::text when 'region' then s.region_id::text else g.group_value end,
       case when s.project_id % 5 = 0 then 'USD' else 'EUR' end,
       round($1::numeric * g.cost_share, 6), round($1::numeric * g.cost_share * 730, 6), round($2 * g.count_share)::int, 0
     from snapshots s
     cross join (select * from bench_groups union all select 'project', '', 1, 1 union all select 'region', '', 1, 1) g`,
    [rate, perScope],
  );
  out(`rollups: ${(await db.query<{ n: string }>('select count(*) as n from cost_rollups'))[0]!.n} rows in ${secs(performance.now() - t)}`);
  t = performance.now();
  // The sealed days: the day's rate held 24 h (what the hourly detail gave before thinning).
  await db.execute(
    `insert into cost_daily (day, kind, scope_key, project_id, region_id, dimension, group_value, currency, cost, resource_hours, unpriced_resource_hours, max_resource_count)
     select (r.taken_at at time zone 'UTC')::date, r.kind, r.scope_key, r.project_id, r.region_id, r.dimension, r.group_value, r.currency,
       r.price_per_hour * 24, r.resource_count * 24, 0, r.resource_count
     from cost_rollups r where r.taken_at < $1::timestamptz - interval '1 hour'`,
    [hourlyFrom.toISOString()],
  );
  await db.execute(
    `insert into cost_daily_sealed_days (day) select d::date from generate_series($1::date, ($2::timestamptz - interval '1 day')::date, interval '1 day') d`,
    [firstDay, hourlyFrom.toISOString()],
  );
  await db.execute('vacuum analyze');
  out(`cost_daily: ${(await db.query<{ n: string }>('select count(*) as n from cost_daily'))[0]!.n} rows, sealed, vacuum analyze: ${secs(performance.now() - t)}`);
}

async function timed(fn: () => Promise<void>, n: number): Promise<number[]> {
  for (let i = 0; i < 2; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return times;
}

async function get(url: string): Promise<void> {
  const res = await request(url);
  const body = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${body.slice(0, 300)}`);
}

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const dbName = benchDatabaseName('periods');
  const end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
  const now = new Date(end.getTime() + 30 * 60_000);
  const lastYear = now.getUTCFullYear() - 1;
  const firstDay = `${lastYear}-01-01`;
  out(`periods benchmark: ${o.instances.toLocaleString('en-US')} instances in ${o.scopes} scopes, daily from ${firstDay} (sealed), hourly for the last ${o.hourlyDays} days -> ${dbName}`);
  await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  let server: Server | null = null;
  try {
    db = await openDatabase({ driver: 'pg', url: withDatabase(o.databaseUrl, dbName) }, { poolSize: 10 });
    await migrateDatabase(db);
    await generate(db, o, firstDay, end);
    const config = loadConfig({});
    // What the collection service leaves after its runs: every complete day closed (cost_daily rows).
    const t = performance.now();
    const closed = await closeCompleteDays(db, { now, maxGapHours: gapCapsFor(config) });
    await db.execute('analyze');
    out(`closed days (service's closing routine): ${closed.length} (${closed[0] ?? '-'} .. ${closed[closed.length - 1] ?? '-'}) in ${secs(performance.now() - t)}`);
    const database = db;
    const app = createWebApp({ reports: allReports(), context: () => ({ db: database, config, now }), logger: silentLogger(), demo: false });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const thisMonth = now.toISOString().slice(0, 7);
    const elevenBack = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1)).toISOString().slice(0, 7);

    reportCache.configure({ ttlMs: 0 });
    const cases: Array<[string, string]> = [
      [`cost?period=${lastYear} (by team)`, `cost?by=tag%3Ateam&period=${lastYear}&limit=50`],
      [`monthly ${elevenBack}..${thisMonth} (by team)`, `monthly?by=tag%3Ateam&from=${elevenBack}&to=${thisMonth}&limit=50`],
      ['overview?period=ytd (by team)', 'overview?by=tag%3Ateam&period=ytd&limit=50'],
    ];
    const yearSumSql = `select sum(cost) from cost_daily where dimension = 'tag:team' and day between $1::date and $2::date`;
    const rounds: Array<{ select1: number[]; yearSum: number[]; reports: number[][] }> = [];
    out('');
    out(`report JSON over loopback HTTP, report cache off; ${o.runs} rounds of ${o.samples} samples each after warm-up`);
    out(`baseline = select sum(cost) from cost_daily over ${lastYear} (same pool, same round); p50 / p95 in ms, ratio = p95 / baseline p95`);
    out(`round | select 1 p95 | baseline p50/p95 | ${cases.map(([label]) => label.split(' (')[0]!.padStart(24)).join(' | ')}`);
    for (let round = 1; round <= o.runs; round++) {
      const select1 = await timed(async () => void (await database.query('select 1')), o.samples);
      const yearSum = await timed(async () => void (await database.query(yearSumSql, [firstDay, `${lastYear}-12-31`])), o.samples);
      const reports: number[][] = [];
      for (const [, path] of cases) reports.push(await timed(() => get(`${base}/api/reports/${path}`), o.samples));
      rounds.push({ select1, yearSum, reports });
      const base95 = percentile(yearSum, 95);
      const cells = reports.map((t) => `${percentile(t, 50).toFixed(0)} / ${percentile(t, 95).toFixed(0)} = ${(percentile(t, 95) / base95).toFixed(1)}x`.padStart(24));
      out(`${String(round).padStart(5)} | ${ms(percentile(select1, 95)).padStart(12)} | ${`${percentile(yearSum, 50).toFixed(0)} / ${base95.toFixed(0)}`.padStart(16)} | ${cells.join(' | ')}`);
    }
    // All rounds' samples together, and the spread of the rounds' p95 and ratio.
    const all = (pick: (r: (typeof rounds)[number]) => number[]) => rounds.flatMap(pick);
    const spread = (values: number[], digits: number, unit: string) => `${Math.min(...values).toFixed(digits)}..${Math.max(...values).toFixed(digits)}${unit}`;
    const base95s = rounds.map((r) => percentile(r.yearSum, 95));
    out('');
    out('report                                          |      p50 |      p95 | p95 of rounds | p95 / baseline p95 (rounds)');
    out(`${'baseline: sum(cost) over the year'.padEnd(47)} | ${ms(percentile(all((r) => r.yearSum), 50)).padStart(8)} | ${ms(percentile(all((r) => r.yearSum), 95)).padStart(8)} | ${spread(base95s, 0, ' ms').padStart(13)} |`);
    const results: Record<string, unknown> = {
      baselineSelect1P95: percentile(all((r) => r.select1), 95),
      baselineYearSum: { p50: percentile(all((r) => r.yearSum), 50), p95: percentile(all((r) => r.yearSum), 95), roundsP95: base95s },
    };
    cases.forEach(([label], i) => {
      const times = all((r) => r.reports[i]!);
      const p95s = rounds.map((r) => percentile(r.reports[i]!, 95));
      const ratios = rounds.map((r, k) => percentile(r.reports[i]!, 95) / base95s[k]!);
      results[label] = { p50: percentile(times, 50), p95: percentile(times, 95), roundsP95: p95s, roundsRatio: ratios };
      out(`${label.padEnd(47)} | ${ms(percentile(times, 50)).padStart(8)} | ${ms(percentile(times, 95)).padStart(8)} | ${spread(p95s, 0, ' ms').padStart(13)} | ${spread(ratios, 1, 'x')}`);
    });
    reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs });
    out('');
    out(`results: ${JSON.stringify(results)}`);
  } finally {
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    await db?.close();
    if (!o.keep) await onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    else out(`kept database ${dbName}`);
  }
}

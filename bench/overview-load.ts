/**
 * `npm run bench overview-load [-- --instances 300 --scopes 10 --days 30 --hourly-days 7 --users 50 --requests-per-user 10 --rounds 3 --keep --reuse DB]`
 *
 * The overview under concurrent users, on a small database (the overview is served from the
 * report cache, so what an HTML request costs beyond the JSON one hardly depends on the data's
 * size): the same history as `bench reports` (bench/reports-data.ts) with few instances, the real
 * web app on loopback, and per round the same --users concurrent users each doing
 * --requests-per-user sequential requests of the static file /static/app.css (the baseline),
 * the overview HTML and the overview JSON, one after the other so each round sees the same load.
 * Prints p50/p95 per round and the ratio overview HTML p95 / static p95 (target <= 3 x) with its
 * spread over the rounds. Generating the history takes minutes (hours of runs are folded one by
 * one); --keep and --reuse measure again on the same database.
 */
import { loadAverage, ms, out, percentile, spread } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { onServer, withDatabase } from './database.js';
import { concurrentUsers, generate, sealThinnedDays } from './reports.js';
import type { BenchShape } from './reports-data.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { silentLogger } from '../src/logger.js';
import { allReports } from '../src/reports/index.js';
import { createWebApp } from '../src/web/app.js';


function parseArgs(args: string[]): Options {
  const o = parseOptions(args);
  if (o.reuse !== null && !/^ct_bench_overview_\d+$/.test(o.reuse)) throw new Error('bench overview-load: --reuse takes a database name ct_bench_overview_<digits> kept by an earlier --keep run');
  return o;
}

const parseOptions = (args: string[]) =>
  parseBenchOptions('overview-load', args, { databaseUrl: BENCH_SERVER as string, instances: 300, scopes: 10, days: 30, hourlyDays: 7, users: 50, requestsPerUser: 10, rounds: 3, keep: false, reuse: null as string | null });
type Options = ReturnType<typeof parseOptions>;


export async function main(args: string[]): Promise<void> {
  const o = parseArgs(args);
  const dbName = o.reuse ?? `ct_bench_overview_${Date.now()}`;
  const url = withDatabase(o.databaseUrl, dbName);
  let end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
  if (!o.reuse) await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  let server: Server | null = null;
  try {
    db = await openDatabase({ driver: 'pg', url }, { poolSize: 10 });
    if (o.reuse) {
      const [last] = await db.query<{ t: Date }>("select max(taken_at) as t from snapshots where kind = 'instance'");
      end = new Date(Math.floor(last!.t.getTime() / 3600_000) * 3600_000);
    } else {
      const shape: BenchShape = { instances: o.instances, scopes: o.scopes, hourlyDays: o.hourlyDays, totalDays: o.days, end };
      out(`overview-load: ${o.instances} instances in ${o.scopes} scopes, ${o.days} days (hourly for the last ${o.hourlyDays}) -> ${dbName}`);
      await migrateDatabase(db);
      await generate(db, shape);
      await sealThinnedDays(db, shape);
    }
    const config = loadConfig({});
    const database = db;
    const now = new Date(end.getTime() + 30 * 60_000);
    // As bench reports runs it: no sign-in, no data status, the report cache at its defaults.
    const app = createWebApp({ reports: allReports(), context: () => ({ db: database, config, now }), logger: silentLogger(), demo: false });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const targets = [
      ['static', `${base}/static/app.css`],
      ['overview HTML', `${base}/reports/overview`],
      ['overview JSON', `${base}/api/reports/overview`],
    ] as const;
    // Warm-up: the report cache, compiled templates, JIT.
    for (const [, target] of targets) await concurrentUsers(target, 10, 5);
    out('');
    out(`${o.users} concurrent users x ${o.requestsPerUser} sequential requests, ${o.rounds} rounds (static, HTML, JSON alternated)`);
    out('round | static p50 | static p95 | HTML p50 | HTML p95 | JSON p50 | JSON p95 | HTML/static p95 | load');
    const ratios: number[] = [];
    const rounds: Array<Record<string, { p50: number; p95: number }>> = [];
    for (let r = 0; r < o.rounds; r++) {
      const result: Record<string, { p50: number; p95: number }> = {};
      for (const [label, target] of targets) {
        const times = await concurrentUsers(target, o.users, o.requestsPerUser);
        result[label] = { p50: percentile(times, 50), p95: percentile(times, 95) };
      }
      const ratio = result['overview HTML']!.p95 / result.static!.p95;
      ratios.push(ratio);
      rounds.push(result);
      const cells = targets.flatMap(([label]) => [ms(result[label]!.p50).padStart(label === 'static' ? 10 : 8), ms(result[label]!.p95).padStart(label === 'static' ? 10 : 8)]);
      out(`${String(r + 1).padStart(5)} | ${cells.join(' | ')} | ${`${ratio.toFixed(2)} x`.padStart(15)} | ${loadAverage()}`);
    }
    const s = spread(ratios);
    out(`overview HTML p95 / static p95: median ${s.median.toFixed(2)} x (min ${s.min.toFixed(2)}, max ${s.max.toFixed(2)}; target <= 3 x)`);
    out(`results: ${JSON.stringify({ users: o.users, requestsPerUser: o.requestsPerUser, rounds, ratios })}`);
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

/**
 * `npm run bench overview-load [-- --instances 300 --scopes 10 --days 30 --hourly-days 7 --users 50 --requests-per-user 40 --rounds 5 --keep --reuse DB]`
 *
 * The overview under concurrent users, with the load from outside the server's process: the web
 * app runs in a child process (bench/load-server.ts, the real clock, the report cache at its
 * defaults, no warm-up after new data), and every measurement is a second child process
 * (bench/load-client.ts, autocannon) sending --users x --requests-per-user GETs over --users
 * keep-alive connections. The database is small (the same history as `bench reports`, few
 * instances): what an HTML request costs beyond the JSON one hardly depends on the data's size.
 *
 * Each round measures, one after the other, the static file /static/app.css (the baseline), then
 * the overview HTML and JSON as they are served from the report cache (cached); then the static
 * file again, and the overview HTML and JSON each right after a new data version (cold): the
 * newest closed day is stamped closed anew, as the service does when it closes a day again, which
 * changes the data version and no figure, so every cold measurement starts with a miss that its
 * concurrent requests share (single flight) and that costs the full computation. Prints p50 / p95
 * / p99 per measurement, the ratio overview HTML p99 / static p99 of the same round (target <= 3 x,
 * cached and cold) with its spread over the rounds, and the load average. Generating the history
 * takes minutes; --keep and --reuse measure again on the same database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadAverage, ms, out, spread } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import { benchDatabaseName, onServer, reusedDatabaseName, withDatabase } from './database.js';
import type { LoadResult } from './load-client.js';
import { generate, sealThinnedDays } from './reports.js';
import type { BenchShape } from './reports-data.js';
import { loadConfig } from '../src/config/index.js';
import { closeCompleteDays } from '../src/costing/derive/closed-days.js';
import { gapCapsFor } from '../src/costing/gap-caps.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';

const parseOptions = (args: string[]) =>
  parseBenchOptions('overview-load', args, { databaseUrl: BENCH_SERVER as string, instances: 300, scopes: 10, days: 30, hourlyDays: 7, users: 50, requestsPerUser: 40, rounds: 5, keep: false, reuse: null as string | null });

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
/** How the benchmark's children run TypeScript: as `npm run bench` runs the benchmark itself. */
const NODE_ARGS = ['--max-semi-space-size=64', '--import', 'tsx'];

/** The web app in a child process, listening; it ends when its stdin is closed. */
async function startServer(url: string): Promise<{ base: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [...NODE_ARGS, here('./load-server.ts'), url], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([once(lines, 'line'), once(child, 'exit').then(([code]) => Promise.reject(new Error(`bench overview-load: the server exited (${String(code)}) before listening`)))])) as [string];
  lines.close();
  return { base: (JSON.parse(first) as { url: string }).url, child };
}

/** One measurement: the load client in a child process of its own. */
async function measure(url: string, connections: number, requests: number): Promise<LoadResult> {
  const child = spawn(process.execPath, [...NODE_ARGS, here('./load-client.ts'), url, String(connections), String(requests)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let text = '';
  child.stdout!.on('data', (chunk) => (text += String(chunk)));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`bench overview-load: the load client failed (${String(code)}) on ${url}`);
  const result = JSON.parse(text) as LoadResult;
  if (result.non2xx > 0 || result.errors > 0 || result.requests !== requests) {
    throw new Error(`bench overview-load: ${url}: ${result.requests} of ${requests} answered, ${result.non2xx} not 2xx, ${result.errors} errors`);
  }
  return result;
}

/** A new data version and no new figure: the newest closed day stamped closed anew (cache.ts's version reads closed_at). */
async function newDataVersion(db: Database): Promise<void> {
  const [row] = await db.query<{ day: string | null }>(
    'update cost_daily_closed_days set closed_at = clock_timestamp() where day = (select max(day) from cost_daily_closed_days) returning day::text',
  );
  if (!row?.day) throw new Error('bench overview-load: no closed day to stamp anew (the database has no closed days)');
}

type Measured = 'static' | 'HTML cached' | 'JSON cached' | 'static again' | 'HTML cold' | 'JSON cold';

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const dbName = reusedDatabaseName('overview-load', 'overview', o.reuse) ?? benchDatabaseName('overview');
  const url = withDatabase(o.databaseUrl, dbName);
  const end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
  if (!o.reuse) await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  let server: ChildProcess | null = null;
  try {
    db = await openDatabase({ driver: 'pg', url }, { poolSize: 2 });
    if (!o.reuse) {
      const shape: BenchShape = { instances: o.instances, scopes: o.scopes, hourlyDays: o.hourlyDays, totalDays: o.days, end };
      out(`overview-load: ${o.instances} instances in ${o.scopes} scopes, ${o.days} days (hourly for the last ${o.hourlyDays}) -> ${dbName}`);
      await migrateDatabase(db);
      await generate(db, shape);
      await sealThinnedDays(db, shape);
      // As the service does after a run: complete days get their cost_daily (and a closing time).
      await closeCompleteDays(db, { now: new Date(), maxGapHours: gapCapsFor(loadConfig({})) });
      // What autovacuum (and the service's analyse after a run) leaves: the closed days' rows analysed and visible.
      await db.execute('vacuum analyze');
    }
    const started = await startServer(url);
    server = started.child;
    const base = started.base;
    const targets: Record<Measured, string> = {
      static: `${base}/static/app.css`,
      'HTML cached': `${base}/reports/overview`,
      'JSON cached': `${base}/api/reports/overview`,
      'static again': `${base}/static/app.css`,
      'HTML cold': `${base}/reports/overview`,
      'JSON cold': `${base}/api/reports/overview`,
    };
    const requests = o.users * o.requestsPerUser;
    // Warm-up (compiled templates, JIT, connections), not measured.
    for (const target of new Set(Object.values(targets))) await measure(target, 10, 50);
    out('');
    out(`load from a separate process (autocannon): ${o.users} connections, ${requests} requests per measurement, ${o.rounds} rounds; load average before: ${loadAverage()}`);
    // A cold computation integrates today's snapshots live (every earlier day is closed): it costs
    // more the later in the UTC day the benchmark runs.
    const benchStart = new Date();
    out(`started ${benchStart.toISOString().slice(0, 16)}Z: ${((benchStart.getTime() % 86_400_000) / 3_600_000).toFixed(1)} h of today (UTC) integrated live by a cold computation`);
    out('cached: served from the report cache; cold: right after a new data version (the first request computes, the others share it)');
    out('round | measurement  |    p50 |    p95 |    p99 |    max | HTML p99 / static p99 | load');
    const ratios = { cached: [] as number[], cold: [] as number[] };
    const rounds: Array<Record<Measured, LoadResult>> = [];
    for (let r = 0; r < o.rounds; r++) {
      const round = {} as Record<Measured, LoadResult>;
      for (const [label, target] of Object.entries(targets) as Array<[Measured, string]>) {
        if (label.endsWith('cold')) await newDataVersion(db);
        // The previous round's cold measurements left a newer data version: computed here, unmeasured.
        if (label.endsWith('cached')) await measure(target, 1, 1);
        const result = await measure(target, o.users, requests);
        round[label] = result;
        const ratio = label === 'HTML cached' ? result.p99 / round.static.p99 : label === 'HTML cold' ? result.p99 / round['static again'].p99 : null;
        if (label === 'HTML cached') ratios.cached.push(ratio!);
        if (label === 'HTML cold') ratios.cold.push(ratio!);
        const cells = [result.p50, result.p95, result.p99, result.max].map((v) => ms(v).padStart(6));
        out(`${String(r + 1).padStart(5)} | ${label.padEnd(12)} | ${cells.join(' | ')} | ${(ratio === null ? '' : `${ratio.toFixed(2)} x`).padStart(21)} | ${loadAverage()}`);
      }
      rounds.push(round);
    }
    for (const mode of ['cached', 'cold'] as const) {
      const s = spread(ratios[mode]);
      out(`overview HTML p99 / static p99, ${mode}: median ${s.median.toFixed(2)} x (min ${s.min.toFixed(2)}, max ${s.max.toFixed(2)}; target <= 3 x)`);
    }
    out(`load average after: ${loadAverage()}`);
    out(`results: ${JSON.stringify({ users: o.users, requests, rounds, ratios })}`);
  } finally {
    if (server && server.exitCode === null) {
      const exited = once(server, 'exit');
      server.stdin!.end();
      await exited;
    }
    await db?.close();
    if (!o.keep && !o.reuse) await onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
    else out(`kept database ${dbName}`);
  }
}

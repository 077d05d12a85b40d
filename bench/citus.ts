/**
 * `npm run bench citus [-- --size 10000 --samples 20 --citus-url URL --database-url URL --keep]`
 *
 * The same collections and reports on plain Postgres and on a Citus cluster, in the same run
 * (issue 25 item 6). Needs a Citus coordinator with workers: --citus-url, else TEST_CITUS_URL, else
 * the local cluster of `scripts/citus-cluster.sh start` (postgres://postgres@127.0.0.1:9700/postgres).
 * For each engine, a fresh database (Citus: created on every node, the workers added, then
 * `npm run cli -- distribute`), then two `npm run collect` commands (a child process each, as a user
 * runs them) from one simulator child of --size instances: the first collection and an unchanged
 * one, wall time and exit status. Then every report of the web app, cache off, as JSON, HTML and
 * CSV: p95 of --samples requests on each engine, alternated report by report so that both see
 * the same load. On Citus, one more JSON request per report is counted by citus_stat_counters
 * (citus.enable_stat_counters on for the bench database): its single-shard and multi-shard
 * (fanned out to every shard) queries.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { loadConfig } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { silentLogger } from '../src/logger.js';
import { allReports } from '../src/reports/index.js';
import { reportCache } from '../src/reports/shared/define.js';
import { createWebApp } from '../src/web/app.js';
import { createCitusDatabase } from '../test/helpers/citus.js';
import { startChildSimulator } from './collect.js';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { loadAverage, ms, out, percentile, secs } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import { ROOT } from './runtime.js';

export const DEFAULT_CITUS = process.env.TEST_CITUS_URL ?? 'postgres://postgres@127.0.0.1:9700/postgres';

const parseOptions = (args: string[]) =>
  parseBenchOptions('citus', args, { size: 10_000, samples: 20, citusUrl: DEFAULT_CITUS, databaseUrl: BENCH_SERVER as string, keep: false });

interface Engine {
  label: 'Postgres' | 'Citus';
  url: string;
  drop(): Promise<void>;
  db?: Database;
  server?: Server;
  base?: string;
}

/** Runs `node src/cli.ts <command>` as `npm run cli` does, with `env`; its wall time, exit code and the end of its output. */
export async function cli(command: string, env: Record<string, string>): Promise<{ ms: number; code: number | null; tail: string }> {
  const started = performance.now();
  const child = spawn(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', 'src/cli.ts', command], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output = (output + String(chunk)).slice(-4000)));
  child.stderr!.on('data', (chunk) => (output = (output + String(chunk)).slice(-4000)));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { ms: performance.now() - started, code, tail: output.trim().split('\n').slice(-6).join('\n') };
}

/**
 * What to collect, as a configuration file in a new temporary folder (the caller removes it): the
 * simulator's manifest is a valid configuration file (config/scopes.ts).
 */
export function simulatorConfigFile(simManifest: unknown, bench: string): { configDir: string; configFile: string } {
  const configDir = mkdtempSync(join(tmpdir(), `ct-bench-${bench}-`));
  const manifest = simManifest as { scopes: unknown; image_ids?: unknown; free_feature_ids?: unknown };
  const configFile = join(configDir, 'cloudtally.json');
  writeFileSync(configFile, JSON.stringify({ scopes: manifest.scopes, image_ids: manifest.image_ids ?? [], free_feature_ids: manifest.free_feature_ids ?? [] }));
  return { configDir, configFile };
}

async function timedGet(url: string): Promise<{ ms: number; status: number }> {
  const t = performance.now();
  const res = await request(url);
  for await (const _ of res.body); // read the whole answer
  return { ms: performance.now() - t, status: res.statusCode };
}

/** p95 of n requests after one warm-up, or the status of the first answer that is not 200. */
async function p95Of(url: string, n: number): Promise<number | string> {
  const warm = await timedGet(url);
  if (warm.status !== 200) return `answers ${warm.status}`;
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = await timedGet(url);
    if (r.status !== 200) return `answers ${r.status}`;
    times.push(r.ms);
  }
  return percentile(times, 95);
}

/** Citus's counters of the bench database: queries run on one shard and on several. */
async function shardQueries(db: Database): Promise<{ single: number; multi: number }> {
  const [row] = await db.query<{ single: string; multi: string }>(
    `select query_execution_single_shard as single, query_execution_multi_shard as multi from citus_stat_counters where name = current_database()`,
  );
  return { single: Number(row?.single ?? 0), multi: Number(row?.multi ?? 0) };
}

async function startApp(engine: Engine, now: Date): Promise<void> {
  engine.db = await openDatabase({ driver: 'pg', url: engine.url }, { poolSize: 10 });
  const db = engine.db;
  const config = loadConfig({});
  const app = createWebApp({ reports: allReports(), context: () => ({ db, config, now }), logger: silentLogger(), demo: false });
  engine.server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  engine.base = `http://127.0.0.1:${(engine.server.address() as AddressInfo).port}`;
}

const show = (v: number | string | undefined) => (typeof v === 'number' ? ms(v) : (v ?? '-'));

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  try {
    await onServer(o.citusUrl, (c) => c.query(`select citus_version()`));
  } catch (error) {
    out(`Citus benchmark skipped: no Citus coordinator answers at ${new URL(o.citusUrl).host} (${error instanceof Error ? error.message : String(error)}); start one with scripts/citus-cluster.sh start`);
    return;
  }
  out(`Citus benchmark: ${o.size.toLocaleString('en-US')} instances from the simulator, collected and reported on plain Postgres and on Citus (load ${loadAverage()})`);
  const plainName = benchDatabaseName('citus_plain');
  await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${plainName}`));
  const engines: Engine[] = [
    { label: 'Postgres', url: withDatabase(o.databaseUrl, plainName), drop: () => onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${plainName} WITH (FORCE)`)).then(() => undefined) },
  ];
  const sim = await startChildSimulator(o.size);
  const { configDir, configFile } = simulatorConfigFile(sim.manifest, 'citus');
  try {
    const citus = await createCitusDatabase(o.citusUrl, 'ct_bench_citus_');
    engines.push({ label: 'Citus', url: citus.url, drop: citus.drop });
    await onServer(o.citusUrl, (c) => c.query(`ALTER DATABASE ${citus.name} SET citus.enable_stat_counters = on`));
    const distributed = await cli('distribute', { DATABASE_URL: citus.url });
    out(`Citus: a coordinator and its workers; npm run cli -- distribute: exit ${distributed.code} in ${secs(distributed.ms)}`);
    if (distributed.code !== 0) throw new Error(`bench citus: distribute failed:\n${distributed.tail}`);

    out('');
    out(`collections (npm run collect, a child process each; the simulator in another): wall time, exit status`);
    out('collection             | Postgres           | Citus              | Citus / Postgres');
    const failedCollections: string[] = [];
    for (const label of ['first', 'unchanged']) {
      const cells: string[] = [];
      const walls: number[] = [];
      for (const engine of engines) {
        const run = await cli('collect', { DATABASE_URL: engine.url, CLOUDTALLY_API_URL: sim.url, CLOUDTALLY_API_KEY: sim.apiKey, CLOUDTALLY_CONFIG: configFile });
        walls.push(run.ms);
        cells.push(`${secs(run.ms).padStart(7)} exit ${run.code}`.padEnd(18));
        if (run.code === 0) continue;
        // Plain Postgres is the baseline: without it nothing compares. A failure on Citus is a result.
        if (engine.label === 'Postgres') throw new Error(`bench citus: the ${label} collection on Postgres exited ${run.code}:\n${run.tail}`);
        failedCollections.push(`${label} collection on Citus, exit ${run.code}:\n${run.tail.replace(/^/gm, '    ')}`);
      }
      out(`${label.padEnd(22)} | ${cells.join(' | ')} | ${(walls[1]! / walls[0]!).toFixed(2)} x`);
    }
    for (const failed of failedCollections) out(`  ${failed}`);

    const now = new Date();
    for (const engine of engines) await startApp(engine, now);
    reportCache.configure({ ttlMs: 0 });
    const citusEngine = engines[1]!;
    const paths: Array<[string, string]> = allReports().flatMap((r): Array<[string, string]> => [[r.name, r.name]]);
    paths.push(['cost by tag:team', 'cost?by=tag%3Ateam'], ['inventory 1 day back', `inventory?kind=instances&at=${encodeURIComponent(new Date(now.getTime() - 86_400_000).toISOString())}`]);
    out('');
    out(`reports, cache off (every request computes): p95 of ${o.samples} requests after a warm-up, each engine in turn per report (load ${loadAverage()})`);
    out('report                 | JSON PG  | JSON Citus | HTML PG  | HTML Citus | CSV PG   | CSV Citus | Citus queries per JSON request');
    let failures = 0;
    for (const [label, path] of paths) {
      const q = path.includes('?') ? '&' : '?';
      const [name, query] = path.split('?') as [string, string | undefined];
      const urls = (base: string) => [`${base}/api/reports/${path}${q}limit=50`, `${base}/reports/${path}`, `${base}/api/reports/${name}.csv${query ? `?${query}` : ''}`];
      const cells: Array<number | string> = [];
      for (let format = 0; format < 3; format++) {
        for (const engine of engines) cells.push(await p95Of(urls(engine.base!)[format]!, o.samples));
      }
      failures += cells.filter((c) => typeof c === 'string').length;
      const before = await shardQueries(citusEngine.db!);
      const once = await timedGet(urls(citusEngine.base!)[0]!);
      const after = await shardQueries(citusEngine.db!);
      const fan = once.status === 200 ? `${after.single - before.single} single-shard, ${after.multi - before.multi} multi-shard` : `answers ${once.status}`;
      out(`${label.padEnd(22)} | ${cells.map((c, i) => show(c).padStart(i % 2 ? 10 : 8)).join(' | ')} | ${fan}`);
    }
    out(`${failures === 0 ? 'every report answered on both engines' : `${failures} of ${paths.length * 6} report requests did not answer 200`} (load ${loadAverage()})`);
  } finally {
    for (const engine of engines) {
      await new Promise((resolve) => (engine.server ? engine.server.close(resolve) : resolve(undefined)));
      await engine.db?.close();
      if (o.keep) out(`kept ${engine.label} database ${engine.url}`);
      else await engine.drop();
    }
    sim.child.kill('SIGTERM');
    rmSync(configDir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench collect [-- --size 100000 | --sizes 10000,30000] [--no-ports] [--keep] [--cpu-profile FILE] [--timeline] [--trace-gc] [--runtime dist|tsx]`
 *
 * Collects the simulator at `size` instances (clusters, keypairs, Kubernetes clusters and storage
 * keys in proportion, as the simulator scales them) into a fresh database on the local Postgres
 * (`ct_bench_collect_<pid>_<time>_<random>`, created and dropped; BENCH_DATABASE_URL or --database-url names the server),
 * and prints:
 *   - wall time and rows/s per collector, the whole collection without ports, and the ports run;
 *   - CPU seconds of the collecting process, the simulator and Postgres during each collection
 *     (where the time goes on a 2-core machine; Postgres: the client backends of the bench's own
 *     database, see backend-cpu.ts); `--timeline` prints them per half second, `--cpu-profile FILE`
 *     writes a V8 profile of the collecting process (FILE for the collection without ports,
 *     FILE-ports for the ports; the size is added to the name with --sizes), `--trace-gc` sums its
 *     garbage collections;
 *   - with `--sizes A,B` (each size a whole benchmark in turn), the CPU of the collecting process
 *     per further 10,000 instances, ports included: the slope between the smallest and largest
 *     size (target <= 1.2 CPU s);
 *   - peak RSS of the collecting process. Each collection runs in a child process started as the
 *     image runs cloudtally (compiled dist/, the Dockerfile's NODE_OPTIONS; `--runtime tsx`: the
 *     sources as `npm start` runs them), so the harness and the simulator (its own child process,
 *     ~300 MB of generated company) are not counted;
 *   - snapshot ingest: the same instance rows written again through the collector's snapshot
 *     writer from memory (a COPY per page, two pages in flight as the collectors write them,
 *     then the finalising transaction);
 *   - the ceiling: a plain `COPY instances_copy FROM STDIN` of the same rows (text format,
 *     streamed from a file the server produced with COPY TO STDOUT) into a table LIKE instances
 *     INCLUDING ALL (same primary key and GIN index), both through pg-copy-streams.
 * Targets: ingest >= 0.5 x COPY; collection without ports < 10 s; with ports < 60 s;
 * peak RSS < 400 MB.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { getTableColumns } from 'drizzle-orm';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFromStdin, to as copyToStdout } from 'pg-copy-streams';
import { cpuSecondsOf, cpuSplitOf, DatabaseBackendsCpu } from './backend-cpu.js';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { childRuntime, moduleUrl, ROOT, type ChildRuntime, type Runtime } from './runtime.js';
import { COLLECTOR_NAMES, loadConfig, scopesFromManifest } from '../src/config/index.js';
import { openDatabase, type Database } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { instances } from '../src/db/schema.js';
import type { RunSummary } from '../src/collect/index.js';
import { forEachLimited } from '../src/collect/concurrency.js';
import { openSnapshot } from '../src/collect/snapshot-writer.js';

const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432/postgres';
/** Rows per page when re-ingesting: about one security group's answer. */
const INGEST_PAGE = 1_700;
/** Pages written at once by the ingest measurement: as many as the run's slots for big pages. */
const INGEST_IN_FLIGHT = 2;

interface Options {
  /** Instance counts, one whole benchmark each (`--size N` or `--sizes A,B`); with two or more, the CPU slope per 10,000 is printed. */
  sizes: number[];
  serverUrl: string;
  ports: boolean;
  keep: boolean;
  /** Write a V8 CPU profile of this process during the collection without ports. */
  cpuProfile: string | null;
  /** Print the CPU of the collecting process, the simulator and Postgres per half second of the collection. */
  timeline: boolean;
  /** Run the collecting process with --trace-gc and print how much its collections cost. */
  traceGc: boolean;
  /** What the collecting process runs: the compiled dist/ as the image does, or the sources through tsx as `npm start` does. */
  runtime: Runtime;
}


function parseArgs(args: string[]): Options {
  const options: Options = {
    sizes: [100_000],
    // Bench scripts are entry points like the CLI; the lead's bench/run.ts documents this variable.
    serverUrl: process.env['BENCH_DATABASE_URL'] ?? DEFAULT_SERVER,
    ports: true,
    keep: false,
    cpuProfile: null,
    timeline: false,
    runtime: 'dist',
    traceGc: false,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--size') options.sizes = [Number(args[++i])];
    else if (arg === '--sizes') options.sizes = (args[++i] ?? '').split(',').map(Number);
    else if (arg === '--database-url') options.serverUrl = args[++i] ?? options.serverUrl;
    else if (arg === '--no-ports') options.ports = false;
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--cpu-profile') options.cpuProfile = args[++i] ?? null;
    else if (arg === '--timeline') options.timeline = true;
    else if (arg === '--runtime') options.runtime = args[++i] as Runtime;
    else if (arg === '--trace-gc') options.traceGc = true;
    else throw new Error(`bench collect: unknown argument ${arg} (known: --size N, --sizes A,B, --database-url URL, --no-ports, --keep, --cpu-profile FILE, --timeline, --trace-gc, --runtime dist|tsx)`);
  }
  if (options.sizes.length === 0 || !options.sizes.every((n) => Number.isInteger(n) && n >= 1)) {
    throw new Error('bench collect: --size must be a positive integer, --sizes a comma-separated list of them');
  }
  if (options.runtime !== 'dist' && options.runtime !== 'tsx') throw new Error('bench collect: --runtime must be dist or tsx');
  return options;
}

// ---------------------------------------------------------------------------------------------
// CPU time per process (Linux /proc), to show where a collection's time goes on a small machine.

interface CpuMark {
  collector: number | null;
  /** Of which in the kernel (system time: sockets, page faults). */
  collectorSystem: number | null;
  simulator: number | null;
  /** The bench database's own backends (DatabaseBackendsCpu), since the collection started. */
  postgres: number;
}

interface CpuSources {
  collector: number;
  simulator: number;
  backends: DatabaseBackendsCpu;
}

function cpuMark(sources: CpuSources): CpuMark {
  const collector = cpuSplitOf(sources.collector);
  return {
    collector: collector === null ? null : collector.user + collector.system,
    collectorSystem: collector?.system ?? null,
    simulator: cpuSecondsOf(sources.simulator),
    postgres: sources.backends.seconds(),
  };
}

const cpuDelta = (from: number | null, to: number | null, digits: number) => (from !== null && to !== null ? (to - from).toFixed(digits) : 'n/a');

/** CPU seconds of the collecting process, the simulator and the bench database's Postgres backends during one collection. */
interface CpuSpent {
  collector: number | null;
  collectorSystem: number | null;
  simulator: number | null;
  postgres: number;
}

function cpuSpent(from: CpuMark, to: CpuMark): CpuSpent {
  const minus = (a: number | null, b: number | null) => (a !== null && b !== null ? b - a : null);
  return { collector: minus(from.collector, to.collector), collectorSystem: minus(from.collectorSystem, to.collectorSystem), simulator: minus(from.simulator, to.simulator), postgres: to.postgres - from.postgres };
}

function cpuLine(cpu: CpuSpent, wallMs: number): string {
  const s = (v: number | null) => (v === null ? 'n/a' : v.toFixed(2));
  return `  CPU: cloudtally ${s(cpu.collector)} s (system ${s(cpu.collectorSystem)} s), simulator ${s(cpu.simulator)} s, Postgres (this database's backends) ${s(cpu.postgres)} s, in ${secs(wallMs)} of wall time on ${availableParallelism()} cores`;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const perSecond = (rows: number, ms: number) => (ms > 0 ? Math.round((rows * 1000) / ms).toLocaleString('en-US') : '-');

/** CPU seconds used per half second by each process: shows whether the cores are kept busy. */
class CpuTimeline {
  private readonly lines: string[] = [];
  private readonly started = performance.now();
  private last: CpuMark;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly pids: CpuSources) {
    this.last = cpuMark(pids);
    this.timer = setInterval(() => this.sample(), 500);
  }

  private sample(): void {
    const now = cpuMark(this.pids);
    const at = ((performance.now() - this.started) / 1000).toFixed(1).padStart(5);
    this.lines.push(
      `  ${at} s  cloudtally ${cpuDelta(this.last.collector, now.collector, 2)}  simulator ${cpuDelta(this.last.simulator, now.simulator, 2)}  Postgres ${cpuDelta(this.last.postgres, now.postgres, 2)}`,
    );
    this.last = now;
  }

  stop(): string[] {
    clearInterval(this.timer);
    return ['CPU seconds per half second of the collection:', ...this.lines];
  }
}

// ---------------------------------------------------------------------------------------------
// The collecting process: cloudtally's own code in a child process, started as it runs in
// production, so that its memory and CPU are the service's and not this harness's (tsx alone
// adds ~90 MB of RSS: its loader thread and the transformed sources).

interface CollectorInput {
  url: string;
  simUrl: string;
  apiKey: string;
  manifest: unknown;
  collectors: readonly string[];
  cpuProfile: string | null;
}

interface ChildCollection {
  summary: RunSummary;
  wallMs: number;
  cpu: CpuSpent;
  timeline: string[];
  /** Before the collection, at its peak RSS (sampled every 50 ms), and the kernel's high-water mark. */
  before: NodeJS.MemoryUsage;
  atPeak: NodeJS.MemoryUsage;
  maxRss: number;
  /** V8's --trace-gc lines, when asked for. */
  gcLines: string[];
}

/** Counts and main-thread time of V8's collections, from --trace-gc lines. */
function gcSummary(lines: readonly string[]): string {
  const pauseMs = (line: string) => Number(/, ([\d.]+) \/ [\d.]+ ms/.exec(line)?.[1] ?? 0);
  const kinds = ['Scavenge', 'Mark-Compact'].map((kind) => {
    const ofKind = lines.filter((line) => line.includes(`: ${kind} `));
    return `${ofKind.length} ${kind} (${ofKind.reduce((sum, line) => sum + pauseMs(line), 0).toFixed(0)} ms)`;
  });
  return `  garbage collection in the collecting process: ${kinds.join(', ')}`;
}

/** The child's program: plain ESM importing cloudtally's modules from `root`; one JSON line per event on stdout. */
function collectorProgram(runtime: ChildRuntime): string {
  const module = (path: string) => moduleUrl(runtime, path);
  return `
    const { createCloudClient } = await import(${module('cloud/index')});
    const { loadConfig, scopesFromManifest } = await import(${module('config/index')});
    const { openDatabase } = await import(${module('db/connection')});
    const { silentLogger } = await import(${module('logger')});
    const { runCollection } = await import(${module('collect/index')});
    const input = JSON.parse(process.env.CT_BENCH_INPUT);
    const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
    const config = loadConfig({ DATABASE_URL: input.url });
    const client = createCloudClient({ baseUrl: input.simUrl, apiKey: input.apiKey, maxConcurrency: config.client.maxConcurrency });
    const db = await openDatabase({ driver: 'pg', url: input.url }, { poolSize: 10 });
    const manifest = scopesFromManifest(input.manifest);
    const deps = { db, client, config, scopes: manifest.scopes, imageIds: manifest.imageIds,
      freeFeatureIds: manifest.freeFeatureIds, logger: silentLogger(), runnerId: 'bench' };
    let session = null;
    if (input.cpuProfile) {
      const { Session } = await import('node:inspector/promises');
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    const before = process.memoryUsage();
    let atPeak = before;
    const sample = () => { const usage = process.memoryUsage(); if (usage.rss > atPeak.rss) atPeak = usage; };
    const sampler = setInterval(sample, 50);
    send({ event: 'start' });
    const summary = await runCollection(deps, { collectors: input.collectors });
    sample();
    send({ event: 'done', summary, before, atPeak, maxRss: process.resourceUsage().maxRSS * 1024 });
    clearInterval(sampler);
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      (await import('node:fs')).writeFileSync(input.cpuProfile, JSON.stringify(profile));
    }
    await client.close();
    await db.close();
  `;
}

/** Where a collection's CPU is counted: the simulator's process and the bench database's backends. */
interface Measured {
  simulatorPid: number;
  serverUrl: string;
  dbName: string;
}

/** Runs one collection in a child process; CPU of every process is measured between its start and done events. */
async function collectInChild(
  runtime: ChildRuntime,
  input: CollectorInput,
  measured: Measured,
  withTimeline: boolean,
  traceGc = false,
): Promise<ChildCollection> {
  const flags = [...runtime.execArgv, ...(traceGc ? ['--trace-gc'] : [])];
  const child = spawn(process.execPath, [...flags, '--input-type=module', '-e', collectorProgram(runtime)], {
    cwd: ROOT,
    env: { ...process.env, CT_BENCH_INPUT: JSON.stringify(input) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const sources: CpuSources = {
    collector: child.pid!,
    simulator: measured.simulatorPid,
    backends: new DatabaseBackendsCpu(measured.serverUrl, measured.dbName),
  };
  let started: { at: number; cpu: CpuMark; timeline: CpuTimeline | null } | null = null;
  let result: ChildCollection | null = null;
  const gcLines: string[] = [];
  let buffered = '';
  try {
    for await (const chunk of child.stdout!) {
      buffered += String(chunk);
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith('{"event"')) {
          gcLines.push(line); // --trace-gc output
          continue;
        }
        const message = JSON.parse(line) as { event: string } & Record<string, unknown>;
        if (message.event === 'start') {
          await sources.backends.start();
          started = { at: performance.now(), cpu: cpuMark(sources), timeline: withTimeline ? new CpuTimeline(sources) : null };
        } else if (message.event === 'done' && started) {
          const wallMs = performance.now() - started.at;
          const end = cpuMark(sources);
          end.postgres = await sources.backends.stop();
          const done = message as unknown as Pick<ChildCollection, 'summary' | 'before' | 'atPeak' | 'maxRss'>;
          result = { ...done, wallMs, cpu: cpuSpent(started.cpu, end), timeline: started.timeline?.stop() ?? [], gcLines };
        }
      }
    }
  } finally {
    if (!result) await sources.backends.stop().catch(() => undefined);
  }
  const [code, signal] = await exited;
  if (!result || code !== 0) throw new Error(`bench collect: the collecting process ended (code ${code}, signal ${signal}) ${result ? '' : 'without a result'}`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// The simulator in a child process.

export interface ChildSimulator {
  url: string;
  apiKey: string;
  manifest: unknown;
  child: ChildProcess;
}

export async function startChildSimulator(size: number): Promise<ChildSimulator> {
  const entry = join(ROOT, 'src/simulator/index.ts');
  const code = `
    import { startSimulator } from ${JSON.stringify(entry)};
    const sim = await startSimulator({ size: ${size}, seed: 42, taskDelayMs: 10 });
    process.stdout.write(JSON.stringify({ url: sim.url, apiKey: sim.apiKey, manifest: sim.manifest() }) + '\\n');
    process.on('SIGTERM', () => sim.close().finally(() => process.exit(0)));
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let buffered = '';
  for await (const chunk of child.stdout!) {
    buffered += String(chunk);
    const newline = buffered.indexOf('\n');
    if (newline >= 0) {
      const info = JSON.parse(buffered.slice(0, newline)) as { url: string; apiKey: string; manifest: unknown };
      return { ...info, child };
    }
  }
  throw new Error(`the simulator child process exited (code ${child.exitCode}) before listening`);
}

// ---------------------------------------------------------------------------------------------
// COPY to and from a file (pg-copy-streams).

async function copyOut(client: pg.Client, sql: string, file: string): Promise<number> {
  const query = client.query(copyToStdout(`COPY (${sql}) TO STDOUT`));
  await pipeline(query, createWriteStream(file));
  return query.rowCount;
}

async function copyIn(client: pg.Client, table: string, columns: string, file: string): Promise<number> {
  const query = client.query(copyFromStdin(`COPY ${table} (${columns}) FROM STDIN`));
  await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), query);
  return query.rowCount;
}

// ---------------------------------------------------------------------------------------------

function collectorTable(summary: RunSummary): string[] {
  return summary.perCollector.map(
    (c) =>
      `  ${c.collector.padEnd(14)} ${String(c.scopesOk).padStart(3)} ok ${String(c.scopesFailed).padStart(2)} failed ${String(c.rows).padStart(9)} rows ${secs(c.durationMs).padStart(9)} ${perSecond(c.rows, c.durationMs).padStart(10)} rows/s`,
  );
}

/**
 * The instance rows of the latest run, written again through the snapshot writer from memory, a
 * snapshot per scope as collected, with two pages in flight as the collectors write them (a page's
 * COPY text is built while the previous page is written).
 */
async function measureIngest(db: Database, runId: number): Promise<{ rows: number; insertMs: number; finaliseMs: number }> {
  const sources = await db.query<{ id: number; scope_key: string; project_id: number; region_id: number }>(
    `SELECT id, scope_key, project_id, region_id FROM snapshots WHERE run_id = $1 AND kind = 'instance' AND complete ORDER BY id`,
    [runId],
  );
  let rows = 0;
  let insertMs = 0;
  let finaliseMs = 0;
  for (const source of sources) {
    const pages: (typeof instances.$inferSelect)[][] = [];
    // Through the `instances` view (the rows of the snapshot, folded into versions by now).
    const keyOf = new Map(Object.entries(getTableColumns(instances)).map(([key, column]) => [column.name, key]));
    for (let after = ''; ; ) {
      const raw = await db.query(`SELECT * FROM instances WHERE snapshot_id = $1 AND instance_id > $2 ORDER BY instance_id LIMIT ${INGEST_PAGE}`, [source.id, after]);
      if (raw.length === 0) break;
      const page = raw.map((r) => Object.fromEntries(Object.entries(r).map(([name, value]) => [keyOf.get(name) ?? name, value])) as typeof instances.$inferSelect);
      after = page[page.length - 1]!.instanceId;
      pages.push(page);
    }
    const writer = await openSnapshot(db, {
      runId: null,
      kind: 'instance',
      scopeKey: source.scope_key,
      projectId: source.project_id,
      regionId: source.region_id,
      takenAt: new Date(),
    });
    const t0 = performance.now();
    await forEachLimited(pages, INGEST_IN_FLIGHT, async (page) => {
      const written = await writer.write(writer.prepare(instances, page.map((r) => ({ ...r, snapshotId: writer.id }))));
      rows += written;
    });
    insertMs += performance.now() - t0;
    const t1 = performance.now();
    await writer.finalise();
    finaliseMs += performance.now() - t1;
  }
  return { rows, insertMs, finaliseMs };
}

const COPY_COLUMNS =
  'snapshot_id, instance_id, name, description, status, vm_state, task_state, flavor_id, flavor_name, vcpus, ram, project_id, region_id, region, created_at, ssh_key_name, security_group_ids, security_group_names, volume_count, tags, tags_read_only, tags_original, raw';

async function measureCopy(url: string, runId: number): Promise<{ rows: number; ms: number; bytes: number }> {
  const file = join(tmpdir(), `ct_bench_instances_${process.pid}.copy`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await copyOut(
      client,
      `SELECT ${COPY_COLUMNS} FROM instances WHERE snapshot_id IN (SELECT id FROM snapshots WHERE run_id = ${Number(runId)} AND kind = 'instance')`,
      file,
    );
    const { size } = await import('node:fs/promises').then((fs) => fs.stat(file));
    await client.query('CREATE TABLE instances_copy (LIKE instances INCLUDING ALL)');
    await client.query('CHECKPOINT');
    const t0 = performance.now();
    const rows = await copyIn(client, 'instances_copy', COPY_COLUMNS, file);
    return { rows, ms: performance.now() - t0, bytes: size };
  } finally {
    await client.end();
    await rm(file, { force: true });
  }
}

/** FILE, or FILE with `-<size>` and the suffix before its extension (`p.cpuprofile` -> `p-30000-ports.cpuprofile`). */
function profileFile(file: string, size: number | null, suffix: string): string {
  const tail = `${size === null ? '' : `-${size}`}${suffix}`;
  const dot = file.lastIndexOf('.');
  return dot > file.lastIndexOf('/') ? `${file.slice(0, dot)}${tail}${file.slice(dot)}` : `${file}${tail}`;
}

export async function main(args: string[]): Promise<void> {
  const options = parseArgs(args);
  const out = (line = '') => process.stdout.write(`${line}\n`);
  const runtime = childRuntime(options.runtime);
  const spent: Array<{ size: number; cpu: CollectionCpu }> = [];
  for (const size of options.sizes) {
    if (spent.length > 0) out();
    spent.push({ size, cpu: await benchSize(options, size, runtime, out) });
  }
  for (const line of slopeLines(spent, options.ports)) out(line);
}

/** CPU seconds of one size's collections (without ports, then the ports run when asked). */
interface CollectionCpu {
  collector: number | null;
  postgres: number;
}

const CPU_PER_10K_TARGET = 1.2;

/**
 * The CPU of the collecting process per 10,000 instances: the slope between the smallest and the
 * largest size (what each further 10,000 instances cost, the process's fixed costs left out).
 */
function slopeLines(spent: ReadonlyArray<{ size: number; cpu: CollectionCpu }>, ports: boolean): string[] {
  if (spent.length < 2) return [];
  const sorted = [...spent].sort((a, b) => a.size - b.size);
  const low = sorted[0]!;
  const high = sorted[sorted.length - 1]!;
  const what = ports ? 'with ports' : 'without ports';
  const lines = ['', `CPU seconds of the whole collection (${what}) per size:`];
  for (const { size, cpu } of sorted) {
    lines.push(`  ${size.toLocaleString('en-US').padStart(9)} instances: collecting process ${cpu.collector?.toFixed(2) ?? 'n/a'} s, Postgres (the bench database's backends) ${cpu.postgres.toFixed(2)} s`);
  }
  if (high.size === low.size || low.cpu.collector === null || high.cpu.collector === null) return lines;
  const per10k = (a: number, b: number) => ((b - a) * 10_000) / (high.size - low.size);
  lines.push(
    `slope ${low.size.toLocaleString('en-US')} -> ${high.size.toLocaleString('en-US')}: collecting process ${per10k(low.cpu.collector, high.cpu.collector).toFixed(2)} CPU s per 10,000 instances (target <= ${CPU_PER_10K_TARGET}${ports ? '' : ', which counts the ports'}), Postgres ${per10k(low.cpu.postgres, high.cpu.postgres).toFixed(2)} CPU s per 10,000`,
  );
  return lines;
}

async function benchSize(options: Options, size: number, runtime: ChildRuntime, out: (line?: string) => void): Promise<CollectionCpu> {
  const dbName = benchDatabaseName('collect');
  const url = withDatabase(options.serverUrl, dbName);
  out(`collect benchmark: ${size.toLocaleString('en-US')} instances -> Postgres database ${dbName}`);

  const t0 = performance.now();
  const sim = await startChildSimulator(size);
  out(`simulator (child process ${sim.child.pid}) ready in ${secs(performance.now() - t0)}`);

  await onServer(options.serverUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  let db: Database | null = null;
  try {
    db = await openDatabase({ driver: 'pg', url }, { poolSize: 10 });
    await migrateDatabase(db);
    const manifest = scopesFromManifest(sim.manifest);
    const groups = manifest.scopes.reduce((n, s) => n + s.securityGroups.length, 0);
    const maxConcurrency = loadConfig({ DATABASE_URL: url }).client.maxConcurrency;
    out(`${manifest.scopes.length} scopes, ${groups} security groups, client concurrency ${maxConcurrency}`);
    out(`collecting process: node ${runtime.execArgv.join(' ')} (${options.runtime === 'dist' ? 'compiled dist/, as the image runs it' : 'sources through tsx, as npm start runs them'})`);
    const input = { url, simUrl: sim.url, apiKey: sim.apiKey, manifest: sim.manifest, cpuProfile: null };
    const measured: Measured = { simulatorPid: sim.child.pid!, serverUrl: options.serverUrl, dbName };
    const profile = (suffix: string) => (options.cpuProfile === null ? null : profileFile(options.cpuProfile, options.sizes.length > 1 ? size : null, suffix));

    const withoutPorts = COLLECTOR_NAMES.filter((n) => n !== 'ports');
    const first = await collectInChild(
      runtime,
      { ...input, collectors: withoutPorts, cpuProfile: profile('') },
      measured,
      options.timeline,
      options.traceGc,
    );
    const inventory = first.summary;
    out(`RSS before the collection: ${mb(first.before.rss)} (V8 heap used ${mb(first.before.heapUsed)})`);
    for (const line of first.timeline) out(line);
    if (options.cpuProfile) out(`CPU profile of the collection without ports: ${profile('')}`);
    out();
    out(`collection without ports: ${inventory.status}, ${secs(first.wallMs)} (target < 10 s), peak RSS ${mb(first.maxRss)}`);
    const at = first.atPeak;
    out(`  at the peak: V8 heap ${mb(at.heapTotal)} (used ${mb(at.heapUsed)}, mostly garbage not yet collected), external ${mb(at.external)}`);
    for (const line of collectorTable(inventory)) out(line);
    out(cpuLine(first.cpu, first.wallMs));
    if (options.traceGc) out(gcSummary(first.gcLines));

    let peakRss = first.maxRss;
    const cpu: CollectionCpu = { collector: first.cpu.collector, postgres: first.cpu.postgres };
    if (options.ports) {
      const ports = await collectInChild(runtime, { ...input, collectors: ['ports'], cpuProfile: profile('-ports') }, measured, false);
      peakRss = Math.max(peakRss, ports.maxRss);
      out(`ports: ${ports.summary.status}, ${secs(ports.wallMs)}, peak RSS ${mb(ports.maxRss)}`);
      for (const line of collectorTable(ports.summary)) out(line);
      out(cpuLine(ports.cpu, ports.wallMs));
      if (options.cpuProfile) out(`CPU profile of the ports: ${profile('-ports')}`);
      cpu.collector = cpu.collector !== null && ports.cpu.collector !== null ? cpu.collector + ports.cpu.collector : null;
      cpu.postgres += ports.cpu.postgres;
      out(`collection with ports: ${secs(first.wallMs + ports.wallMs)} (target < 60 s)`);
    }
    out(`peak RSS of the collecting process: ${mb(peakRss)} (target < 400 MB)`);
    for (const e of [...inventory.errors].slice(0, 10)) out(`  error: ${e.collector} ${e.scope} ${e.endpoint} ${e.status ?? ''} ${e.message}`);

    const instanceCollector = inventory.perCollector.find((c) => c.collector === 'instances')!;
    out('measuring snapshot ingest of the same instance rows...');
    const ingest = await measureIngest(db, inventory.runId);
    out('measuring the COPY ceiling...');
    const copy = await measureCopy(url, inventory.runId);
    const copyRate = (copy.rows * 1000) / copy.ms;
    const insertRate = (ingest.rows * 1000) / ingest.insertMs;
    const fullRate = (ingest.rows * 1000) / (ingest.insertMs + ingest.finaliseMs);
    const endToEnd = (instanceCollector.rows * 1000) / instanceCollector.durationMs;
    out();
    out(`instance rows: ${ingest.rows.toLocaleString('en-US')} (COPY file ${mb(copy.bytes)})`);
    out(`  COPY FROM STDIN ceiling               ${secs(copy.ms).padStart(9)} ${perSecond(copy.rows, copy.ms).padStart(10)} rows/s`);
    out(`  snapshot ingest, COPY per page (2 at once) ${secs(ingest.insertMs).padStart(9)} ${perSecond(ingest.rows, ingest.insertMs).padStart(10)} rows/s  = ${(insertRate / copyRate).toFixed(2)} x COPY (target >= 0.5)`);
    out(`  + finalising transaction (presence, rollups) ${secs(ingest.finaliseMs)}: ${perSecond(ingest.rows, ingest.insertMs + ingest.finaliseMs)} rows/s = ${(fullRate / copyRate).toFixed(2)} x COPY`);
    out(`  instances collector end to end (HTTP + parse + write, concurrent) ${perSecond(instanceCollector.rows, instanceCollector.durationMs)} rows/s = ${(endToEnd / copyRate).toFixed(2)} x COPY`);
    return cpu;
  } finally {
    sim.child.kill('SIGTERM');
    await db?.close();
    if (options.keep) out(`kept database ${dbName}`);
    else await onServer(options.serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  }
}

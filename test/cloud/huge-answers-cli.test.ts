/**
 * `npm run collect` as a real process against a cloud whose one page is huge or never ends: a
 * loopback server passes every request on to the simulator, except the instance list of one
 * security group, which it answers with the simulator's own records repeated to 200 MB, or
 * trickled forever. The collection fails that scope with an error naming the limit (or the
 * deadline), the others are stored, and the peak memory of every process of the command (the one
 * that fills a new PGlite folder included) stays under 600 MB, on Postgres and on a PGlite folder,
 * the first command too (it fills the folder), and the command's own process grows at most 200 MB
 * over the same command against the simulator's own page.
 */
import { existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { spawnCli } from '../helpers/cli.js';
import { freshPostgresDatabase } from '../helpers/databases.js';

const MAX_RSS_MB = 600;
const MAX_GROWTH_MB = 200;
const MiB = 1024 * 1024;
const REPORT_MAX_RSS = fileURLToPath(new URL('../helpers/report-max-rss.mjs', import.meta.url));

type PageServer = (res: ServerResponse, record: string) => Promise<void>;

/** Writes `text` and waits while the socket's buffer is full; false once the client has gone. */
async function write(res: ServerResponse, text: string | Buffer): Promise<boolean> {
  if (res.destroyed) return false;
  if (!res.write(text)) await new Promise((resolve) => res.once('drain', resolve).once('close', resolve));
  return !res.destroyed;
}

/** 200 MB of instance records in one list envelope, as fast as the client reads. */
const hugePage: PageServer = async (res, record) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.from(`${record},`.repeat(Math.ceil(MiB / (record.length + 1))));
  if (!(await write(res, '{"count": 1, "results": ['))) return;
  for (let sent = 0; sent < 200 * MiB; sent += chunk.length) if (!(await write(res, chunk))) return;
  res.end(`${record}]}`);
};

/** An instance record every 20 ms, forever. */
const tricklingPage: PageServer = async (res, record) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  if (!(await write(res, '{"count": 1, "results": ['))) return;
  while (await write(res, `${record},`)) await new Promise((resolve) => setTimeout(resolve, 20));
};

interface DatabaseUnderTest {
  name: string;
  open(): Promise<{ env: Record<string, string>; drop(): Promise<void> }>;
}

const databases: DatabaseUnderTest[] = [
  {
    name: 'pglite',
    open: async () => {
      const folder = mkdtempSync(join(tmpdir(), 'cloudtally-huge-pglite-'));
      return { env: { CLOUDTALLY_DATA_DIR: folder }, drop: async () => rmSync(folder, { recursive: true, force: true }) };
    },
  },
];
const postgresUrl = process.env.TEST_DATABASE_URL;
if (postgresUrl) {
  databases.push({
    name: 'postgres',
    open: async () => {
      const { url, drop } = await freshPostgresDatabase(postgresUrl);
      return { env: { DATABASE_URL: url }, drop };
    },
  });
}

describe.each(databases)('a collection against a huge or endless page (the real command line, $name)', (database) => {
  let sim: Simulator;
  let proxy: Server;
  let proxyUrl: string;
  let dir: string;
  let bigPath: string;
  /** null: the simulator's own page. */
  let serve: PageServer | null = null;
  let record = '';
  let db: { env: Record<string, string>; drop(): Promise<void> };
  let baselineMb = 0;
  let runs = 0;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, size: 12, taskDelayMs: 10 });
    const scope = sim.manifest().scopes[0]!;
    bigPath = `/cloud/v1/securitygroups/${scope.project_id}/${scope.region_id}/${scope.security_groups[0]}/instances`;
    const real = (await (await fetch(sim.url + bigPath, { headers: { authorization: `apikey ${sim.apiKey}` } })).json()) as { results: unknown[] };
    record = JSON.stringify(real.results[0]);
    const simPort = new URL(sim.url).port;
    proxy = createServer((req, res) => {
      if (serve && req.method === 'GET' && req.url === bigPath) {
        void serve(res, record).catch(() => res.destroy());
        return;
      }
      const upstream = httpRequest({ host: '127.0.0.1', port: simPort, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', () => resolve()));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'cloudtally-huge-'));
    db = await database.open();
    const baseline = await collect({ timeout_ms: 60_000, max_retries: 0 });
    expect(baseline.code, baseline.stdout).toBe(0);
    baselineMb = baseline.maxRssMb;
    // The first command on a new PGlite folder fills it in a process of its own: measured too.
    expect(baseline.processesMb.length).toBe(database.name === 'pglite' ? 2 : 1);
    expectEveryProcessUnder(baseline.processesMb, `${baseline.stdout}\n${baseline.stderr}`);
  }, 120_000);
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      if (!proxy) return resolve();
      proxy.closeAllConnections();
      proxy.close(() => resolve());
    });
    await sim?.close();
    await db?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The command's exit, output, its own process's peak memory and that of each of its processes (MB). */
  async function collect(client: Record<string, number>): Promise<{ code: number | null; stdout: string; stderr: string; maxRssMb: number; processesMb: number[] }> {
    const manifest = sim.manifest();
    const file = join(dir, 'cloudtally.json');
    const peaks = join(dir, `max-rss-${++runs}.txt`);
    writeFileSync(file, JSON.stringify({ scopes: [manifest.scopes[0]], image_ids: manifest.image_ids, free_feature_ids: manifest.free_feature_ids, client }));
    const cli = spawnCli(['collect'], {
      CLOUDTALLY_API_URL: proxyUrl,
      CLOUDTALLY_API_KEY: sim.apiKey,
      CLOUDTALLY_CONFIG: file,
      ...db.env,
      NODE_OPTIONS: `--import=${REPORT_MAX_RSS}`,
      REPORT_MAX_RSS_FILE: peaks,
    });
    const { code } = await cli.exited;
    const kb = Number(/max-rss-kb (\d+)/.exec(cli.stderr())?.[1]);
    expect(kb, cli.stderr()).toBeGreaterThan(0);
    const lines = existsSync(peaks) ? readFileSync(peaks, 'utf8').trim().split('\n') : [];
    const processesMb = lines.map((line) => Number(line.split(' ')[1]) / 1024);
    expect(lines.map((line) => Number(line.split(' ')[0])), cli.stderr()).toContain(cli.pid);
    return { code, stdout: cli.stdout(), stderr: cli.stderr(), maxRssMb: kb / 1024, processesMb };
  }

  function expectEveryProcessUnder(processesMb: number[], output: string): void {
    for (const mb of processesMb) expect(mb, `peaks of the command's processes: ${processesMb.join(', ')} MB\n${output}`).toBeLessThan(MAX_RSS_MB);
  }

  /** Every process under 600 MB, and the command's own at most 200 MB over the same command against a normal page. */
  function expectBoundedMemory(run: { maxRssMb: number; processesMb: number[] }, output: string): void {
    expect(run.maxRssMb - baselineMb, `peak ${run.maxRssMb} MB, baseline ${baselineMb} MB\n${output}`).toBeLessThan(MAX_GROWTH_MB);
    expectEveryProcessUnder(run.processesMb, output);
  }

  it('a 200 MB page fails its scope at the default 64 MiB limit, naming method, path and limit; the rest is stored', async () => {
    serve = hugePage;
    const started = Date.now();
    const run = await collect({ timeout_ms: 60_000, max_retries: 0 });
    const output = `${run.stdout}\n${run.stderr}`;
    expectBoundedMemory(run, output);
    expect(run.code, output).toBe(2); // partial: the other scopes and collectors were stored
    expect(run.stdout).toContain(
      `listInstancesBySecurityGroup: GET ${bigPath} answered 200 with an unusable body: (body): larger than the limit of 67108864 bytes (client.max_page_bytes); reading stopped there`,
    );
    expect(run.stdout).toMatch(/^ {2}ok {6}keypairs /m);
    expect(output).not.toContain(sim.apiKey);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);

  it('a page that trickles forever fails its scope at the attempt deadline (client.timeout_ms), in bounded time and memory', async () => {
    serve = tricklingPage;
    const started = Date.now();
    const run = await collect({ timeout_ms: 3_000, max_retries: 1 });
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).toBe(2);
    expect(run.stdout).toMatch(
      new RegExp(`listInstancesBySecurityGroup: GET ${bigPath.replace(/[/.]/g, '\\$&')} timed out reading the body after 3000 ms \\(2 attempts\\): \\d+ bytes had arrived; an answer must arrive whole within client\\.timeout_ms`),
    );
    expectBoundedMemory(run, output);
    expect(Date.now() - started).toBeLessThan(60_000);
  }, 120_000);
});

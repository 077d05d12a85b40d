/**
 * A private Postgres cluster for a test that stops and starts its database: made from the
 * installed Postgres with Debian's postgresql-common (`pg_createcluster`, `pg_ctlcluster`,
 * `pg_dropcluster`), on a spare port of 5450-5459, trust authentication over TCP on 127.0.0.1,
 * fsync off, never started at boot. Nothing else uses it, so stopping it disturbs no other test.
 *
 *   const reason = privatePostgresUnavailable();
 *   describe.skipIf(reason !== null)('...', () => {
 *     let cluster: PrivateCluster;
 *     beforeAll(async () => { cluster = await createPrivateCluster(); });
 *     afterAll(async () => { await cluster?.drop(); });
 *   });
 *
 * It needs root (pg_createcluster writes /etc/postgresql; the cluster itself runs as `postgres`),
 * which `.ci/run` has. Each cluster is claimed by an owner file in the temporary folder holding
 * the test process's pid before it is made, so parallel test files never take the same port, and
 * a cluster left by a test process that died is dropped by the next one that wants its port.
 */
import { execFile, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync, accessSync, constants } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** Ports of private clusters (other engineers' private clusters use 5441-5449). */
export const PRIVATE_PORTS: readonly [number, number] = [5450, 5459];
const NAME_PREFIX = 'ct_private_';
const OWNERS_DIR = join(tmpdir(), 'cloudtally-private-postgres');
/** A claimed name with no owner pid yet (a process that died between claim and write) is stale after this. */
const UNWRITTEN_CLAIM_STALE_MS = 10 * 60_000;

export interface PrivateCluster {
  readonly version: string;
  readonly name: string;
  readonly port: number;
  /** The superuser's URL of `database` on this cluster (trust authentication: no password). */
  url(database?: string): string;
  /** Starts the server and waits until it takes connections. */
  start(): Promise<void>;
  /** Stops the server (`fast`: sessions are terminated with 57P01, as a restart does). */
  stop(mode?: 'smart' | 'fast' | 'immediate'): Promise<void>;
  /** Whether the server is running now. */
  running(): Promise<boolean>;
  /** Stops the server if it runs and removes the cluster: data, configuration, log. */
  drop(): Promise<void>;
}

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && existsSync(join(dir, command)));
}

/** The newest installed Postgres major version with a server binary, or null. */
function installedVersion(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ?? null;
}

/**
 * Why a private cluster cannot be made here (a message for the skipped test), or null when it can.
 */
export function privatePostgresUnavailable(): string | null {
  for (const command of ['pg_createcluster', 'pg_ctlcluster', 'pg_dropcluster', 'runuser']) {
    if (!onPath(command)) return `${command} is not installed (Debian's postgresql-common): the private Postgres cluster cannot be made`;
  }
  if (!installedVersion()) return 'no Postgres server is installed under /usr/lib/postgresql/<version>/bin';
  try {
    accessSync('/etc/postgresql', constants.W_OK);
  } catch {
    return 'pg_createcluster needs to write /etc/postgresql (run the tests as root, as .ci/run does)';
  }
  return null;
}

function ownerFile(name: string): string {
  return join(OWNERS_DIR, `${name}.pid`);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the name for this process, or says it is held by a live one. A dead owner's cluster is dropped. */
function claim(version: string, name: string): boolean {
  mkdirSync(OWNERS_DIR, { recursive: true });
  const file = ownerFile(name);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number(readFileSync(file, 'utf8').trim());
    const held = Number.isInteger(pid) && pid > 0 ? alive(pid) : Date.now() - statSync(file).mtimeMs < UNWRITTEN_CLAIM_STALE_MS;
    if (held) return false;
    // Left by a test process that died: its cluster goes, then the name is free.
    dropSync(version, name);
    rmSync(file, { force: true });
  }
  return false;
}

function clusterExists(version: string, name: string): boolean {
  return existsSync(join('/etc/postgresql', version, name));
}

function dropSync(version: string, name: string): void {
  if (clusterExists(version, name)) spawnSync('pg_dropcluster', ['--stop', version, name], { stdio: 'ignore' });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** postgresql-common refuses to run when the environment's locale is not installed. */
const COMMAND_ENV = { ...process.env, LANG: 'C', LC_ALL: 'C' };

async function command(file: string, args: readonly string[]): Promise<void> {
  try {
    await run(file, [...args], { env: COMMAND_ENV });
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(`${file} ${args.join(' ')} failed: ${(e.stderr || e.stdout || e.message).trim()}`, { cause: err });
  }
}

async function waitUntilReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (err) {
      last = err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  throw new Error(`the private Postgres cluster at ${new URL(url).host} did not take connections within ${timeoutMs} ms: ${(last as Error | null)?.message ?? 'no answer'}`);
}

/** Makes, starts and returns a private cluster on the first spare port of `ports`. */
export function createPrivateCluster(options: { ports?: readonly [number, number] } = {}): Promise<PrivateCluster> {
  return makeCluster(options.ports ?? PRIVATE_PORTS, async (cluster) => cluster.start());
}

/**
 * Makes and starts a streaming replica of `primary` (a private cluster): a cluster of its own on
 * the next spare port whose data directory is a `pg_basebackup -R` of the primary, so it replays
 * the primary's WAL as it is written and answers read-only queries (hot standby).
 */
export function createStreamingReplica(primary: PrivateCluster, options: { ports?: readonly [number, number] } = {}): Promise<PrivateCluster> {
  return makeCluster(options.ports ?? PRIVATE_PORTS, async (cluster) => {
    const dataDir = dataDirectoryOf(cluster.version, cluster.name);
    // pg_basebackup fills an empty directory (its parent is not the postgres user's to write).
    for (const entry of readdirSync(dataDir)) rmSync(join(dataDir, entry), { recursive: true, force: true });
    await command('runuser', [
      '-u', 'postgres', '--',
      join('/usr/lib/postgresql', cluster.version, 'bin', 'pg_basebackup'),
      '--host', '127.0.0.1', '--port', String(primary.port), '--username', 'postgres',
      '--pgdata', dataDir, '--write-recovery-conf', '--wal-method', 'stream', '--checkpoint', 'fast', '--no-sync',
    ]);
    await cluster.start();
  });
}

/** The data directory of a Debian cluster (its postgresql.conf says). */
function dataDirectoryOf(version: string, name: string): string {
  const conf = readFileSync(join('/etc/postgresql', version, name, 'postgresql.conf'), 'utf8');
  const found = /^\s*data_directory\s*=\s*'([^']+)'/m.exec(conf);
  if (!found) throw new Error(`no data_directory in /etc/postgresql/${version}/${name}/postgresql.conf`);
  return found[1]!;
}

async function makeCluster(ports: readonly [number, number], init: (cluster: PrivateCluster) => Promise<void>): Promise<PrivateCluster> {
  const reason = privatePostgresUnavailable();
  if (reason) throw new Error(reason);
  const version = installedVersion()!;
  const [first, last] = ports;
  for (let port = first; port <= last; port++) {
    const name = `${NAME_PREFIX}${port}`;
    if (!claim(version, name)) continue;
    // Another cluster (not ours) or another program may hold the port.
    if (!(await portFree(port))) {
      rmSync(ownerFile(name), { force: true });
      continue;
    }
    dropSync(version, name); // a leftover whose owner file went missing
    const cluster = privateCluster(version, name, port);
    try {
      await command('pg_createcluster', [
        version,
        name,
        '--port',
        String(port),
        '--start-conf',
        'manual',
        '--locale',
        'C',
        '--encoding',
        'UTF8',
        // Throw-away data: no durability, little memory.
        '-o', 'fsync=off',
        '-o', 'synchronous_commit=off',
        '-o', 'full_page_writes=off',
        '-o', 'shared_buffers=32MB',
        '-o', 'max_connections=40',
        '--',
        '--auth=trust',
      ]);
      await init(cluster);
    } catch (err) {
      await cluster.drop().catch(() => undefined);
      throw err;
    }
    return cluster;
  }
  throw new Error(`no spare port for a private Postgres cluster in ${first}-${last} (each is taken by a running test or another program)`);
}

function privateCluster(version: string, name: string, port: number): PrivateCluster {
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  // A test process that ends without drop() (a crash, a timeout) still removes its cluster.
  const onExit = () => {
    dropSync(version, name);
    rmSync(ownerFile(name), { force: true });
  };
  process.once('exit', onExit);
  const ctl = (action: string, extra: string[] = []) => command('pg_ctlcluster', ['--skip-systemctl-redirect', version, name, action, ...extra]);
  return {
    version,
    name,
    port,
    url,
    async start() {
      await ctl('start');
      await waitUntilReady(url(), 30_000);
    },
    async stop(mode = 'fast') {
      await ctl('stop', ['--mode', mode]);
    },
    async running() {
      const status = spawnSync('pg_ctlcluster', [version, name, 'status'], { env: COMMAND_ENV, stdio: 'ignore' });
      return status.status === 0;
    },
    async drop() {
      process.off('exit', onExit);
      try {
        if (clusterExists(version, name)) await command('pg_dropcluster', ['--stop', version, name]);
      } finally {
        rmSync(ownerFile(name), { force: true });
      }
    },
  };
}

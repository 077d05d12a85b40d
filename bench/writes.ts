/**
 * `npm run bench writes [-- --size 20000 --repeats 2 --database-url URL --citus-url URL]`
 *
 * What a collection writes (issue 25 item 5): `npm run collect` (a child process, as a user runs it)
 * from one simulator child of --size instances, into a fresh database: a first collection, then
 * --repeats collections in which nothing changed. Each collection's WAL (the difference of
 * `pg_current_wal_lsn()` before and after, on Citus summed over the coordinator and every worker)
 * and the growth of the database (`pg_database_size`, on Citus summed likewise), with no VACUUM in
 * between; an unchanged collection's figures as a share of the first's (targets: WAL at most 10 %,
 * storage at most 5 %). The WAL is the server's: run it on a server the bench has to itself (a
 * private cluster: other databases' writes would count). On plain Postgres (--database-url, else
 * BENCH_DATABASE_URL) and, when a Citus coordinator answers (--citus-url, else TEST_CITUS_URL),
 * on Citus too, placed by `npm run cli -- distribute`.
 */
import { rmSync } from 'node:fs';
import { createCitusDatabase } from '../test/helpers/citus.js';
import { cli, DEFAULT_CITUS, simulatorConfigFile } from './citus.js';
import { startChildSimulator } from './collect.js';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { loadAverage, out, secs } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';

const parseOptions = (args: string[]) =>
  parseBenchOptions('writes', args, { size: 20_000, repeats: 2, databaseUrl: BENCH_SERVER as string, citusUrl: DEFAULT_CITUS });

/** WAL position and database size of one database (on Citus: the coordinator and every worker, summed). */
async function footprint(url: string, citus: boolean): Promise<{ wal: number; size: number }> {
  return onServer(url, async (c) => {
    const { rows } = await c.query<{ wal: string; size: string }>(
      `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as wal, pg_database_size(current_database())::text as size`,
    );
    let wal = Number(rows[0]!.wal);
    let size = Number(rows[0]!.size);
    if (citus) {
      const workers = await c.query<{ success: boolean; result: string }>(
        `select success, result from run_command_on_workers($$select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text || ' ' || pg_database_size(current_database())::text$$)`,
      );
      for (const w of workers.rows) {
        if (!w.success) throw new Error(`bench writes: a worker did not answer: ${w.result}`);
        const [walBytes, sizeBytes] = w.result.split(' ').map(Number);
        wal += walBytes!;
        size += sizeBytes!;
      }
    }
    return { wal, size };
  });
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
const share = (part: number, whole: number) => `${((100 * part) / whole).toFixed(1)} %`;

interface Engine {
  label: string;
  url: string;
  citus: boolean;
  drop(): Promise<void>;
}

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  out(`What a collection writes: ${o.size.toLocaleString('en-US')} instances from the simulator, npm run collect into a fresh database, a first collection then ${o.repeats} unchanged, no VACUUM in between (load ${loadAverage()})`);
  const sim = await startChildSimulator(o.size);
  const { configDir, configFile } = simulatorConfigFile(sim.manifest, 'writes');
  const engines: Engine[] = [];
  try {
    const plainName = benchDatabaseName('writes');
    await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${plainName}`));
    engines.push({
      label: 'Postgres',
      url: withDatabase(o.databaseUrl, plainName),
      citus: false,
      drop: () => onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${plainName} WITH (FORCE)`)).then(() => undefined),
    });
    try {
      await onServer(o.citusUrl, (c) => c.query('select citus_version()'));
      const citus = await createCitusDatabase(o.citusUrl, 'ct_bench_writes_');
      engines.push({ label: 'Citus', url: citus.url, citus: true, drop: citus.drop });
      const distributed = await cli('distribute', { DATABASE_URL: citus.url });
      if (distributed.code !== 0) throw new Error(`bench writes: distribute failed:\n${distributed.tail}`);
    } catch (error) {
      if (engines.length === 1) out(`Citus skipped: no Citus coordinator answers at ${new URL(o.citusUrl).host} (${error instanceof Error ? error.message : String(error)})`);
      else throw error;
    }
    // Migrations write too: the baseline is the database as `collect` finds it after migrating.
    for (const engine of engines) {
      const migrated = await cli('migrate', { DATABASE_URL: engine.url });
      if (migrated.code !== 0) throw new Error(`bench writes: migrate on ${engine.label} failed:\n${migrated.tail}`);
    }
    for (const engine of engines) {
      out('');
      out(`${engine.label}: collection | wall | WAL | database growth | share of the first's WAL | share of its growth`);
      let first: { wal: number; size: number } | null = null;
      for (let i = 0; i <= o.repeats; i++) {
        const before = await footprint(engine.url, engine.citus);
        const run = await cli('collect', { DATABASE_URL: engine.url, CLOUDTALLY_API_URL: sim.url, CLOUDTALLY_API_KEY: sim.apiKey, CLOUDTALLY_CONFIG: configFile });
        if (run.code !== 0) throw new Error(`bench writes: collection ${i + 1} on ${engine.label} exited ${run.code}:\n${run.tail}`);
        const after = await footprint(engine.url, engine.citus);
        const wrote = { wal: after.wal - before.wal, size: after.size - before.size };
        first ??= wrote;
        const label = i === 0 ? 'first' : `unchanged ${i}`;
        const shares = i === 0 ? '-                        | -' : `${share(wrote.wal, first.wal).padStart(7)} (target <= 10 %)     | ${share(wrote.size, first.size)} (target <= 5 %)`;
        out(`${label.padEnd(11)} | ${secs(run.ms).padStart(7)} | ${mb(wrote.wal).padStart(9)} | ${mb(wrote.size).padStart(9)} | ${shares}`);
      }
    }
    out(`(load ${loadAverage()})`);
  } finally {
    for (const engine of engines) await engine.drop();
    sim.child.kill('SIGTERM');
    rmSync(configDir, { recursive: true, force: true });
  }
}

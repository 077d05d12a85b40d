/**
 * Collections from the simulator into a database distributed by the distribute command's own
 * function (migrateDatabase + distributeTables) on the Citus coordinator named by TEST_CITUS_URL,
 * compared with the same collections from the same simulator on plain Postgres (TEST_DATABASE_URL)
 * or else PGlite: a first collection, the work the service does after a run (days closed, current
 * instances, budget and anomaly alerts), then a second collection in which nothing changed and the
 * work after it again. Every run succeeds, every table holds as many rows, and the cost rollups
 * hold the same figures (as text, exact) on both; then `recompute-rollups` under changed tag
 * rules (the team key renamed) retags and rebuilds the same rows and figures on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCollection } from '../../src/collect/index.js';
import { recomputeRollups, type RecomputeSummary } from '../../src/collect/recompute.js';
import type { TagRules } from '../../src/tags/normalise.js';
import { workAfterRun } from '../../src/notify/after-run.js';
import pino from 'pino';
import type { Database } from '../../src/db/connection.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { CITUS_URL, citusSuiteTitle, openDistributedDatabase, type DistributedDatabase } from '../helpers/citus.js';
import { testDatabases } from '../helpers/databases.js';

/**
 * Two collections (the second finds nothing changed), each followed by the service's work after a
 * run: their statuses, and the messages of the errors logged (the work after a run logs its
 * failures and goes on).
 */
async function collectTwice(database: Database): Promise<{ statuses: string[]; loggedErrors: string[] }> {
  const sim = await startTestSimulator();
  const config = testConfig();
  const client = testClient(sim, config);
  const loggedErrors: string[] = [];
  const logger = pino({ level: 'error' }, { write: (line: string) => void loggedErrors.push(line) });
  const afterRun = workAfterRun({ db: database, config, logger });
  try {
    const statuses: string[] = [];
    for (let i = 0; i < 2; i++) {
      const summary = await runCollection(testDeps(database, sim, client, config, { logger }), { trigger: 'manual' });
      statuses.push(summary.status);
      await afterRun(new Date());
    }
    return { statuses, loggedErrors };
  } finally {
    await client.close();
    await sim.close();
  }
}

/** The cost rollups' figures, snapshot and time aside, in one order: exact text of every numeric. */
async function rollupFigures(database: Database): Promise<string[]> {
  const rows = await database.query<{ line: string }>(
    `select concat_ws('|', s.kind, s.scope_key, r.dimension, r.group_value, r.currency, r.price_per_hour::text, r.price_per_month::text,
        r.resource_count, r.unpriced_count, r.gpu_count, r.gpu_price_per_hour::text, r.gpu_unknown_count) as line
       from cost_rollups r join snapshots s on s.id = r.snapshot_id order by 1`,
  );
  return rows.map((r) => r.line);
}

/** Rows per table of the public schema, by name. */
async function rowCounts(database: Database): Promise<Record<string, number>> {
  const tables = await database.query<{ name: string }>(
    `select relname as name from pg_class where relnamespace = 'public'::regnamespace and relkind in ('r', 'p') and not relispartition order by 1`,
  );
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const [row] = await database.query<{ n: string }>(`select count(*) as n from "${name}"`);
    counts[name] = Number(row!.n);
  }
  return counts;
}

/** Complete snapshots and presence rows per kind, for the kinds given. */
async function perKind(database: Database, kinds: readonly string[]): Promise<Record<string, { snapshots: number; presence: number }>> {
  const count = async (table: string, where: string) =>
    new Map(
      (
        await database.query<{ kind: string; n: string }>(`select kind, count(*) as n from ${table} where ${where} group by kind`, [kinds])
      ).map((r) => [r.kind, Number(r.n)]),
    );
  const snapshots = await count('snapshots', 'complete and kind = any($1::text[])');
  const presence = await count('resource_presence', 'kind = any($1::text[])');
  return Object.fromEntries(kinds.map((k) => [k, { snapshots: snapshots.get(k) ?? 0, presence: presence.get(k) ?? 0 }]));
}

/** Tag rules after an administrator renamed the team key: every team-tagged row is retagged. */
const RENAMED_TEAM: TagRules = { tagAliases: { team: 'owner' }, tagKeyCase: 'lower', tagValueCase: 'lower', tagValueAliases: {} };

/** recompute-rollups under RENAMED_TEAM: its summary and the cost figures it leaves. */
async function recompute(database: Database): Promise<{ summary: RecomputeSummary; rollups: string[] }> {
  const summary = await recomputeRollups(database, RENAMED_TEAM);
  return { summary, rollups: await rollupFigures(database) };
}

/** Kinds whose collection writes no cost rollups (fold, presence and run record only). */
const UNPRICED_KINDS = ['keypair', 'flavor', 'storage_key', 'free_feature'];

describe.skipIf(!CITUS_URL)(citusSuiteTitle('a collection on a distributed database'), () => {
  let citus: DistributedDatabase | undefined;
  let database: Database | undefined;
  let plain: { name: string; counts: Record<string, number>; kinds: Awaited<ReturnType<typeof perKind>>; rollups: string[]; recomputed: Awaited<ReturnType<typeof recompute>> };
  let distributed: { statuses: string[]; loggedErrors: string[]; errors: unknown };
  beforeAll(async () => {
    const plainTarget = testDatabases().at(-1)!; // Postgres when TEST_DATABASE_URL is set, else PGlite
    const reference = await plainTarget.open();
    try {
      expect(await collectTwice(reference), plainTarget.name).toEqual({ statuses: ['succeeded', 'succeeded'], loggedErrors: [] });
      plain = {
        name: plainTarget.name,
        counts: await rowCounts(reference),
        kinds: await perKind(reference, UNPRICED_KINDS),
        rollups: await rollupFigures(reference),
        recomputed: await recompute(reference),
      };
    } finally {
      await reference.close();
    }
    citus = await openDistributedDatabase(CITUS_URL!);
    database = citus.db;
    const collected = await collectTwice(database);
    const runs = await database.query<{ errors: unknown }>(`select errors from collection_runs order by id`);
    distributed = { ...collected, errors: runs.map((r) => r.errors) };
  }, 300_000);
  afterAll(async () => {
    await citus?.close();
  });

  it('opens every session with the Citus settings the collection needs', async () => {
    const rows = await database!.query<{ on: string }>(`select current_setting('citus.enable_repartition_joins') as on`);
    expect(rows).toEqual([{ on: 'on' }]);
  });

  it('stores the snapshots and presence of the kinds without cost rollups as on a plain database', async () => {
    expect(Object.keys(plain.kinds)).toEqual(UNPRICED_KINDS);
    for (const kind of UNPRICED_KINDS) expect(plain.kinds[kind]!.snapshots, kind).toBeGreaterThan(0);
    expect(await perKind(database!, UNPRICED_KINDS)).toEqual(plain.kinds);
  });

  it('succeeds twice and stores the same rows per table and the same cost figures as on a plain database', async () => {
    expect(distributed.statuses, JSON.stringify(distributed.errors)).toEqual(['succeeded', 'succeeded']);
    expect(distributed.loggedErrors).toEqual([]);
    expect(await rowCounts(database!)).toEqual(plain.counts);
    const rollups = await rollupFigures(database!);
    expect(rollups.length).toBeGreaterThan(0);
    expect(rollups).toEqual(plain.rollups);
  });

  it('recomputes the rollups under changed tag rules as on a plain database', async () => {
    expect(plain.recomputed.summary.failures).toEqual([]);
    expect(plain.recomputed.summary.retaggedRows).toBeGreaterThan(0);
    expect(plain.recomputed.rollups.some((line) => line.includes('|tag:owner|'))).toBe(true);
    expect(await recompute(database!)).toEqual(plain.recomputed);
  });
});

/**
 * Tag value rules end to end: a collection from the simulator with value variants (`ML`, `ml`,
 * ` Ml `, and `Machine-Learning` for an alias) under `tag_value_case: lower` and
 * `tag_value_aliases` gives one cost group over HTTP while the raw record keeps what was received;
 * the tag-hygiene report suggests the configuration that merges them; and `recompute-rollups`, run
 * as a child process over a database collected before the rules, merges its history.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { runCollection } from '../../src/collect/index.js';
import type { Config } from '../../src/config/index.js';
import { openDatabase, type Database } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import type { Row } from '../../src/reports/report.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { startReportsApp } from '../reports/helpers.js';
import { parseCsv } from '../web/fixtures.js';
import { checkFocusRows } from '../reports/focus-rules.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** The file settings of the rules under test (besides testConfig's own `équipe` -> `team`). */
const RULES = { tag_value_case: 'lower', tag_value_aliases: { Team: { 'Machine-Learning': 'ml' } } };

/** A database a child process can open too: PGlite in a folder, or a fresh Postgres database. */
interface SharedDatabase {
  env: Record<string, string>;
  open(): Promise<Database>;
  drop(): Promise<void>;
}

async function sharedDatabase(name: string): Promise<SharedDatabase> {
  if (name === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'ct-recompute-'));
    return {
      env: { CLOUDTALLY_DATA_DIR: dataDir },
      open: () => openDatabase({ driver: 'pglite', dataDir }),
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const base = new URL(process.env.TEST_DATABASE_URL!);
  const dbName = `ct_test_${Date.now()}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const url = new URL(base);
    url.pathname = '/postgres';
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${dbName}`);
  const url = new URL(base);
  url.pathname = `/${dbName}`;
  return {
    env: { DATABASE_URL: url.toString() },
    open: () => openDatabase({ driver: 'pg', url: url.toString() }, { poolSize: 2 }),
    drop: () => admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`),
  };
}

function runCli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Team values as received, per priced resource of the latest snapshots (instances and clusters), read from tags_original. */
async function receivedTeamValues(db: Database): Promise<string[]> {
  const rows = await db.query<{ value: string }>(
    `with latest as (select distinct on (kind, scope_key) id, kind from snapshots where complete and kind in ('instance', 'cluster') order by kind, scope_key, taken_at desc, id desc),
     r as (select i.tags_original from instances i join latest l on l.id = i.snapshot_id and l.kind = 'instance'
           union all select c.tags_original from gpu_clusters c join latest l on l.id = c.snapshot_id and l.kind = 'cluster')
     select (select t->>'value' from jsonb_array_elements(r.tags_original) t where lower(t->>'key') in ('team', 'équipe') limit 1) as value from r`,
  );
  return rows.map((r) => r.value).filter((v): v is string => v !== null);
}

/** Under the rules: lower case, trimmed, `machine-learning` -> `ml` (written out here, not taken from the code). */
const byHand = (v: string) => (v.trim().toLowerCase() === 'machine-learning' ? 'ml' : v.trim().toLowerCase());

async function getJson<T>(base: string, path: string): Promise<T> {
  const res = await request(`${base}${path}`);
  const text = await res.body.text();
  expect(res.statusCode, text.slice(0, 300)).toBe(200);
  return JSON.parse(text) as T;
}

async function getText(base: string, path: string): Promise<string> {
  const res = await request(`${base}${path}`);
  const text = await res.body.text();
  expect(res.statusCode, text.slice(0, 300)).toBe(200);
  return text.replace(/^\uFEFF/, '');
}

/** Cost groups of tag key team over HTTP: group -> resources (every currency). */
async function teamGroups(db: Database, config: Config): Promise<Map<string, number>> {
  const app = await startReportsApp(() => ({ db, config, now: new Date() }));
  try {
    const body = await getJson<{ rows: Row[] }>(app.base, '/api/reports/cost?by=tag%3Ateam&limit=10000');
    const groups = new Map<string, number>();
    for (const r of body.rows) groups.set(String(r.group), (groups.get(String(r.group)) ?? 0) + Number(r.resources));
    return groups;
  } finally {
    await app.close();
  }
}

/** Every FOCUS row of the month so far, as JSON and as CSV, checked rule by rule. */
async function checkFocusExport(db: Database, config: Config): Promise<number> {
  const app = await startReportsApp(() => ({ db, config, now: new Date() }));
  try {
    const json = await getJson<{ rows: Row[]; columns: Array<{ key: string }> }>(app.base, '/api/reports/focus?limit=10000');
    expect(json.rows.length).toBeGreaterThan(0);
    checkFocusRows(json.rows, json.columns.map((c) => c.key));
    const [header, ...records] = parseCsv(await getText(app.base, '/api/reports/focus.csv'));
    const csvRows = records.map((rec) => Object.fromEntries(header!.map((h, i) => [h, rec[i] === '' ? null : rec[i]])));
    expect(csvRows.length).toBe(json.rows.length);
    checkFocusRows(csvRows, header!);
    return json.rows.length;
  } finally {
    await app.close();
  }
}

const databases = testDatabases().map((d) => d.name);

describe.each(databases)('tag value rules on %s', (name) => {
  let sim: Simulator;
  let client: CloudClient;
  const before = testConfig();
  const withRules = testConfig(RULES);
  let shared: SharedDatabase;
  let old: Database;
  let fresh: Database;
  let changedId: string;
  let configFile: string;

  beforeAll(async () => {
    sim = await startTestSimulator();
    client = testClient(sim, before);
    // Two spellings the demo does not have: " Ml " (spaces) and one for the alias.
    const mlInstances = sim.state.scopes().flatMap((s) => sim.state.instances(s.project_id, s.region_id)).filter((i) => i.tags.some((t) => t.value === 'ml'));
    expect(mlInstances.length).toBeGreaterThanOrEqual(2);
    mlInstances[0]!.tags.find((t) => t.value === 'ml')!.value = ' Ml ';
    mlInstances[1]!.tags.find((t) => t.value === 'ml')!.value = 'Machine-Learning';
    changedId = mlInstances[0]!.id;

    shared = await sharedDatabase(name);
    old = await shared.open();
    await migrateDatabase(old);
    await runCollection(testDeps(old, sim, client, before), { trigger: 'manual' });

    fresh = await testDatabases().find((d) => d.name === name)!.open();
    await runCollection(testDeps(fresh, sim, client, withRules), { trigger: 'manual' });

    configFile = join(mkdtempSync(join(tmpdir(), 'ct-config-')), 'cloudtally.json');
    writeFileSync(configFile, JSON.stringify({ tag_aliases: { 'équipe': 'team' }, collect_on_start: false, ...RULES }));
  }, 120_000);
  afterAll(async () => {
    await fresh?.close();
    await old?.close();
    await shared?.drop();
    await client?.close();
    await sim?.close();
  });

  it('merges ML, ml, " Ml " and an aliased value into one cost group at collection, keeping the raw record', async () => {
    const received = await receivedTeamValues(fresh);
    expect(received).toEqual(expect.arrayContaining(['ml', 'ML', ' Ml ', 'Machine-Learning']));
    const groups = await teamGroups(fresh, withRules);
    expect(groups.get('ml')).toBe(received.filter((v) => byHand(v) === 'ml').length);
    for (const variant of ['ML', 'Ml', ' Ml ', 'Machine-Learning', 'Data-Eng']) expect(groups.has(variant)).toBe(false);
    expect(groups.get('data-eng')).toBe(received.filter((v) => byHand(v) === 'data-eng').length);

    const [row] = await fresh.query<{ tags: Record<string, string>; tags_original: Array<{ key: string; value: string }>; raw: { tags?: Array<{ value: string }> } }>(
      `select tags, tags_original, raw from instances where instance_id = $1 order by snapshot_id desc limit 1`,
      [changedId],
    );
    expect(row!.tags.team).toBe('ml');
    expect(row!.tags_original.map((t) => t.value)).toContain(' Ml ');
    expect(JSON.stringify(row!.raw)).toContain('" Ml "');
  });

  it('tag hygiene lists the look-alike values and the configuration lines that merge them', async () => {
    const app = await startReportsApp(() => ({ db: old, config: before, now: new Date() }));
    try {
      const body = await getJson<{ rows: Row[]; notes: string[] }>(app.base, '/api/reports/tag-hygiene');
      const team = body.rows.find((r) => r.key === 'team')!;
      expect(team.variants).toContain('"ML" ~ "Ml" ~ "ml"');
      const suggested = JSON.parse(String(team.suggested_config)) as { tag_value_aliases: Record<string, Record<string, string>> };
      // ml is the most used spelling of its group, data-eng of its own.
      expect(suggested.tag_value_aliases.team).toMatchObject({ ML: 'ml', Ml: 'ml', 'Data-Eng': 'data-eng' });
      expect(body.notes.join(' ')).toContain('"tag_value_aliases":{"team":{');
      expect(body.notes.join(' ')).toContain('recompute-rollups');
    } finally {
      await app.close();
    }
  });

  it('recompute-rollups (CLI) re-applies the rules to a database collected before them', async () => {
    await old.execute(
      `insert into cost_daily (day, kind, scope_key, project_id, region_id, dimension, group_value, currency, price_seconds, resource_seconds, max_resource_count)
       values ('2025-01-15', 'instance', 'p1-r1', 1, 1, 'tag:team', 'ML', 'EUR', 10.25 * 3600, 24 * 3600, 1),
              ('2025-01-15', 'instance', 'p1-r1', 1, 1, 'tag:team', 'ml', 'EUR', 5.5 * 3600, 48 * 3600, 2),
              ('2025-01-15', 'instance', 'p1-r1', 1, 1, 'tag:team', 'Data-Eng', 'EUR', 3600, 24 * 3600, 1)`,
    );
    await old.execute(`insert into cost_daily_sealed_days (day) values ('2025-01-15')`);
    const received = await receivedTeamValues(old);
    const beforeGroups = await teamGroups(old, before);
    expect(beforeGroups.get('ML')).toBe(received.filter((v) => v === 'ML').length);
    const originalBefore = await old.query('select snapshot_id, instance_id, tags_original from instances order by 1, 2');
    if (name === 'pglite') await old.close();

    const run = await runCli(['recompute-rollups'], { ...shared.env, CLOUDTALLY_CONFIG: configFile });
    expect(run.code, run.stderr).toBe(0);
    const snapshots = (await (name === 'pglite' ? shared.open() : Promise.resolve(old)).then(async (db) => {
      old = db;
      return db.query<{ n: number }>(`select count(*)::int as n from snapshots where complete and kind in ('instance', 'cluster', 'k8s_price')`);
    }))[0]!.n;
    expect(run.stdout).toContain(`Recomputed the cost rollups of ${snapshots} snapshots with the current tag rules.`);
    expect(run.stdout).toMatch(/Resource rows re-tagged from their tags as received: [1-9]\d*\./);
    expect(run.stdout).toContain('Daily cost rows of sealed days merged into their canonical tag value: 2.');

    // A new handle, as after a restart: cached reports start afresh.
    if (name !== 'pglite') {
      await old.close();
      old = await shared.open();
    }
    const groups = await teamGroups(old, withRules);
    expect(groups.get('ml')).toBe(received.filter((v) => byHand(v) === 'ml').length);
    for (const variant of ['ML', 'Ml', 'Machine-Learning', 'Data-Eng']) expect(groups.has(variant)).toBe(false);
    expect(await old.query('select snapshot_id, instance_id, tags_original from instances order by 1, 2')).toEqual(originalBefore);
    const sealed = await old.query<{ group_value: string; cost: string; resource_hours: string; max_resource_count: number }>(
      `select group_value, (price_seconds / 3600)::text as cost, (resource_seconds / 3600)::text as resource_hours, max_resource_count from cost_daily where day = '2025-01-15' order by group_value`,
    );
    expect(sealed.map((r) => [r.group_value, Number(r.cost), Number(r.resource_hours), r.max_resource_count])).toEqual([
      ['data-eng', 1, 24, 1],
      ['ml', 15.75, 72, 3],
    ]);

    // Again: nothing left to change.
    if (name === 'pglite') await old.close();
    const again = await runCli(['recompute-rollups'], { ...shared.env, CLOUDTALLY_CONFIG: configFile });
    if (name === 'pglite') old = await shared.open();
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('Resource rows re-tagged from their tags as received: 0.');
    expect(again.stdout).toContain('Daily cost rows of sealed days merged into their canonical tag value: 0.');
  }, 120_000);

  it('refuses to run while a collection is running (exit 75)', async () => {
    await old.execute(`insert into collection_runs (trigger, collectors, runner_id, started_at, heartbeat_at, status) values ('manual', '{}', 'other', now(), now(), 'running')`);
    if (name === 'pglite') await old.close();
    const run = await runCli(['recompute-rollups'], { ...shared.env, CLOUDTALLY_CONFIG: configFile });
    old = name === 'pglite' ? await shared.open() : old;
    await old.execute(`update collection_runs set status = 'failed', finished_at = now() where runner_id = 'other'`);
    expect(run.code).toBe(75);
    expect(run.stderr).toMatch(/A collection is running \(run \d+\)/);
  }, 60_000);

  it('exports FOCUS rows that follow the FOCUS 1.2 rules, before and after the rules', async () => {
    expect(await checkFocusExport(fresh, withRules)).toBeGreaterThan(0);
    expect(await checkFocusExport(old, withRules)).toBeGreaterThan(0);
  });
});

/**
 * Team-scoped access end to end: the simulator's company (teams in tags) collected into a real
 * database, the web app with every report, an unscoped admin (adam) and an operator scoped to
 * team ml (mia). Mia walks every report she may open as HTML, JSON and CSV (the inventory and the
 * changes in every kind) and finds no other team's resource; the reports she may not open yet
 * answer 403; her stop of another team's instance is refused and audited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser as Chromium } from 'playwright-core';
import { hashPassword } from '../../src/auth/password.js';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { foldSnapshot } from '../../src/db/versions.js';
import { configuredScopeKeys } from '../../src/auth/configured-scopes.js';
import { ensurePartitionKeys } from '../../src/costing/derive/partition-keys.js';
import type { SnapshotKind } from '../../src/db/schema.js';
import { createLogger } from '../../src/logger.js';
import { allReports } from '../../src/reports/index.js';
import { INVENTORY_KINDS } from '../../src/reports/inventory-kinds.js';
import type { Simulator } from '../../src/simulator/index.js';
import { createWebApp } from '../../src/web/app.js';
import { createWebAuth } from '../../src/web/auth.js';
import { siteSettingsOf } from '../../src/web/site.js';
import { clientOf, seedFromSimulator, SIM_NOW, startTestSimulator, testConfig } from '../actions/helpers.js';
import { launchChromium, skipBrowserTests, watchedPage } from '../helpers/browser.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { Browser, PASSWORDS, SESSION_SECRET, testUsers } from './app.js';

const MIA_PASSWORD = 'mia-ml-operator-pw';
const CHANGE_KINDS = ['instances', 'clusters', 'servers', 'ports', 'keypairs', 'flavors', 'k8s-prices'];

async function scopedConfig(): Promise<Config> {
  const hash = await hashPassword(MIA_PASSWORD, { N: 16384 });
  const mia = { name: 'mia', role: 'operator', password_hash: hash, scope: { by: 'tag:team', values: ['ml'] } };
  // A team-scoped admin: budgets cover every team, so she may not edit them.
  const ada = { name: 'ada', role: 'admin', password_hash: hash, scope: { by: 'tag:team', values: ['ml'] } };
  return testConfig({ users: [...(await testUsers()), mia, ada] }, { CLOUDTALLY_SESSION_SECRET: SESSION_SECRET });
}

interface Served {
  url: string;
  close(): Promise<void>;
}

function startApp(db: Database, config: Config, client: CloudClient): Promise<Served> {
  const logger = createLogger({ level: 'silent' });
  const app = createWebApp({
    reports: allReports(),
    context: () => ({ db, config, now: SIM_NOW }),
    logger,
    demo: true,
    secret: config.auth.sessionSecret ?? undefined,
    auth: createWebAuth({ config, db, logger }),
    actions: { db, client, config, now: () => SIM_NOW, notify: { backoffMs: 5 } },
    budgets: { db, config, now: () => SIM_NOW, channelNames: [] },
    site: siteSettingsOf(config),
  });
  return listenOnFreePort(app);
}

/** The simulator's company collected into a fresh database, the app serving it. */
interface World {
  db: Database;
  sim: Simulator;
  client: CloudClient;
  app: Served;
}

async function openWorld(database: { open(): Promise<Database> }, config: Config): Promise<World> {
  const [db, sim] = await Promise.all([database.open(), startTestSimulator()]);
  const client = clientOf(sim);
  await seedFromSimulator(db, sim, config);
  // As the service does at start: the scopes' tag key gets its cost partitions (here for the history already there).
  await ensurePartitionKeys(db, configuredScopeKeys(config), createLogger({ level: 'silent' }));
  return { db, sim, client, app: await startApp(db, config, client) };
}

async function closeWorld(world: World | undefined): Promise<void> {
  await world?.app.close();
  await world?.client.close();
  await Promise.all([world?.db.close(), world?.sim.close()]);
}

interface Resource extends Record<string, unknown> {
  id: string;
  name: string;
  team: string | null;
  running: boolean;
  project_id: number;
  region_id: number;
}

/** Every instance, cluster and cluster server of the latest snapshots, with its team tag. */
async function resources(db: Database): Promise<Resource[]> {
  return db.query<Resource>(
    `select i.instance_id as id, i.name, i.tags ->> 'team' as team, i.status = 'ACTIVE' as running, i.project_id, i.region_id from instances i
     union all select c.cluster_id, c.cluster_name, c.tags ->> 'team', false, c.project_id, c.region_id from gpu_clusters c
     union all select s.server_id, s.name, s.tags ->> 'team', false, coalesce(s.project_id, 0), coalesce(s.region_id, 0) from gpu_cluster_servers s`,
  );
}

describe.each(testDatabases())('team-scoped access on $name', (database) => {
  let db: Database;
  let sim: Simulator;
  let app: Served;
  let adam: Browser;
  let mia: Browser;
  let foreign: Resource[];
  let own: Resource[];
  let world: World | undefined;

  beforeAll(async () => {
    world = await openWorld(database, await scopedConfig());
    ({ db, sim, app } = world);
    const all = await resources(db);
    foreign = all.filter((r) => r.team !== 'ml');
    own = all.filter((r) => r.team === 'ml');
    adam = new Browser(app.url);
    mia = new Browser(app.url);
    expect((await adam.login('adam', PASSWORDS.adam)).status).toBe(303);
    expect((await mia.login('mia', MIA_PASSWORD)).status).toBe(303);
  }, 120_000);
  afterAll(() => closeWorld(world));

  /** The foreign resource ids (and, in JSON, foreign team values) a body names. */
  function foreignIn(body: string, json: boolean): string[] {
    const found = foreign.filter((r) => body.includes(r.id)).map((r) => `${r.id} (${r.team ?? 'untagged'})`);
    if (json) {
      const values = new Set(foreign.map((r) => r.team).filter((t): t is string => t !== null));
      // As a resource's tag, and as a group of a report grouped by team (cost, overview, monthly, trend, anomalies).
      for (const value of values) if ([`"team":"${value}"`, `"team": "${value}"`, `"group":"${value}"`].some((t) => body.includes(t))) found.push(`team ${value}`);
    }
    return found;
  }

  /** Every URL of a report (HTML, JSON, CSV), in every kind where it has kinds. */
  function urlsOf(name: string): string[] {
    const byTeam = ['overview', 'cost', 'monthly', 'trend', 'anomalies'].includes(name);
    const variants = name === 'inventory' ? INVENTORY_KINDS.map((k) => `kind=${k}`) : name === 'changes' ? CHANGE_KINDS.map((k) => `kind=${k}`) : byTeam ? ['', 'by=tag%3Ateam', 'by=project'] : [''];
    return variants.flatMap((q) => {
      const query = q ? `?${q}` : '';
      return [`/reports/${name}${query}`, `/api/reports/${name}${query}`, `/api/reports/${name}.csv${query}`];
    });
  }

  it('the data has both teams: the test can tell', () => {
    expect(own.length).toBeGreaterThan(5);
    expect(foreign.length).toBeGreaterThan(5);
  });

  it('mia finds no foreign resource or team in any report she opens, as HTML, JSON and CSV, even after adam filled the cache', async () => {
    const listed = JSON.parse((await mia.get('/api/reports')).body) as { reports: Array<{ name: string }> };
    const names = listed.reports.map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(['overview', 'cost', 'monthly', 'budgets', 'anomalies', 'trend', 'tag-hygiene', 'inventory', 'idle', 'changes', 'focus', 'flavors']));
    const problems: string[] = [];
    for (const name of names) {
      for (const url of urlsOf(name)) {
        // The same answer cached for adam first: it must never be served to mia.
        const seen = await adam.get(url);
        expect(seen.status, `adam ${url}`).toBe(200);
        const answer = await mia.get(url);
        if (answer.status !== 200) problems.push(`${url}: ${answer.status}`);
        const leaked = foreignIn(answer.body, url.startsWith('/api/') && !url.includes('.csv'));
        if (leaked.length > 0) problems.push(`${url}: ${leaked.slice(0, 5).join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the search finds mia only her team: a foreign id, name or team value finds nothing foreign, her own ids are found', async () => {
    // The search reads versions: fold the seeded snapshots as a collection would have.
    const seeded = await db.query<{ id: number; kind: SnapshotKind; scope_key: string; taken_at: Date }>(
      'select id, kind, scope_key, taken_at from snapshots where complete and not versioned order by taken_at, id',
    );
    for (const s of seeded) await db.transaction((tx) => foldSnapshot(tx, { id: s.id, kind: s.kind, scopeKey: s.scope_key, takenAt: s.taken_at }));
    type Found = { results: Array<{ kind: string; id: string }> };
    const find = async (who: Browser, q: string): Promise<string[]> => {
      const answer = await who.get(`/api/search?q=${encodeURIComponent(q)}&limit=200`);
      expect(answer.status, q).toBe(200);
      return (JSON.parse(answer.body) as Found).results.map((r) => r.id);
    };
    const foreignIds = new Set(foreign.map((r) => r.id));
    const probes = [...foreign.slice(0, 3).flatMap((r) => [r.id, r.name]), ...new Set(foreign.map((r) => r.team).filter((t): t is string => t !== null))];
    for (const q of probes) {
      expect((await find(mia, q)).filter((id) => foreignIds.has(id)), `mia searching ${q}`).toEqual([]);
    }
    // The same searches find them for adam (unscoped), so the empty answers above are the scope's doing.
    expect(await find(adam, foreign[0]!.id)).toContain(foreign[0]!.id);
    for (const r of own.slice(0, 3)) expect(await find(mia, r.id), r.id).toContain(r.id);
    // Kinds without tags (keypairs, storage keys, image tags) are outside every scope.
    const kinds = new Set((JSON.parse((await mia.get('/api/search?q=a&limit=200')).body) as { results: Array<{ kind: string }> }).results.map((r) => r.kind));
    for (const kind of ['keypair', 'storage_key', 'image_tag']) expect(kinds.has(kind), kind).toBe(false);
  });

  it('the reports mia may not open yet answer 403 and are not in her navigation', async () => {
    const listed = new Set((JSON.parse((await mia.get('/api/reports')).body) as { reports: Array<{ name: string }> }).reports.map((r) => r.name));
    const hidden = allReports().map((r) => r.name).filter((n) => !listed.has(n));
    expect(hidden).toEqual(expect.arrayContaining(['collection-health', 'audit', 'alerts', 'scheduled-stops']));
    for (const name of hidden) {
      const answer = await mia.get(`/api/reports/${name}`);
      expect(answer.status, name).toBe(403);
      expect(answer.body).toContain('team = ml');
      expect((await mia.get(`/api/reports/${name}.csv`)).status, name).toBe(403);
    }
    expect(hidden).not.toContain('search');
    const start = await mia.get('/');
    expect(start.status).toBe(302);
    expect(start.headers.location).toBe('/reports/overview');
    const page = await mia.get('/reports/inventory');
    expect(page.body).toContain('sees team = ml');
    for (const name of hidden) expect(page.body).not.toContain(`href="/reports/${name}"`);
  });

  it('a team-scoped admin may not open or change the budgets editor; an unscoped admin may', async () => {
    const ada = new Browser(app.url);
    expect((await ada.login('ada', MIA_PASSWORD)).status).toBe(303);
    const refused = await ada.get('/budgets/new');
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('you may not edit them');
    expect((await ada.post('/budgets', { name: 'sneaky', by: 'tag:team', value: 'ml', amount: '1', currency: 'EUR', period: 'month' })).status).toBe(403);
    expect(await db.query(`select name from budgets where name = 'sneaky'`)).toEqual([]);
    expect((await adam.get('/budgets/new')).status).toBe(200);
  });

  it("mia's instances are exactly team ml's, and her totals equal adam's for tag team:ml (exact)", async () => {
    const mine = JSON.parse((await mia.get('/api/reports/inventory?kind=instances&limit=1000')).body) as { rows: Array<{ resource_id: string }>; totals: Array<Record<string, string>> };
    const adams = JSON.parse((await adam.get('/api/reports/inventory?kind=instances&tag=team:ml&limit=1000')).body) as typeof mine;
    const ids = own.filter((r) => foreign.every((f) => f.id !== r.id));
    expect(mine.rows.map((r) => r.resource_id).sort()).toEqual(adams.rows.map((r) => r.resource_id).sort());
    expect(mine.rows.length).toBeGreaterThan(0);
    expect(mine.rows.every((r) => ids.some((o) => o.id === r.resource_id))).toBe(true);
    expect(mine.totals.length).toBeGreaterThan(0);
    expect(mine.totals).toEqual(adams.totals);
    const servers = JSON.parse((await mia.get('/api/reports/inventory?kind=servers&limit=1000')).body) as typeof mine;
    const adamsServers = JSON.parse((await adam.get('/api/reports/inventory?kind=servers&tag=team:ml&limit=1000')).body) as typeof mine;
    expect(servers.totals).toEqual(adamsServers.totals);
  });

  it("a delivery naming a scope carries only the team's rows; without one, everyone's", async () => {
    const { renderDelivery } = await import('../../src/notify/deliveries.js');
    const config = await scopedConfig();
    const delivery = (scope: { by: string; key: string; values: string[] } | null) => ({
      id: 'ml-weekly', name: 'ml-weekly', report: 'inventory', params: { kind: 'instances' }, schedule: '0 8 * * 1', notify: ['x'], format: 'csv' as const, scope,
    });
    const scoped = await renderDelivery({ db, config, reports: allReports() }, delivery({ by: 'tag:team', key: 'team', values: ['ml'] }), SIM_NOW);
    const everyone = await renderDelivery({ db, config, reports: allReports() }, delivery(null), SIM_NOW);
    const mlRunning = own.filter((r) => /^[0-9a-f-]{36}$/.test(r.id));
    expect(mlRunning.some((r) => scoped.attachment!.content.includes(r.id))).toBe(true);
    expect(foreignIn(scoped.attachment!.content, false)).toEqual([]);
    expect(foreignIn(everyone.attachment!.content, false).length).toBeGreaterThan(0);
    // Cost figures too, from the team's own resources.
    const cost = await renderDelivery({ db, config, reports: allReports() }, { ...delivery({ by: 'tag:team', key: 'team', values: ['ml'] }), report: 'cost', params: { by: 'tag:team' } }, SIM_NOW);
    expect(cost.attachment!.content).toContain('ml');
    expect(cost.attachment!.content).not.toMatch(/^(web|data|cv|\(untagged\)),/m);
    await expect(renderDelivery({ db, config, reports: allReports() }, { ...delivery({ by: 'tag:team', key: 'team', values: ['ml'] }), report: 'audit', params: {} }, SIM_NOW)).rejects.toThrow(/cannot be delivered for a team scope/);
  });

  it('a scoped operator may stop her own instance; another team\'s is refused with 403 and audited, nothing sent', async () => {
    const theirs = foreign.find((r) => r.running && r.team !== null && /^[0-9a-f-]{36}$/.test(r.id))!;
    const mine = own.find((r) => r.running)!;
    expect(theirs).toBeDefined();
    expect(mine).toBeDefined();
    const ref = (r: Resource) => `${r.project_id}:${r.region_id}:${r.id}`;
    const stopsBefore = sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/stop')).length;

    await mia.get('/reports/idle');
    const confirm = await mia.get(`/actions/stop/confirm?instance=${encodeURIComponent(ref(theirs))}`);
    expect(confirm.status).toBe(403);
    expect(confirm.body).not.toContain(theirs.name);

    const refused = await mia.post('/actions/stop', { instance: ref(theirs), reason: 'not mine to stop', confirm: 'yes' }, { headers: { accept: 'application/json' } });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('team = ml');
    const audit = await db.query<{ actor: string; result: string; instance_id: string; error: string }>(`select actor, result, instance_id, error from audit_log where instance_id = $1`, [theirs.id]);
    expect(audit).toEqual([{ actor: 'mia', result: 'refused', instance_id: theirs.id, error: "outside the user's scope (team = ml)" }]);
    expect(sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/stop')).length).toBe(stopsBefore);

    await mia.get(`/actions/stop/confirm?instance=${encodeURIComponent(ref(mine))}`);
    const stopped = await mia.post('/actions/stop', { instance: ref(mine), reason: 'ours, idle', confirm: 'yes' }, { headers: { accept: 'application/json' } });
    expect(stopped.status).toBe(200);
    expect((JSON.parse(stopped.body) as { counts: { stopped: number } }).counts.stopped).toBe(1);

    // Unscoped adam still stops anyone's instance (no scope check in his way).
    await adam.get(`/actions/stop/confirm?instance=${encodeURIComponent(ref(theirs))}`);
    const his = await adam.post('/actions/stop', { instance: ref(theirs), reason: 'admin stop', confirm: 'yes', dry_run: 'yes' }, { headers: { accept: 'application/json' } });
    expect(his.status).toBe(200);

    // A stop adam scheduled for that instance: mia may not cancel it (refused, audited, still pending).
    await adam.post('/actions/stop/schedule', { instance: ref(theirs), reason: 'stop it tonight', confirm: 'yes' }, { headers: { accept: 'application/json' } });
    const [scheduled] = await db.query<{ id: number }>(`select id from scheduled_stops where instance_id = $1 and status = 'pending'`, [theirs.id]);
    expect(scheduled).toBeDefined();
    await mia.get('/reports/idle');
    const cancel = await mia.post(`/actions/scheduled/${scheduled!.id}/cancel`, {}, { headers: { accept: 'application/json' } });
    expect(cancel.status).toBe(403);
    expect(await db.query(`select status from scheduled_stops where id = $1`, [scheduled!.id])).toEqual([{ status: 'pending' }]);
    expect(await db.query(`select actor, result from audit_log where action = 'cancel_scheduled_stop'`)).toEqual([{ actor: 'mia', result: 'refused' }]);
  });
});

describe.skipIf(skipBrowserTests)('team-scoped access in headless Chromium', () => {
  let db: Database;
  let app: Served;
  let chromium: Chromium;
  let teams: Map<string, string | null>;
  let world: World | undefined;

  beforeAll(async () => {
    world = await openWorld(testDatabases()[0]!, await scopedConfig());
    ({ db, app } = world);
    teams = new Map((await resources(db)).map((r) => [r.id, r.team]));
    chromium = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await chromium?.close();
    await closeWorld(world);
  });

  it("mia's inventory shows only team ml's instances, and the header says her scope", async () => {
    const { page, problems } = await watchedPage(chromium);
    await page.goto(`${app.url}/reports/inventory?kind=instances`);
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('User name').fill('mia');
    await page.getByLabel('Password').fill(MIA_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/reports\/inventory/);
    await expect.poll(() => page.locator('.access-scope').textContent()).toContain('sees team = ml');
    // The ID cell's title holds the full id; the Tags cell shows team=ml on every row.
    const ids = await page.locator('table tbody tr td.uuid').evaluateAll((cells) => cells.map((c) => c.getAttribute('title') ?? ''));
    expect(ids.length).toBeGreaterThan(3);
    for (const id of ids) expect(teams.get(id), id).toBe('ml');
    const tagCells = await page.locator('table tbody tr td.tags').allTextContents();
    expect(tagCells.length).toBe(ids.length);
    for (const text of tagCells) expect(text).toContain('teamml');
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("mia's first screen is the overview of her team's cost: every group in its table and chart is team ml", async () => {
    const { page, problems } = await watchedPage(chromium);
    await page.goto(`${app.url}/login`);
    await page.getByLabel('User name').fill('mia');
    await page.getByLabel('Password').fill(MIA_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/reports\/overview/);
    await page.goto(`${app.url}/reports/overview?by=tag:team`);
    const groups = await page.locator('table.report-table tbody tr td:first-child').allTextContents();
    expect(groups.length).toBeGreaterThan(0);
    for (const g of groups) expect(g.trim()).toBe('ml');
    // Every team appears in the data: the page shows none but hers.
    expect(new Set([...teams.values()].filter((t) => t !== null && t !== 'ml')).size).toBeGreaterThan(0);
    await expect.poll(() => page.locator('body').textContent()).toContain('team = ml only (your access scope)');
    expect(problems).toEqual([]);
    await page.context().close();
  });
});

describe('auth.proxy.team_scopes in the configuration', () => {
  const proxyFile = (teamScopes: unknown) => ({
    auth: { proxy: { header: 'X-Forwarded-User', groups_header: 'X-Forwarded-Groups', trusted_addresses: ['127.0.0.2/32'], role_map: { staff: 'viewer' }, team_scopes: teamScopes } },
    tag_value_case: 'lower',
  });

  it('normalises the scopes like collected tags, defaults unmatched to refuse, and lists every configured scope once', async () => {
    const config = testConfig(proxyFile({ map: { ml: { by: 'tag:Team', values: ['ML', 'ml'] }, vision: { by: 'tag:team', values: ['cv'] }, leads: 'all' } }));
    expect(config.auth.proxy?.teamScopes).toEqual({
      map: { ml: { by: 'tag:team', key: 'team', values: ['ml'] }, vision: { by: 'tag:team', key: 'team', values: ['cv'] }, leads: 'all' },
      unmatched: 'refuse',
    });
    const { configuredAccessScopes } = await import('../../src/auth/configured-scopes.js');
    expect(configuredAccessScopes(config).map((s) => s.values)).toEqual(expect.arrayContaining([['ml'], ['cv']]));
    expect(configuredAccessScopes(config)).toHaveLength(2);
  });

  it('admits a delivery scope only on reports split by team', async () => {
    const { deliverySettings } = await import('../../src/config/deliveries.js');
    const problems: Array<{ path: string; message: string }> = [];
    const raw = (report: string) => ({ report, params: {}, schedule: '0 8 * * 1', notify: ['ops'], format: 'csv' as const, scope: { by: 'tag:Team', values: ['ml'] } });
    const config = testConfig();
    const settings = deliverySettings([raw('inventory'), raw('cost'), raw('audit')], [{ name: 'ops' }], allReports(), problems, config);
    expect(settings[0]!.scope).toEqual({ by: 'tag:team', key: 'team', values: ['ml'] });
    expect(settings[1]!.scope).toEqual({ by: 'tag:team', key: 'team', values: ['ml'] });
    expect(problems).toEqual([{ path: 'deliveries[2].scope', message: 'cannot be given for report "audit": it shows figures of every team and is not split by team' }]);
  });

  it('refuses a bad entry with a clear message', () => {
    expect(() => testConfig(proxyFile({ map: { ml: { by: 'team', values: ['ml'] } } }))).toThrow(/auth\.proxy\.team_scopes\.map\.ml/);
    expect(() => testConfig(proxyFile({ map: { ml: 'everything' } }))).toThrow(/must be "all" or/);
    expect(() => testConfig(proxyFile({ map: {}, unmatched: 'maybe' }))).toThrow(/must be "refuse" or "all"/);
  });
});

describe.each(testDatabases())('proxied users with team scopes on $name', (database) => {
  let world: World | undefined;
  let app: Served;
  let fromProxy: import('undici').Agent;

  beforeAll(async () => {
    const { Agent } = await import('undici');
    const config = testConfig({
      auth: {
        proxy: {
          header: 'X-Forwarded-User',
          groups_header: 'X-Forwarded-Groups',
          trusted_addresses: ['127.0.0.2/32'],
          role_map: { staff: 'operator' },
          team_scopes: {
            map: { ml: { by: 'tag:team', values: ['ml'] }, research: { by: 'tag:team', values: ['research'] }, leads: 'all', prod: { by: 'tag:env', values: ['prod'] } },
          },
        },
      },
    });
    world = await openWorld(database, config);
    app = world.app;
    fromProxy = new Agent({ localAddress: '127.0.0.2' });
  }, 120_000);
  afterAll(async () => {
    await fromProxy?.close();
    await closeWorld(world);
  });

  const as = (user: string, groups: string) => new Browser(app.url, { 'x-forwarded-user': user, 'x-forwarded-groups': groups }, fromProxy);
  const teamsOf = async (browser: Browser) => {
    const answer = await browser.get('/api/reports/inventory?kind=instances&limit=1000');
    expect(answer.status).toBe(200);
    return new Set((JSON.parse(answer.body) as { rows: Array<{ tags: Record<string, string> }> }).rows.map((r) => r.tags.team ?? '(untagged)'));
  };

  it('gives a group member the group\'s team, merges groups of one key, lets "all" win', async () => {
    expect([...(await teamsOf(as('pat', 'staff, ml')))]).toEqual(['ml']);
    expect([...(await teamsOf(as('pat', 'staff, ml, research')))].sort()).toEqual(['ml', 'research']);
    expect((await teamsOf(as('lee', 'staff, ml, leads'))).size).toBeGreaterThan(3);
    const page = await as('pat', 'staff, ml').get('/reports/inventory');
    expect(page.body).toContain('sees team = ml');
  });

  it('refuses a user no entry names, and one whose entries have different tag keys, with a clear page', async () => {
    const stranger = await as('sam', 'staff').get('/reports/inventory');
    expect(stranger.status).toBe(403);
    expect(stranger.body).toContain('no entry of auth.proxy.team_scopes');
    const mixed = await as('kim', 'staff, ml, prod').get('/reports/inventory');
    expect(mixed.status).toBe(403);
    expect(mixed.body).toContain('different tag keys');
  });
});

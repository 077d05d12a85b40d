import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { clientOf, startTestSimulator, testConfig } from '../actions/helpers.js';
import { Browser, configWithUsers, PASSWORDS, startActionsApp, type ActionsApp } from '../auth/app.js';
import { testDatabases } from '../helpers/databases.js';

interface ApiView {
  id: number;
  name: string;
  path: string;
  url: string;
  shared: boolean;
  owner: string;
  mine: boolean;
  created_at: string;
  updated_at: string;
}

describe.each(testDatabases())('saved views over HTTP on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;
  // alice is a viewer, olivia an operator, adam an admin (test/auth/app.ts).
  let alice: Browser;
  let olivia: Browser;
  let adam: Browser;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    app = await startActionsApp({ db, config: await configWithUsers(), client, savedViews: true });
    alice = new Browser(app.url);
    olivia = new Browser(app.url);
    adam = new Browser(app.url);
    await alice.login('alice', PASSWORDS.alice);
    await olivia.login('olivia', PASSWORDS.olivia);
    await adam.login('adam', PASSWORDS.adam);
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  const apiViews = async (b: Browser): Promise<ApiView[]> => {
    const res = await b.get('/api/views', { accept: 'application/json' });
    expect(res.status).toBe(200);
    return (JSON.parse(res.body) as { views: ApiView[] }).views;
  };
  const rowCount = async () => Number((await db.query<{ n: string }>('select count(*) as n from saved_views'))[0]!.n);
  const auditOf = async (action: string) => db.query<{ actor: string; reason: string; result: string }>('select actor, reason, result from audit_log where action = $1 order by id', [action]);

  /** Saves a view through the form as `b` (on the page's CSRF token); returns its id. */
  const save = async (b: Browser, fields: Record<string, string>): Promise<number> => {
    await b.get('/views');
    const res = await b.post('/views', fields);
    expect(res.status, res.body).toBe(303);
    const id = Number(/^\/views\/(\d+)$/.exec(String(res.headers.location))?.[1]);
    expect(id).toBeGreaterThan(0);
    return id;
  };

  it('creates a view from a form, lists it at /api/views and opens its report through its link', async () => {
    const id = await save(alice, { name: '  Expired idle VMs ', path: '/reports/idle?rule=expired' });
    const views = await apiViews(alice);
    const view = views.find((v) => v.id === id)!;
    expect(view).toMatchObject({ name: 'Expired idle VMs', path: '/reports/idle?rule=expired', url: `/views/${id}`, shared: false, owner: 'alice', mine: true });
    expect(new Date(view.created_at).toISOString()).toBe(view.created_at);

    const link = await alice.get(`/views/${id}`);
    expect(link.status).toBe(303);
    expect(link.headers.location).toBe('/reports/idle?rule=expired');
    const report = await alice.get(String(link.headers.location));
    expect(report.status).toBe(200);
    // The navigation lists it, and the report page offers to save itself.
    expect(report.body).toContain(`<a href="/views/${id}">Expired idle VMs</a>`);
    expect(report.body).toContain('<input type="hidden" name="path" value="/reports/idle?rule=expired">');

    const audit = await auditOf('view_create');
    expect(audit.at(-1)).toMatchObject({ actor: 'alice', result: 'view_created' });
    expect(audit.at(-1)!.reason).toContain('"Expired idle VMs" private: /reports/idle?rule=expired');
  });

  it("keeps a private view from everyone else: not listed, its link is 404, and it cannot be changed or deleted", async () => {
    const id = await save(alice, { name: 'Private inventory', path: '/reports/inventory' });
    expect((await apiViews(olivia)).map((v) => v.id)).not.toContain(id);
    expect((await olivia.get(`/views/${id}`)).status).toBe(404);
    await adam.get('/views');
    expect((await adam.get(`/views/${id}`)).status).toBe(404);
    expect((await adam.post(`/views/${id}`, { name: 'Mine now' }, { headers: { accept: 'application/json' } })).status).toBe(404);
    expect((await adam.post(`/views/${id}/delete`, {}, { headers: { accept: 'application/json' } })).status).toBe(404);
    expect((await apiViews(alice)).find((v) => v.id === id)?.name).toBe('Private inventory');
  });

  it('shares a view with another user, who opens it but may not rename or delete it; an admin may', async () => {
    const id = await save(alice, { name: 'Team audit', path: '/reports/audit', shared: '1' });
    const seen = (await apiViews(olivia)).find((v) => v.id === id);
    expect(seen).toMatchObject({ shared: true, owner: 'alice', mine: false });
    const page = await olivia.get('/views');
    expect(page.body).toContain(`<a href="/views/${id}">Team audit</a>`);
    expect((await olivia.get(`/views/${id}`)).headers.location).toBe('/reports/audit');

    const before = await rowCount();
    const rename = await olivia.post(`/views/${id}`, { name: 'Olivia was here' }, { headers: { accept: 'application/json' } });
    expect(rename.status).toBe(403);
    expect(JSON.parse(rename.body).message).toContain('only its owner or an admin');
    const del = await olivia.post(`/views/${id}/delete`, {});
    expect(del.status).toBe(403);
    expect(await rowCount()).toBe(before);
    expect((await apiViews(alice)).find((v) => v.id === id)?.name).toBe('Team audit');

    await adam.get('/views');
    const renamed = await adam.post(`/views/${id}`, { name: 'Audit (team)' });
    expect(renamed.status).toBe(303);
    expect((await apiViews(alice)).find((v) => v.id === id)?.name).toBe('Audit (team)');
    expect((await auditOf('view_change')).at(-1)).toMatchObject({ actor: 'adam', result: 'view_changed' });
    const deleted = await adam.post(`/views/${id}/delete`, {});
    expect(deleted.status).toBe(303);
    expect((await apiViews(alice)).map((v) => v.id)).not.toContain(id);
    expect((await olivia.get(`/views/${id}`)).status).toBe(404);
    expect((await auditOf('view_delete')).at(-1)).toMatchObject({ actor: 'adam', result: 'view_deleted' });
  });

  it('lets the owner rename, unshare (a form with the box unticked) and delete their view', async () => {
    const id = await save(olivia, { name: 'Scheduled', path: '/reports/scheduled-stops', shared: 'on' });
    expect((await apiViews(alice)).map((v) => v.id)).toContain(id);
    await olivia.get('/views');
    const unshare = await olivia.post(`/views/${id}`, { name: 'Scheduled stops', shared_field: '1' });
    expect(unshare.status).toBe(303);
    expect((await apiViews(olivia)).find((v) => v.id === id)).toMatchObject({ name: 'Scheduled stops', shared: false });
    expect((await apiViews(alice)).map((v) => v.id)).not.toContain(id);
    expect((await alice.get(`/views/${id}`)).status).toBe(404);
    const reshare = await olivia.post(`/views/${id}`, { shared: '1' }, { headers: { accept: 'application/json' } });
    expect(reshare.status).toBe(200);
    expect((await apiViews(alice)).find((v) => v.id === id)?.shared).toBe(true);
    await olivia.get('/views');
    expect((await olivia.post(`/views/${id}/delete`, {})).status).toBe(303);
    expect((await apiViews(olivia)).map((v) => v.id)).not.toContain(id);
  });

  it('refuses bad paths, unknown reports, bad parameters, bad names and duplicates with 400/409, storing nothing', async () => {
    await save(alice, { name: 'Duplicate me', path: '/reports/inventory' });
    const before = await rowCount();
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ name: 'x', path: 'https://evil.example/reports/idle' }, 400, 'must be a path on this site'],
      [{ name: 'x', path: '//evil.example/reports/idle' }, 400, 'must be a path on this site'],
      [{ name: 'x', path: '/reports\\idle' }, 400, 'backslashes'],
      [{ name: 'x', path: '/budgets/new' }, 400, 'must be a report page'],
      [{ name: 'x', path: '/reports/nope?a=1' }, 400, 'no report named &quot;nope&quot;'],
      [{ name: 'x', path: '/reports/idle?rule=sometimes' }, 400, 'rule must be one of'],
      [{ name: 'x', path: `/reports/idle?limit=${'9'.repeat(20)}` }, 400, 'limit must be'],
      [{ name: 'x', path: `/reports/inventory?q=${'a'.repeat(2000)}` }, 400, 'at most 2000'],
      [{ name: 'n'.repeat(101), path: '/reports/idle' }, 400, 'at most 100 characters'],
      [{ name: '   ', path: '/reports/idle' }, 400, 'name: is required'],
      [{ name: 'DUPLICATE ME', path: '/reports/idle' }, 409, 'already have a view named'],
    ];
    for (const [fields, status, message] of cases) {
      await alice.get('/views');
      const res = await alice.post('/views', fields);
      expect(res.status, JSON.stringify(fields).slice(0, 80)).toBe(status);
      // The form page shows the problem and keeps what was typed.
      expect(res.body).toContain(message);
      expect(res.body).toContain('Nothing was saved');
    }
    const json = await alice.post('/views', { name: 'x', path: '/reports/idle?rule=sometimes' }, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(400);
    expect(JSON.parse(json.body)).toMatchObject({ code: 'invalid_view_path', errors: [{ field: 'body.path' }] });
    expect(await rowCount()).toBe(before);
  });

  it('refuses a post without a CSRF token, and a duplicate rename', async () => {
    const before = await rowCount();
    const res = await alice.post('/views', { name: 'No token', path: '/reports/idle' }, { csrf: null });
    expect(res.status).toBe(403);
    expect(await rowCount()).toBe(before);
    const a = await save(alice, { name: 'First', path: '/reports/idle' });
    await save(alice, { name: 'Second', path: '/reports/idle' });
    await alice.get('/views');
    const clash = await alice.post(`/views/${a}`, { name: 'second' }, { headers: { accept: 'application/json' } });
    expect(clash.status).toBe(409);
    // Another user may use the same name.
    await save(olivia, { name: 'First', path: '/reports/idle' });
    expect((await alice.get('/views/abc')).status).toBe(404);
    expect((await alice.get('/views/999999')).status).toBe(404);
  });
});

describe('saved views in local-only mode (no users)', () => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;

  beforeAll(async () => {
    [db, sim] = await Promise.all([testDatabases()[0]!.open(), startTestSimulator()]);
    client = clientOf(sim);
    app = await startActionsApp({ db, config: testConfig({}), client, savedViews: true });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  it('saves, lists, opens and deletes views owned by "local"', async () => {
    const me = new Browser(app.url);
    expect((await me.get('/views')).status).toBe(200);
    const saved = await me.post('/views', { name: 'Here', path: '/reports/inventory', shared: '0' });
    expect(saved.status).toBe(303);
    const { views } = JSON.parse((await me.get('/api/views')).body) as { views: Array<{ id: number; owner: string; mine: boolean; shared: boolean }> };
    expect(views).toEqual([expect.objectContaining({ owner: 'local', mine: true, shared: false })]);
    expect((await me.get(`/views/${views[0]!.id}`)).headers.location).toBe('/reports/inventory');
    await me.get('/views');
    expect((await me.post(`/views/${views[0]!.id}/delete`, {})).status).toBe(303);
    expect(JSON.parse((await me.get('/api/views')).body).views).toEqual([]);
  });
});

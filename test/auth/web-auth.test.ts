import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { clientOf, runningVms, seedFromSimulator, startTestSimulator, testConfig } from '../actions/helpers.js';
import { passwordCheckLimiter } from '../../src/auth/index.js';
import { Browser, configWithUsers, PASSWORDS, startActionsApp, type ActionsApp } from './app.js';

describe.each(testDatabases())('sign-in and roles on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let app: ActionsApp;
  // One check at a time and none waiting, so a test can hold the only slot.
  const passwordChecks = passwordCheckLimiter(1, 0);

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    const config = await configWithUsers({ auth: { login_rate_limit: { max_failures_per_user: 50, max_failures_per_ip: 100 } } });
    await seedFromSimulator(db, sim, config);
    app = await startActionsApp({ db, config, client, passwordChecks });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  const auditCount = async () => Number((await db.query<{ n: string }>('select count(*) as n from audit_log'))[0]!.n);
  const stopPosts = () => sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/stop'));
  const twoRefs = () => runningVms(sim).slice(0, 2).map((i) => `${i.projectId}:${i.regionId}:${i.id}`);

  it('sends pages without a session to the login page, and answers 401 to the API', async () => {
    const anon = new Browser(app.url);
    const page = await anon.get('/reports/idle?rule=expired');
    expect(page.status).toBe(303);
    expect(page.headers.location).toBe('/login?next=%2Freports%2Fidle%3Frule%3Dexpired');
    const login = await anon.get('/login?next=%2Freports%2Fidle');
    expect(login.status).toBe(200);
    expect(login.body).toContain('<form method="post" action="/login"');
    expect(login.body).not.toContain('idle-table');
    for (const path of ['/api/reports', '/api/reports/idle', '/api/reports/audit.csv']) {
      const api = await anon.get(path);
      expect(api.status, path).toBe(401);
      expect(JSON.parse(api.body)).toMatchObject({ code: 'unauthenticated' });
    }
    expect((await anon.get('/static/app.css')).status).toBe(200);
  });

  it('refuses a wrong password, signs in with the right one into an httpOnly SameSite cookie', async () => {
    const b = new Browser(app.url);
    const wrong = await b.login('olivia', 'not-her-password');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('Wrong user name or password.');
    const unknown = await b.login('mallory', 'whatever');
    expect(unknown.status).toBe(401);
    expect(unknown.body).toContain('Wrong user name or password.');

    const ok = await b.login('Olivia', PASSWORDS.olivia, '/reports/audit');
    expect(ok.status).toBe(303);
    expect(ok.headers.location).toBe('/reports/audit');
    const setCookie = ([] as string[]).concat(ok.headers['set-cookie'] as string | string[]);
    const session = setCookie.find((c) => c.startsWith('cloudtally.session='))!;
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).toMatch(/Max-Age=43200/);
    const page = await b.get('/reports/audit');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signed in as <strong>olivia</strong> (operator)');
    expect((await b.get('/api/reports/idle')).status).toBe(200);
    // An open redirect is not possible through `next`.
    const evil = await new Browser(app.url).login('olivia', PASSWORDS.olivia, '//evil.example.com/');
    expect(evil.headers.location).toBe('/');
  });

  it('answers 503 with Retry-After when too many password checks are under way, counting no failure', async () => {
    let release!: () => void;
    const held = passwordChecks.run(() => new Promise<void>((resolve) => (release = resolve)));
    const busy = await new Browser(app.url).login('olivia', PASSWORDS.olivia);
    expect(busy.status).toBe(503);
    expect(busy.headers['retry-after']).toBe('5');
    expect(busy.body).toContain('Too many sign-ins at once. Try again in a few seconds.');
    expect(busy.headers['set-cookie'] ?? []).not.toContainEqual(expect.stringMatching(/^cloudtally\.session=/));
    release();
    await held;
    expect((await new Browser(app.url).login('olivia', PASSWORDS.olivia)).status).toBe(303);
  });

  it('ends the session on logout: the old cookie no longer works', async () => {
    const b = new Browser(app.url);
    await b.login('alice', PASSWORDS.alice);
    const stolen = b.jar.copy();
    expect((await b.get('/reports/idle')).status).toBe(200);
    const out = await b.post('/logout', {});
    expect(out.status).toBe(303);
    expect(out.headers.location).toBe('/login?logged_out=1');
    expect((await b.get('/login?logged_out=1')).body).toContain('You are signed out.');

    const replay = new Browser(app.url);
    for (const [k, v] of stolen.cookies) replay.jar.cookies.set(k, v);
    const again = await replay.get('/reports/idle');
    expect(again.status).toBe(303);
    expect(again.headers.location).toMatch(/^\/login/);
  });

  it('gives a viewer read and export, and 403 on every action, with nothing done', async () => {
    const viewer = new Browser(app.url);
    await viewer.login('alice', PASSWORDS.alice);
    const idle = await viewer.get('/reports/idle');
    expect(idle.status).toBe(200);
    expect(idle.body).toContain('idle-table');
    expect(idle.body).not.toContain('type="checkbox"');
    expect(idle.body).not.toContain('Stop selected');
    expect(idle.body).not.toContain('/actions/stop/confirm');
    expect(idle.body).not.toContain('Collect now');
    expect((await viewer.get('/api/reports/idle.csv')).status).toBe(200);
    expect((await viewer.get('/reports/scheduled-stops')).body).not.toContain('Cancel stop');

    const before = await auditCount();
    sim.clearRequestLog();
    const refs = twoRefs();
    const attempts: Array<[string, () => Promise<{ status: number; body: string }>]> = [
      ['GET confirm', () => viewer.get(`/actions/stop/confirm?instance=${encodeURIComponent(refs[0]!)}`)],
      ['POST confirm', () => viewer.post('/actions/stop/confirm', { instance: refs })],
      ['POST stop', () => viewer.post('/actions/stop', { instance: refs, reason: 'viewer tries', confirm: 'yes' })],
      ['POST dry run', () => viewer.post('/actions/stop', { instance: refs, reason: 'viewer tries', confirm: 'yes', dry_run: 'on' })],
      ['POST schedule', () => viewer.post('/actions/stop/schedule', { instance: refs, reason: 'viewer tries', confirm: 'yes' })],
      ['POST cancel', () => viewer.post('/actions/scheduled/1/cancel', {})],
      ['POST collect', () => viewer.post('/actions/collect', { return_to: '/' })],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt();
      expect(res.status, what).toBe(403);
      expect(res.body, what).toContain('needs the');
    }
    expect(await auditCount()).toBe(before);
    expect(stopPosts()).toEqual([]);
    expect(app.collectCalls).toBe(0);
  });

  it('refuses a state-changing request without a valid CSRF token (403), doing nothing', async () => {
    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia);
    await operator.get('/reports/idle');
    const before = await auditCount();
    sim.clearRequestLog();
    const fields = { instance: twoRefs(), reason: 'no token', confirm: 'yes' };
    for (const csrf of [null, 'forged-token', ''] as const) {
      const res = await operator.post('/actions/stop', fields, { csrf });
      expect(res.status).toBe(403);
      expect(res.body).toContain('Missing or invalid CSRF token');
    }
    // A token made for another session is no good either.
    const other = new Browser(app.url);
    await other.login('adam', PASSWORDS.adam);
    await other.get('/reports/idle');
    expect((await operator.post('/actions/stop', fields, { csrf: other.token })).status).toBe(403);
    expect(await auditCount()).toBe(before);
    expect(stopPosts()).toEqual([]);
  });

  it('lets an operator confirm, dry-run and stop, and shows each result and the audit entries', async () => {
    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia);
    await operator.get('/reports/idle');
    const refs = twoRefs();
    const confirm = await operator.post('/actions/stop/confirm', { instance: refs, return_to: '/reports/idle' });
    expect(confirm.status).toBe(200);
    for (const ref of refs) expect(confirm.body).toContain(`value="${ref}"`);
    expect(confirm.body).toContain('This cannot be undone from cloudtally.');
    expect(confirm.body).toContain('Saved per hour');
    expect(confirm.body).not.toContain('Collect now');
    // From an inventory row: a link to the confirmation of one instance (it changes nothing).
    const fromInventory = await operator.get(`/actions/stop/confirm?instance=${encodeURIComponent(refs[0]!)}`);
    expect(fromInventory.status).toBe(200);
    expect(fromInventory.body).toContain('Stop 1 instance?');
    expect(fromInventory.body).toContain(`value="${refs[0]}"`);
    expect((await operator.get('/actions/stop/confirm?instance=not-a-ref')).status).toBe(400);

    sim.clearRequestLog();
    const noReason = await operator.post('/actions/stop', { instance: refs, reason: '', confirm: 'yes' });
    expect(noReason.status).toBe(400);
    expect(noReason.body).toContain('Nothing was done: give a reason');
    const dry = await operator.post('/actions/stop', { instance: refs, reason: 'check first', confirm: 'yes', dry_run: 'on' });
    expect(dry.status).toBe(200);
    expect(dry.body).toContain('Dry run: nothing was changed');
    expect(stopPosts()).toEqual([]);

    const done = await operator.post('/actions/stop', { instance: refs, reason: 'idle since March', confirm: 'yes' });
    expect(done.status).toBe(200);
    expect(done.body.match(/class="result">Stopped</g)).toHaveLength(2);
    expect(stopPosts()).toHaveLength(2);
    for (const ref of refs) expect(sim.state.instance(ref.split(':')[2]!)!.status).toBe('SHUTOFF');

    const audit = await operator.get('/api/reports/audit?action=stop&actor=olivia');
    const rows = (JSON.parse(audit.body) as { rows: Array<{ instance_id: string; dry_run: boolean; result: string }> }).rows;
    expect(rows.map((r) => [r.instance_id, r.dry_run, r.result]).sort()).toEqual(
      refs.flatMap((ref) => [[ref.split(':')[2], false, 'stopped'], [ref.split(':')[2], true, 'would_stop']]).sort(),
    );
    const csv = await operator.get('/api/reports/audit.csv?result=stopped');
    expect(csv.status).toBe(200);
    expect(csv.body.split('\r\n').filter(Boolean)).toHaveLength(3); // header + 2
  });

  it('lets an operator schedule a stop with a grace period, see its due time, and cancel it', async () => {
    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia);
    const idle = await operator.get('/api/reports/idle');
    const candidate = (JSON.parse(idle.body) as { rows: Array<{ ref: string; scheduled_stop_at: string | null }> }).rows.find((r) => r.scheduled_stop_at === null)!;
    await operator.get('/reports/idle');
    const scheduled = await operator.post('/actions/stop/schedule', { instance: candidate.ref, reason: 'warn the owner first', confirm: 'yes', grace_hours: '6' });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toContain('1 stop scheduled');
    expect(scheduled.body).toContain('2024-05-17 16:30 UTC');

    const after = (JSON.parse((await operator.get('/api/reports/idle')).body) as { rows: Array<{ ref: string; scheduled_stop_at: string | null }> }).rows;
    expect(after.find((r) => r.ref === candidate.ref)!.scheduled_stop_at).toBe('2024-05-17T16:30:00.000Z');

    const list = await operator.get('/reports/scheduled-stops');
    const id = /action="\/actions\/scheduled\/(\d+)\/cancel"/.exec(list.body)?.[1];
    expect(id).toBeDefined();
    const cancel = await operator.post(`/actions/scheduled/${id}/cancel`, { return_to: '/reports/scheduled-stops' });
    expect(cancel.status).toBe(303);
    expect(cancel.headers.location).toBe('/reports/scheduled-stops');
    const back = await operator.get('/reports/scheduled-stops?status=cancelled');
    expect(back.body).toContain(`Scheduled stop #${id} of`);
    expect(back.body).toContain('cancelled');
    expect(back.body).not.toContain('Cancel stop');
    const rows = await db.query<{ action: string; result: string }>(`select action, result from audit_log where action <> 'stop' order by id`);
    expect(rows).toEqual([
      { action: 'schedule_stop', result: 'scheduled' },
      { action: 'cancel_scheduled_stop', result: 'cancelled' },
    ]);
  });

  it('schedules nothing when "Dry run" is ticked, and says so', async () => {
    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia);
    const idle = JSON.parse((await operator.get('/api/reports/idle')).body) as { rows: Array<{ ref: string; scheduled_stop_at: string | null }> };
    const candidate = idle.rows.find((r) => r.scheduled_stop_at === null)!;
    await operator.get('/reports/idle');
    const stopsBefore = await db.query('select id from scheduled_stops');
    const auditBefore = await auditCount();
    const refused = await operator.post('/actions/stop/schedule', { instance: candidate.ref, reason: 'just looking', confirm: 'yes', dry_run: 'on' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('a dry run cannot schedule a stop');
    expect(await db.query('select id from scheduled_stops')).toEqual(stopsBefore);
    expect(await auditCount()).toBe(auditBefore);
  });

  it('offers operators a stop on every running instance and server of the inventory, and shows a scheduled stop due there', async () => {
    type InventoryRow = { ref?: string; stop_href?: string | null; running: boolean; resource_id: string; scheduled_stop_at: string | null };
    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia, '/reports/inventory');
    for (const kind of ['instances', 'servers']) {
      const rows = (JSON.parse((await operator.get(`/api/reports/inventory?kind=${kind}&limit=1000`)).body) as { rows: InventoryRow[] }).rows;
      const running = rows.filter((r) => r.running);
      expect(running.length, kind).toBeGreaterThan(0);
      if (kind === 'instances') expect(rows.some((r) => !r.running)).toBe(true); // every seeded server runs
      for (const r of rows) {
        expect(r.ref).toMatch(new RegExp(`^\\d+:\\d+:${r.resource_id}$`));
        expect(r.stop_href).toBe(r.running ? `/actions/stop/confirm?instance=${encodeURIComponent(r.ref!)}` : null);
      }
      expect(rows.length, kind).toBeLessThanOrEqual(500);
      const html = (await operator.get(`/reports/inventory?kind=${kind}&limit=500`)).body;
      expect(html).toContain('action="/actions/stop/confirm"');
      expect(html.match(/class="stop-link"/g)).toHaveLength(running.length);
      expect(html.match(/type="checkbox" name="instance"/g)).toHaveLength(running.length);
      for (const r of running) expect(html).toContain(`href="${r.stop_href}"`);
      const confirm = await operator.get(running[0]!.stop_href!);
      expect(confirm.status).toBe(200);
      expect(confirm.body).toContain('Stop 1 instance?');
      expect(confirm.body).toContain(`value="${running[0]!.ref}"`);
      // Followed from the inventory (the same-origin referrer policy sends the page): back there.
      const fromInventory = await operator.get(running[0]!.stop_href!, { referer: `${app.url}/reports/inventory?kind=${kind}&limit=500` });
      expect(fromInventory.body).toContain(`name="return_to" value="/reports/inventory?kind=${kind}&amp;limit=500"`);
    }
    // Several at once: the inventory's form posts the selected refs to the same confirmation.
    const instances = (JSON.parse((await operator.get('/api/reports/inventory?kind=instances&state=running')).body) as { rows: InventoryRow[] }).rows;
    const picked = instances.slice(0, 3).map((r) => r.ref!);
    await operator.get('/reports/inventory?kind=instances&state=running');
    const many = await operator.post('/actions/stop/confirm', { instance: picked, return_to: '/reports/inventory?kind=instances' });
    expect(many.status).toBe(200);
    expect(many.body).toContain('Stop 3 instances?');
    // "Stop selected…" with nothing ticked: back to the same report, which says why.
    await operator.get('/reports/inventory?kind=instances&state=running');
    const none = await operator.post('/actions/stop/confirm', { return_to: '/reports/inventory?kind=instances&state=running' });
    expect(none.status).toBe(303);
    expect(none.headers.location).toBe('/reports/inventory?kind=instances&state=running');
    const back = await operator.get(String(none.headers.location));
    expect(back.body).toContain('Nothing was stopped: tick at least one instance');
    // Without the form's return path (an API client), still a 400 naming the field.
    expect((await operator.post('/actions/stop/confirm', {})).status).toBe(400);

    const marked = instances.find((r) => r.scheduled_stop_at === null)!;
    const scheduled = await operator.post('/actions/stop/schedule', { instance: marked.ref!, reason: 'expired sandbox', confirm: 'yes', grace_hours: '6' });
    expect(scheduled.status).toBe(200);
    const after = (JSON.parse((await operator.get(`/api/reports/inventory?kind=instances&q=${marked.resource_id}`)).body) as { rows: InventoryRow[] }).rows;
    expect(after.map((r) => [r.resource_id, r.scheduled_stop_at])).toEqual([[marked.resource_id, '2024-05-17T16:30:00.000Z']]);
    const sorted = (JSON.parse((await operator.get('/api/reports/inventory?kind=instances&sort=scheduled_stop_at&dir=desc&limit=1')).body) as { rows: InventoryRow[] }).rows;
    expect(sorted[0]!.resource_id).toBe(marked.resource_id);
    expect((await operator.get(`/reports/inventory?kind=instances&q=${marked.resource_id}`)).body).toContain('<time datetime="2024-05-17T16:30:00.000Z">');
    const csv = (await operator.get(`/api/reports/inventory.csv?kind=instances&q=${marked.resource_id}`)).body;
    expect(csv).toContain('Scheduled stop');
    expect(csv).toContain('2024-05-17T16:30:00.000Z');
    const id = (await db.query<{ id: number }>(`select id from scheduled_stops where instance_id = $1 and status = 'pending'`, [marked.resource_id]))[0]!.id;
    await operator.get('/reports/scheduled-stops');
    expect((await operator.post(`/actions/scheduled/${id}/cancel`, { return_to: '/reports/scheduled-stops' })).status).toBe(303);
    const cancelled = (JSON.parse((await operator.get(`/api/reports/inventory?kind=instances&q=${marked.resource_id}`)).body) as { rows: InventoryRow[] }).rows;
    expect(cancelled[0]!.scheduled_stop_at).toBeNull();

    const viewer = new Browser(app.url);
    await viewer.login('alice', PASSWORDS.alice, '/reports/inventory');
    const seen = (await viewer.get('/reports/inventory?kind=instances')).body;
    expect(seen).toContain('<table');
    expect(seen).not.toContain('stop-link');
    expect(seen).not.toContain('name="instance"');
    expect(seen).not.toContain('/actions/stop/confirm');
  });

  it('shows collect-now to admins only, and refuses it to operators', async () => {
    const admin = new Browser(app.url);
    await admin.login('adam', PASSWORDS.adam);
    const page = await admin.get('/reports/idle');
    expect(page.body).toContain('Collect now');
    expect((await admin.post('/actions/collect', { return_to: '/reports/idle' })).status).toBe(303);
    expect(app.collectCalls).toBe(1);

    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia);
    expect((await operator.get('/reports/idle')).body).not.toContain('Collect now');
    expect((await operator.post('/actions/collect', { return_to: '/' })).status).toBe(403);
    expect(app.collectCalls).toBe(1);
  });
});

describe.each(testDatabases())('login rate limit on $name', ({ open }) => {
  let db: Database;
  let app: ActionsApp;
  let sim: Simulator;
  let client: CloudClient;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    const config = await configWithUsers({ auth: { login_rate_limit: { max_failures_per_user: 3, max_failures_per_ip: 6, window_minutes: 15 } } });
    app = await startActionsApp({ db, config, client });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  it('answers 429 after N wrong passwords for a user, then for the whole address', async () => {
    const b = new Browser(app.url);
    for (let i = 0; i < 3; i++) expect((await b.login('alice', `wrong-${i}`)).status).toBe(401);
    const limited = await b.login('alice', PASSWORDS.alice); // even the right password now
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(800);
    expect(limited.body).toContain('Too many failed sign-ins. Try again in 15 minutes.');

    // Another user from the same address is still let in (per-user limit)...
    expect((await new Browser(app.url).login('olivia', PASSWORDS.olivia)).status).toBe(303);
    // ...until the address itself has failed too often.
    for (let i = 0; i < 3; i++) expect((await b.login(`nobody-${i}`, 'x')).status).toBe(401);
    expect((await new Browser(app.url).login('adam', PASSWORDS.adam)).status).toBe(429);
  });
});

describe.each(testDatabases())('trusted reverse proxy on $name', ({ open }) => {
  let db: Database;
  let app: ActionsApp;
  let sim: Simulator;
  let client: CloudClient;
  let fromProxy: Agent;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    const config = testConfig({
      auth: {
        proxy: {
          header: 'X-Forwarded-User',
          groups_header: 'X-Forwarded-Groups',
          trusted_addresses: ['127.0.0.2/32'],
          role_map: { ops: 'operator', finance: 'viewer', root: 'admin' },
        },
      },
    });
    await seedFromSimulator(db, sim, config);
    app = await startActionsApp({ db, config, client });
    // The "proxy": connections from 127.0.0.2 (loopback, so it reaches the app on 127.0.0.1).
    fromProxy = new Agent({ localAddress: '127.0.0.2' });
  });
  afterAll(async () => {
    await fromProxy?.close();
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  const headers = (user: string, groups?: string) => ({ 'x-forwarded-user': user, ...(groups ? { 'x-forwarded-groups': groups } : {}) });

  it('ignores the header from any other address', async () => {
    const direct = new Browser(app.url, headers('root'));
    const page = await direct.get('/reports/idle');
    expect(page.status).toBe(303);
    expect(page.headers.location).toMatch(/^\/login/);
    expect((await direct.get('/api/reports/idle')).status).toBe(401);
    expect((await direct.get('/login')).body).toContain('Single sign-on');
  });

  it('honours it from the trusted proxy, with the role its mapping gives', async () => {
    const ops = new Browser(app.url, headers('pat', 'staff, ops'), fromProxy);
    const page = await ops.get('/reports/idle');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Signed in as <strong>pat</strong> (operator)');
    expect(page.body).toContain('Stop selected');
    expect(page.body).not.toContain('Sign out');

    const finance = new Browser(app.url, headers('fay', 'finance'), fromProxy);
    await finance.get('/reports/idle');
    expect((await finance.post('/actions/stop/confirm', { instance: '1:1:x' })).status).toBe(403);

    const stranger = await new Browser(app.url, headers('sam', 'contractors'), fromProxy).get('/reports/idle');
    expect(stranger.status).toBe(403);
    expect(stranger.body).toContain('has no role in cloudtally');
    // Without the header, the proxy's own connection is nobody.
    expect((await new Browser(app.url, {}, fromProxy).get('/api/reports/idle')).status).toBe(401);
  });
});

describe.each(testDatabases())('local-only mode on $name', ({ open }) => {
  let db: Database;
  let app: ActionsApp;
  let sim: Simulator;
  let client: CloudClient;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    app = await startActionsApp({ db, config: testConfig(), client });
  });
  afterAll(async () => {
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  it('lets this machine in as admin without a login, and says so on every page', async () => {
    const b = new Browser(app.url);
    for (const path of ['/reports/idle', '/reports/audit', '/reports/scheduled-stops']) {
      const page = await b.get(path);
      expect(page.status, path).toBe(200);
      expect(page.body, path).toContain('Local-only mode: no users or trusted proxy are configured');
      expect(page.body, path).toContain('Signed in as <strong>local</strong> (admin)');
      expect(page.body, path).toContain('Collect now');
    }
    expect((await b.get('/login')).status).toBe(303);
  });
});

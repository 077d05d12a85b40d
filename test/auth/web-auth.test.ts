import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { clientOf, runningVms, seedFromSimulator, startTestSimulator, testConfig } from '../actions/helpers.js';
import { passwordCheckLimiter } from '../../src/auth/index.js';
import { setCookies } from '../helpers/cookies.js';
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
    const config = await configWithUsers({ auth: { login_throttle: { free_failures_per_account: 50, free_failures_per_address: 100 } } });
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
    // Plain HTTP (no https CLOUDTALLY_PUBLIC_URL): no Secure, no __Host- prefix, no HSTS.
    for (const cookie of setCookies(ok.headers['set-cookie'])) {
      expect(cookie.name).not.toMatch(/^__Host-/);
      expect(cookie.attributes.secure, cookie.name).toBeUndefined();
    }
    expect(ok.headers['strict-transport-security']).toBeUndefined();
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
    expect(idle.body).not.toContain('type="checkbox" name="instance"');
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

  it('refuses a write sent by another site even with a valid CSRF token (403), and takes it from this one', async () => {
    // adam (admin): the next test counts olivia's audit entries.
    const operator = new Browser(app.url);
    await operator.login('adam', PASSWORDS.adam);
    await operator.get('/reports/idle');
    const before = await auditCount();
    sim.clearRequestLog();
    const fields = { instance: twoRefs(), reason: 'from another site', confirm: 'yes' };
    const token = operator.token;
    const fromElsewhere: Array<Record<string, string>> = [
      { origin: 'http://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { origin: app.url.replace('127.0.0.1', 'localhost') }, // another origin, though the same machine
    ];
    for (const headers of fromElsewhere) {
      const res = await operator.post('/actions/stop', fields, { csrf: token, headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body).toContain('was sent by another site');
    }
    expect(await auditCount()).toBe(before);
    expect(stopPosts()).toEqual([]);
    // The login form too: another site cannot sign a browser in (login CSRF).
    const b = new Browser(app.url);
    await b.get('/login');
    const crossLogin = await b.post('/login', { username: 'olivia', password: PASSWORDS.olivia }, { headers: { origin: 'https://evil.example' } });
    expect(crossLogin.status).toBe(403);
    expect(setCookies(crossLogin.headers['set-cookie']).map((c) => c.name)).not.toContain('cloudtally.session');

    // From this site (what a browser sends on its own form): done.
    const dry = await operator.post('/actions/stop', { ...fields, dry_run: 'on' }, { csrf: token, headers: { origin: app.url, 'sec-fetch-site': 'same-origin' } });
    expect(dry.status).toBe(200);
    expect(dry.body).toContain('Dry run: nothing was changed');
  });

  it('refuses a stop form that sends dry_run, confirm or reason twice (400), stopping nothing', async () => {
    const operator = new Browser(app.url);
    await operator.login('olivia', PASSWORDS.olivia);
    await operator.get('/reports/idle');
    const refs = twoRefs();
    const before = await auditCount();
    sim.clearRequestLog();
    const repeated: Array<Record<string, string[]>> = [{ dry_run: ['on', 'on'] }, { confirm: ['yes', 'yes'] }, { reason: ['idle', 'since March'] }];
    for (const twice of repeated) {
      const answer = await operator.post('/actions/stop', { instance: refs, reason: 'check first', confirm: 'yes', ...twice });
      expect(answer.status, JSON.stringify(twice)).toBe(400);
      expect(answer.body).toContain(`${Object.keys(twice)[0]} was sent 2 times; it takes one value`);
    }
    expect(stopPosts()).toEqual([]);
    expect(await auditCount()).toBe(before);
    expect((await operator.post('/login', { username: ['olivia', 'adam'], password: PASSWORDS.olivia })).status).toBe(400);
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

describe.each(testDatabases())('behind an HTTPS reverse proxy on $name', ({ open }) => {
  const PUBLIC_URL = 'https://cloudtally.example.com';
  let db: Database;
  let app: ActionsApp;
  let sim: Simulator;
  let client: CloudClient;
  let fromProxy: Agent;
  // The sign-in clock: the throttle's delays pass when the test says so, not with real time.
  let clock = Date.parse('2024-05-17T10:00:00Z');

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    const config = await configWithUsers(
      { auth: { login_throttle: { free_failures_per_account: 3, free_failures_per_address: 8, first_delay_seconds: 1, max_delay_seconds: 8, forget_after_hours: 1 } } },
      { CLOUDTALLY_PUBLIC_URL: PUBLIC_URL, CLOUDTALLY_TRUSTED_PROXIES: '127.0.0.2' },
    );
    app = await startActionsApp({ db, config, client, now: () => new Date(clock) });
    // The proxy: connections from 127.0.0.2; everything from 127.0.0.1 is a client straight in.
    fromProxy = new Agent({ localAddress: '127.0.0.2' });
  });
  afterAll(async () => {
    await fromProxy?.close();
    await app?.close();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  /** A browser behind the proxy, at client address `ip` (the proxy's X-Forwarded-For). */
  const viaProxy = (ip: string, headers: Record<string, string> = {}) => new Browser(app.url, { 'x-forwarded-for': ip, ...headers }, fromProxy);

  it('sends only Secure __Host- cookies (Path=/, no Domain) and HSTS, and they work', async () => {
    const b = viaProxy('192.0.2.30');
    const page = await b.get('/login');
    expect(page.headers['strict-transport-security']).toMatch(/^max-age=\d{7,}/);
    const ok = await b.post('/login', { username: 'adam', password: PASSWORDS.adam, next: '/reports/idle' });
    expect(ok.status).toBe(303);
    const cookies = [...setCookies(page.headers['set-cookie']), ...setCookies(ok.headers['set-cookie'])];
    expect(cookies.map((c) => c.name)).toEqual(expect.arrayContaining(['__Host-cloudtally.anon', '__Host-cloudtally.csrf', '__Host-cloudtally.session']));
    for (const cookie of cookies) {
      expect(cookie.name).toMatch(/^__Host-/);
      expect(cookie.attributes, cookie.name).toMatchObject({ secure: true, httponly: true, path: '/', samesite: 'Lax' });
      expect(cookie.attributes.domain, cookie.name).toBeUndefined();
    }
    const reports = await b.get('/reports/idle');
    expect(reports.status).toBe(200);
    expect(reports.body).toContain('Signed in as <strong>adam</strong> (admin)');

    // The one-time message after "Collect now" follows the same rule, and shows once.
    const collected = await b.post('/actions/collect', { return_to: '/reports/idle' });
    expect(collected.status).toBe(303);
    const flash = setCookies(collected.headers['set-cookie']).find((c) => c.name.endsWith('cloudtally.flash'))!;
    expect(flash.name).toBe('__Host-cloudtally.flash');
    expect(flash.attributes).toMatchObject({ secure: true, path: '/' });
    const shown = await b.get('/reports/idle');
    expect(shown.body).toContain('Collection started: run 7 (running).');
    expect(setCookies(shown.headers['set-cookie']).find((c) => c.name === '__Host-cloudtally.flash')?.attributes.secure).toBe(true);
    expect((await b.get('/reports/idle')).body).not.toContain('Collection started');
  });

  it('takes writes from the public URL and from the origin the trusted proxy forwards, not from elsewhere', async () => {
    const direct = new Browser(app.url);
    expect((await direct.login('adam', PASSWORDS.adam)).status).toBe(303);
    await direct.get('/reports/idle');
    const calls = app.collectCalls;
    const collect = (b: Browser, headers: Record<string, string>) => b.post('/actions/collect', { return_to: '/' }, { headers });
    expect((await collect(direct, { origin: PUBLIC_URL })).status).toBe(303);
    expect((await collect(direct, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await collect(direct, { origin: 'http://cloudtally.example.com' })).status).toBe(403);

    // The request's own origin is what the trusted proxy says (X-Forwarded-Proto and -Host)...
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'tally.internal.example' };
    const proxied = viaProxy('192.0.2.40', forwarded);
    expect((await proxied.login('adam', PASSWORDS.adam)).status).toBe(303);
    await proxied.get('/reports/idle');
    expect((await collect(proxied, { origin: 'https://tally.internal.example' })).status).toBe(303);
    // ...and nobody else's say-so counts.
    expect((await collect(direct, { ...forwarded, origin: 'https://tally.internal.example' })).status).toBe(403);
    expect(app.collectCalls).toBe(calls + 2);
  });

  it('keeps an attacker failing for an account from stopping its owner, who signs in from another address', async () => {
    const attacker = viaProxy('203.0.113.9');
    // " ADAM " and "Adam" are the same account as "adam".
    for (const name of ['adam', ' ADAM ', 'Adam']) expect((await attacker.login(name, `guess-${name}`)).status).toBe(401);
    const slowed = await attacker.login('adam', 'guess-4');
    expect(slowed.status).toBe(429);
    expect(slowed.headers['retry-after']).toBe('1');
    expect(slowed.body).toContain('Too many failed sign-ins from your address. Try again in 1 second.');
    // Even the right password waits at that address; a forged X-Forwarded-For hop changes nothing:
    // the proxy appended the real client, the nearest untrusted hop.
    expect((await attacker.login('adam', PASSWORDS.adam)).status).toBe(429);
    expect((await viaProxy('10.9.9.9, 203.0.113.9').login('adam', PASSWORDS.adam)).status).toBe(429);

    const owner = viaProxy('198.51.100.7');
    expect((await owner.login('adam', PASSWORDS.adam)).status).toBe(303);
    expect((await owner.get('/reports/idle')).body).toContain('Signed in as <strong>adam</strong> (admin)');
  });

  it('backs off more after each further failure (429, Retry-After doubling to the cap), and a success ends it', async () => {
    const b = viaProxy('192.0.2.10');
    for (let i = 0; i < 3; i++) expect((await b.login('alice', `wrong-${i}`)).status).toBe(401);
    const waits: string[] = [];
    for (let i = 0; i < 5; i++) {
      const refused = await b.login('alice', PASSWORDS.alice);
      expect(refused.status).toBe(429);
      waits.push(String(refused.headers['retry-after']));
      clock += Number(refused.headers['retry-after']) * 1000;
      expect((await b.login('alice', `wrong-again-${i}`)).status).toBe(401);
    }
    expect(waits).toEqual(['1', '2', '4', '8', '8']);
    const last = await b.login('alice', PASSWORDS.alice);
    expect(last.status).toBe(429);
    expect(last.body).toContain('Try again in 8 seconds.');
    clock += 8_000;
    expect((await b.login('alice', PASSWORDS.alice)).status).toBe(303);
    // Reset: the next wrong password is one of three free ones again.
    expect((await viaProxy('192.0.2.10').login('alice', 'typo')).status).toBe(401);
  });

  it('slows one address trying many accounts, and no other address', async () => {
    const b = viaProxy('192.0.2.20');
    for (let i = 0; i < 8; i++) expect((await b.login(`nobody-${i}`, 'x')).status).toBe(401);
    const refused = await b.login('olivia', PASSWORDS.olivia);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await viaProxy('192.0.2.21').login('olivia', PASSWORDS.olivia)).status).toBe(303);
  });

  it('believes X-Forwarded-For only from the trusted proxy', async () => {
    // Straight in from 127.0.0.1: a new X-Forwarded-For on every try is still the same client.
    for (let i = 0; i < 3; i++) {
      const direct = new Browser(app.url, { 'x-forwarded-for': `198.18.0.${i + 1}` });
      expect((await direct.login('olivia', `wrong-${i}`)).status).toBe(401);
    }
    const spoofed = await new Browser(app.url, { 'x-forwarded-for': '198.18.0.99' }).login('olivia', PASSWORDS.olivia);
    expect(spoofed.status).toBe(429);
    // Through the proxy, 198.18.0.99 is a client of its own, with no failures.
    expect((await viaProxy('198.18.0.99').login('olivia', PASSWORDS.olivia)).status).toBe(303);
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

  it('answers loopback Host names only (against DNS rebinding), with 421 and nothing done for any other', async () => {
    const port = new URL(app.url).port;
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`, 'localhost']) {
      const page = await new Browser(app.url, { host }).get('/reports/idle');
      expect(page.status, host).toBe(200);
    }
    for (const host of [`evil.example:${port}`, 'evil.example', `localhost.evil.example:${port}`, `127.0.0.1.nip.io:${port}`, `[::2]:${port}`]) {
      const page = await new Browser(app.url, { host }).get('/reports/idle');
      expect(page.status, host).toBe(421);
      expect(page.body, host).toContain('local-only mode');
    }
    // A page that rebound its own name to 127.0.0.1 gets nowhere, even holding a valid token.
    const b = new Browser(app.url);
    await b.get('/reports/idle');
    const audit = await db.query('select id from audit_log');
    sim.clearRequestLog();
    const stop = await b.post('/actions/stop', { instance: '1:1:x', reason: 'rebinding', confirm: 'yes' }, { headers: { host: `rebind.evil.example:${port}`, origin: `http://rebind.evil.example:${port}` } });
    expect(stop.status).toBe(421);
    expect(await db.query('select id from audit_log')).toEqual(audit);
    expect(sim.requestLog.filter((r) => r.method === 'POST')).toEqual([]);
  });
});

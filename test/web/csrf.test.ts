import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { Jar, setCookies } from '../helpers/cookies.js';
import { startTestServer, type TestServer } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** Posts "collect now" from the home page of `target` and returns the page it leads back to. */
async function pageAfterCollect(target: TestServer): Promise<string> {
  const jar = new Jar();
  const page = await request(`${target.url}/`);
  jar.take(page.headers['set-cookie']);
  const token = /name="_csrf" value="([^"]+)"/.exec(await page.body.text())![1]!;
  const res = await request(`${target.url}/actions/collect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...jar.header() },
    body: new URLSearchParams({ _csrf: token, return_to: '/' }).toString(),
  });
  await res.body.dump();
  jar.take(res.headers['set-cookie']);
  const next = await request(`${target.url}/`, { headers: jar.header() });
  return next.body.text();
}

async function openPage(jar: Jar, path: string): Promise<{ body: string; token: string }> {
  const res = await request(`${server.url}${path}`, { headers: jar.header() });
  jar.take(res.headers['set-cookie']);
  const body = await res.body.text();
  const token = /name="_csrf" value="([^"]+)"/.exec(body)?.[1] ?? '';
  return { body, token };
}

function postCollect(jar: Jar, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return request(`${server.url}/actions/collect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...jar.header(), ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('collect now, protected by CSRF', () => {
  it('refuses a POST without a token (403) and does not collect', async () => {
    const before = server.collectCalls;
    const res = await request(`${server.url}/actions/collect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'return_to=%2F' });
    const body = await res.body.text();
    expect(res.statusCode).toBe(403);
    expect(body).toContain('Missing or invalid CSRF token');
    expect(server.collectCalls).toBe(before);
  });

  it('refuses a token without its cookie, and a token from another browser', async () => {
    const mine = new Jar();
    const { token } = await openPage(mine, '/reports/costs');
    expect(token).not.toBe('');
    const before = server.collectCalls;
    const noCookie = await postCollect(new Jar(), { _csrf: token });
    await noCookie.body.dump();
    expect(noCookie.statusCode).toBe(403);

    const other = new Jar();
    await openPage(other, '/reports/big');
    const crossed = await postCollect(other, { _csrf: token });
    await crossed.body.dump();
    expect(crossed.statusCode).toBe(403);
    expect(server.collectCalls).toBe(before);
  });

  it('with the token: collects, redirects back and shows a flash message once', async () => {
    const jar = new Jar();
    const { token } = await openPage(jar, '/reports/costs?team=beta');
    expect(jar.names()).toEqual(expect.arrayContaining(['cloudtally.bid', 'cloudtally.csrf']));
    const before = server.collectCalls;
    const res = await postCollect(jar, { _csrf: token, return_to: '/reports/costs?team=beta' });
    await res.body.dump();
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/reports/costs?team=beta');
    expect(server.collectCalls).toBe(before + 1);
    jar.take(res.headers['set-cookie']);

    const after = await openPage(jar, '/reports/costs?team=beta');
    expect(after.body).toContain('<p class="flash flash-info" role="status">Collection started: run 42 (running).</p>');
    const again = await openPage(jar, '/reports/costs?team=beta');
    expect(again.body).not.toContain('flash-info');
  });

  it('redirects only within the app', async () => {
    const jar = new Jar();
    const { token } = await openPage(jar, '/');
    const res = await postCollect(jar, { _csrf: token, return_to: '//evil.example/x' });
    await res.body.dump();
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/');
  });

  it('accepts the token in the x-csrf-token header and answers JSON clients with 202', async () => {
    const jar = new Jar();
    const { token } = await openPage(jar, '/');
    const res = await postCollect(jar, {}, { 'x-csrf-token': token, accept: 'application/json' });
    expect(res.statusCode).toBe(202);
    expect(await res.body.json()).toEqual({ run_id: 42, status: 'running' });
  });

  it('shows why a collection could not start', async () => {
    const failing = await startTestServer({ collectNow: async () => { throw new Error('a collection is already running'); } });
    try {
      const body = await pageAfterCollect(failing);
      expect(body).toMatch(/<p class="flash flash-error" role="alert">The collection could not be started: a collection is already running \(request id [0-9a-f-]+\)\.<\/p>/);
      expect(failing.logs.some((l) => l.msg === 'collect now failed')).toBe(true);
    } finally {
      await failing.close();
    }
  });

  it('says so when "collect now" joins a collection already under way', async () => {
    const joining = await startTestServer({ collectNow: async () => ({ runId: 7, status: 'running', alreadyRunning: true }) });
    try {
      expect(await pageAfterCollect(joining)).toContain('<p class="flash flash-info" role="status">A collection was already running (run 7); its figures show when it finishes.</p>');
    } finally {
      await joining.close();
    }
  });

  it('ignores a forged flash cookie', async () => {
    const res = await request(`${server.url}/`, { headers: { cookie: `cloudtally.flash=${encodeURIComponent(JSON.stringify({ kind: 'error', text: 'Call +1-555' }))}` } });
    const body = await res.body.text();
    expect(body).not.toContain('Call +1-555');
  });
});

describe('CSRF cookies follow the public URL', () => {
  const cookiesOf = async (target: TestServer) => {
    const res = await request(`${target.url}/`);
    await res.body.dump();
    return { cookies: setCookies(res.headers['set-cookie']), hsts: res.headers['strict-transport-security'] };
  };

  it('are Secure with the __Host- prefix (Path=/, no Domain) and come with HSTS when it is https', async () => {
    const https = await startTestServer({ site: { publicUrl: 'https://cloudtally.example.com', trustedProxies: [], localOnly: false } });
    try {
      const { cookies, hsts } = await cookiesOf(https);
      expect(cookies.map((c) => c.name).sort()).toEqual(['__Host-cloudtally.bid', '__Host-cloudtally.csrf']);
      for (const c of cookies) {
        expect(c.attributes, c.name).toMatchObject({ secure: true, path: '/', httponly: true });
        expect(c.attributes.domain).toBeUndefined();
      }
      expect(hsts).toMatch(/^max-age=\d+/);
      // And the protection works with them.
      const body = await pageAfterCollect(https);
      expect(body).toContain('Collection started: run 42 (running).');
    } finally {
      await https.close();
    }
  });

  it('are plain, without HSTS, for an http public URL or none', async () => {
    const http = await startTestServer({ site: { publicUrl: 'http://10.1.2.3:3000', trustedProxies: [], localOnly: false } });
    try {
      for (const target of [server, http]) {
        const { cookies, hsts } = await cookiesOf(target);
        expect(cookies.map((c) => c.name).sort()).toEqual(['cloudtally.bid', 'cloudtally.csrf']);
        for (const c of cookies) expect(c.attributes.secure, c.name).toBeUndefined();
        expect(hsts).toBeUndefined();
      }
    } finally {
      await http.close();
    }
  });
});

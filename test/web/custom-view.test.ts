import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { silentLogger } from '../../src/logger.js';
import { createWebApp } from '../../src/web/app.js';
import { viewsDir } from '../../src/web/paths.js';
import { costsReport, NOW, startTestServer, type TestServer } from './fixtures.js';

// A throw-away custom view, written for this test only and removed after it.
const VIEW = 'zz-test-cards-only';
const viewFile = join(viewsDir, 'reports', `${VIEW}.eta`);

let server: TestServer;

beforeAll(async () => {
  writeFileSync(
    viewFile,
    `<% layout('/layout') %>\n<h1 class="custom">Custom: <%= it.title %></h1>\n<%~ include('/partials/summary', it) %>\n<%~ include('/partials/table', it) %>\n<p class="rows-raw"><%= it.output.rows.length %> raw rows</p>\n`,
  );
  server = await startTestServer({ reports: [{ ...costsReport, name: 'custom', view: VIEW }] });
});
afterAll(async () => {
  await server.close();
  rmSync(viewFile, { force: true });
});

describe('report authors control the page', () => {
  it('renders a custom view from views/reports with the layout and the generic partials', async () => {
    const res = await request(`${server.url}/reports/custom?team=gamma`);
    const body = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(body).toContain('<h1 class="custom">Custom: Cost by resource: team gamma</h1>');
    expect(body).toContain('<p class="rows-raw">1 raw rows</p>');
    expect(body).toContain('class="report-table"');
    expect(body).toContain('<nav class="sidebar" aria-label="Reports">');
    expect(body).not.toContain('<canvas');
  });

  it('refuses at start-up a missing view, a bad name, a duplicate or an unknown section', () => {
    const base = { context: () => ({ db: null, config: null, now: NOW }), logger: silentLogger(), demo: false };
    expect(() => createWebApp({ ...base, reports: [{ ...costsReport, view: 'nope' }] })).toThrow(/report view "nope" not found/);
    expect(() => createWebApp({ ...base, reports: [{ ...costsReport, view: '../layout' }] })).toThrow(/must be a plain name/);
    expect(() => createWebApp({ ...base, reports: [costsReport, costsReport] })).toThrow(/two reports are named "costs"/);
    expect(() => createWebApp({ ...base, reports: [{ ...costsReport, name: 'costs.csv' }] })).toThrow(/URL slug/);
    expect(() => createWebApp({ ...base, reports: [{ ...costsReport, section: 'misc' as 'cost' }] })).toThrow(/unknown section/);
  });
});

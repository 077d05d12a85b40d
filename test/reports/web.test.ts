/**
 * Every report through the real web app over HTTP: the HTML page, the JSON and the CSV answer
 * 200, and the CSV parsed back equals the JSON rows (same parameters, same rows, same order).
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { dataReports, operationsReports } from '../../src/reports/index.js';
import type { Column, Row } from '../../src/reports/report.js';
import { csvCell, csvColumns, csvRecord } from '../../src/present/csv.js';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from '../web/fixtures.js';
import { appTest } from '../helpers/reports-app.js';

/** Parameters that give each report rows in the known dataset. */
const QUERIES: Record<string, string> = {
  overview: 'by=tag%3Ateam',
  cost: 'by=tag%3A%C3%BCn%C3%AF+code%2Fx',
  trend: 'by=tag%3Acost.center&days=2',
  inventory: 'kind=instances&sort=name',
  changes: 'kind=instances&hours=6',
  focus: 'from=2025-03-09&to=2025-03-10',
};

/** Reports that need more history than the known dataset's day and a half (two weeks of baseline): tested over HTTP with their own fixture (anomalies.test.ts). */
const NEEDS_HISTORY = new Set(['anomalies']);

describe.each(testDatabases())('reports over HTTP on $name', (database) => {
  let base: string;

  appTest.beforeAll(async ({ reportsApps }) => {
    base = (await reportsApps.open(database)).app.base;
  });

  /** The body as UTF-8 text; `bom` says whether it started with a byte order mark (removed from body). */
  async function get(path: string) {
    const res = await request(`${base}${path}`);
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const bom = bytes.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf]));
    return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), bom, body: bytes.subarray(bom ? 3 : 0).toString('utf8') };
  }

  it.each(dataReports().map((r) => r.name))('serves %s as HTML, JSON and CSV with the same rows', async (name) => {
    const query = QUERIES[name] ?? '';
    const html = await get(`/reports/${name}${query ? `?${query}` : ''}`);
    expect(html.status, html.body.slice(0, 500)).toBe(200);
    expect(html.type).toMatch(/^text\/html/);
    expect(html.body).toContain(NEEDS_HISTORY.has(name) ? 'empty-state' : '<table');

    const json = await get(`/api/reports/${name}?${query}${query ? '&' : ''}limit=10000`);
    expect(json.status, json.body.slice(0, 500)).toBe(200);
    const body = JSON.parse(json.body) as { rows: Row[]; columns: Column[]; totals: Row[]; region_names?: Record<string, string> };
    if (!NEEDS_HISTORY.has(name)) expect(body.rows.length).toBeGreaterThan(0);
    expect(Array.isArray(body.totals)).toBe(true);

    const csv = await get(`/api/reports/${name}.csv${query ? `?${query}` : ''}`);
    expect(csv.status, csv.body.slice(0, 500)).toBe(200);
    expect(csv.type).toMatch(/^text\/csv/);
    expect(csv.bom).toBe(true);
    const [header, ...records] = parseCsv(csv.body);
    const columns = csvColumns(body.columns, body.region_names);
    expect(header).toEqual(columns.map((c) => csvCell(c.header, 'text')));
    // The rows (money rounded to each row's currency), then one "Total" row per currency, unless
    // the file is for tools (FOCUS: exact money, no total rows).
    const exactMoney = name === 'focus';
    const totalRows = exactMoney ? 0 : body.totals.length;
    expect(records.slice(0, records.length - totalRows)).toEqual(body.rows.map((row) => csvRecord(row, columns, { exact: exactMoney })));
    expect(records.slice(records.length - totalRows).map((r) => r[0])).toEqual(Array.from({ length: totalRows }, () => 'Total'));
  });

  it.each(operationsReports().map((r) => r.name))('serves the operations report %s as HTML, JSON and CSV', async (name) => {
    const report = operationsReports().find((r) => r.name === name)!;
    const html = await get(`/reports/${name}`);
    expect(html.status, html.body.slice(0, 500)).toBe(200);
    expect(html.body).toContain(report.title);
    const json = await get(`/api/reports/${name}`);
    expect(json.status, json.body.slice(0, 500)).toBe(200);
    const body = JSON.parse(json.body) as { columns: Column[]; rows: Row[]; totals: Row[]; region_names?: Record<string, string> };
    const csv = await get(`/api/reports/${name}.csv`);
    expect(csv.status).toBe(200);
    const [header, ...records] = parseCsv(csv.body);
    expect(header).toEqual(csvColumns(body.columns, body.region_names).map((c) => csvCell(c.header, 'text')));
    expect(records.length).toBe(body.rows.length + body.totals.length);
  });

  it('names regions: filter choices by name, and a "Region name" column beside the region id in CSVs and JSON', async () => {
    for (const name of ['cost', 'monthly', 'inventory', 'changes', 'flavors', 'focus']) {
      const page = await get(`/reports/${name}`);
      expect(page.status, name).toBe(200);
      const select = /<select name="region"[^>]*>([\s\S]*?)<\/select>/.exec(page.body)?.[1];
      expect(select, `${name} has a region choice`).toBeDefined();
      const labels = [...select!.matchAll(/<option value="([^"]*)"[^>]*>([^<]*)<\/option>/g)].map((m) => [m[1], m[2]]);
      expect(labels, name).toEqual([['', 'All regions'], ['1', 'region-1'], ['2', 'region-2']]);
    }
    // A region asked for that no current scope has stays selectable, by its number.
    const unknown = await get('/reports/cost?region=77');
    expect(unknown.body).toMatch(/<option value="77" selected>Region 77<\/option>/);

    const csv = parseCsv((await get('/api/reports/inventory.csv?kind=keypairs')).body);
    const header = csv[0]!;
    const at = header.indexOf('Region');
    expect(header[at + 1]).toBe('Region name');
    const rows = csv.slice(1).filter((r) => r[0] !== 'Total');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row[at + 1]).toBe(`region-${row[at]}`);
    const json = JSON.parse((await get('/api/reports/inventory?kind=keypairs')).body) as { region_names: Record<string, string> };
    expect(json.region_names).toEqual({ '1': 'region-1' });
  });

  it('switches the inventory kind by links that start afresh, and keeps every tag filter in the form', async () => {
    const page = await get('/reports/inventory?kind=resources&currency=EUR&tag=team%3Aml&tag=env%3Aprod');
    expect(page.status).toBe(200);
    // The kind is a link per kind with no other filter (they do not all apply to every kind)...
    const links = [...page.body.matchAll(/<a href="(\/reports\/inventory\?kind=[a-z_]+)"( aria-current="page")?>/g)];
    expect(links.map((m) => m[1])).toContain('/reports/inventory?kind=ports');
    expect(links.filter((m) => m[2]).map((m) => m[1])).toEqual(['/reports/inventory?kind=resources']);
    for (const [, href] of links) expect((await get(href!)).status, href).toBe(200);
    // ...and the form keeps it, with one field per tag filter plus one to add another.
    expect(page.body).toContain('<input type="hidden" name="kind" value="resources">');
    expect(page.body).toContain('name="tag" value="team:ml"');
    expect(page.body).toContain('name="tag" value="env:prod"');
    expect(page.body.match(/<input type="text" name="tag"/g)).toHaveLength(3);
    // Every filter of the kind is a visible field, not only a hidden one kept from the URL.
    expect(page.body).toContain('<input type="text" name="currency" value="EUR">');
    // (The "Choose columns" form keeps every parameter as it is: it only changes the columns.)
    expect(page.body.replace(/<form [^>]*class="columns-form">[\s\S]*?<\/form>/, '')).not.toContain('<input type="hidden" name="currency"');
    for (const name of ['type', 'priced']) expect(page.body).toContain(`<select name="${name}">`);
    expect(page.body).toContain('<input type="text" name="missing_tag" value="">');
    expect(page.body).toContain('<a href="/reports/inventory?kind=resources">Reset</a>');
  });

  it('answers 400 with the parameter named for bad input', async () => {
    for (const path of ['/api/reports/cost?by=colour', '/api/reports/inventory?kind=ports&tag=team%3Aml', '/api/reports/focus.csv?from=2025-03-11&to=2025-03-10', '/reports/trend?days=0']) {
      const res = await get(path);
      expect(res.status, path).toBe(400);
      expect(res.body).not.toMatch(/at .*\.ts:\d+/);
    }
    const res = await get('/api/reports/inventory?kind=ports&tag=team%3Aml');
    expect(JSON.parse(res.body).errors).toEqual([{ field: 'query.tag', message: 'tag does not apply to kind ports' }]);
    // A parameter that takes one value, given twice; a repeatable one, given too often.
    const errorsOf = async (path: string) => (JSON.parse((await get(path)).body) as { errors: unknown[] }).errors;
    expect(await errorsOf('/api/reports/trend?days=7&days=8')).toEqual([{ field: 'query.days', message: 'days must be given once' }]);
    expect(await errorsOf('/api/reports/inventory?kind=instances&kind=ports')).toEqual([{ field: 'query.kind', message: 'kind must be given once' }]);
    // Checks made while the report runs answer like the schema's: the field named.
    const period = JSON.parse((await get('/api/reports/focus?from=2025-03-11&to=2025-03-10')).body) as { code: string; errors: unknown[] };
    expect(period.code).toBe('invalid_parameters');
    expect(period.errors).toEqual([{ field: 'query.from', message: 'from (2025-03-11) must not be after to (2025-03-10)' }]);
    expect(await errorsOf('/api/reports/changes?since=2099-01-01')).toEqual([{ field: 'query.since', message: expect.stringMatching(/^since must not be in the future/) }]);
    expect(await errorsOf('/api/reports/focus.csv?from=2099-01-01')).toEqual([{ field: 'query.from', message: 'from (2099-01-01) must not be after today (2025-03-10)' }]);
    // One message per bad value, not one per check it fails.
    expect(await errorsOf('/api/reports/focus?from=abc')).toEqual([{ field: 'query.from', message: 'from must be a date YYYY-MM-DD or a month YYYY-MM' }]);
    expect(await errorsOf(`/api/reports/cost?by=tag%3A${'x'.repeat(300)}`)).toHaveLength(1);
    const tags = Array.from({ length: 21 }, (_, i) => `tag=k${i}%3Av`).join('&');
    expect(await errorsOf(`/api/reports/inventory?kind=instances&${tags}`)).toEqual([{ field: 'query.tag', message: 'at most 20 values' }]);
  });

  it('pages past the end of a report whose total is not counted, and says when there are no rows', async () => {
    const past = await get('/reports/focus?from=2025-03-09&to=2025-03-10&offset=1000');
    expect(past.status).toBe(200);
    expect(past.body).toContain('This page is past the last row: “← Previous” goes to the first page.');
    expect(past.body).toContain('<a href="/reports/focus?from=2025-03-09&amp;to=2025-03-10" rel="prev">');
    const none = await get('/reports/inventory?kind=instances&q=no-such-instance');
    expect(none.body).toContain('<span class="range">No rows</span>');
    expect(none.body).not.toContain('Rows 0–0');
  });

  it('sends /reports to the overview', async () => {
    const res = await request(`${base}/reports`);
    await res.body.dump();
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/reports/overview');
  });

  it('answers 405 naming GET to any other method on a report', async () => {
    for (const path of ['/api/reports/overview', '/reports/overview', '/api/reports/cost.csv']) {
      for (const method of ['POST', 'DELETE', 'PUT'] as const) {
        const res = await request(`${base}${path}`, { method });
        await res.body.dump();
        expect(res.statusCode, `${method} ${path}`).toBe(405);
        expect(res.headers.allow).toBe('GET, HEAD');
      }
    }
  });

  it('neutralises formula-like values in CSV and keeps odd tag keys intact', async () => {
    const csv = await get('/api/reports/inventory.csv?kind=keypairs&sort=name');
    expect(csv.body).toContain("'=cmd");
    const hygiene = await get('/api/reports/tag-hygiene.csv');
    const [header, ...rows] = parseCsv(hygiene.body);
    expect(header).toContain('Run-rate lacking the key (EUR per hour)');
    expect(rows.map((r) => r[0]).sort()).toEqual(['cost.center', 'env', 'team', 'ünï code/x'].sort());
  });

  it('opens a link with parameters the report does not read, naming them (utm_* without a word)', async () => {
    const html = await get('/reports/cost?by=tag%3Ateam&utm_source=mail&utm_campaign=nov&colour=blue');
    expect(html.status, html.body.slice(0, 300)).toBe(200);
    expect(html.body).toContain('Ignored a parameter this report does not use: colour.');
    expect(html.body).not.toMatch(/Ignored[^<]*utm_/);

    const json = await get('/api/reports/cost?by=tag%3Ateam&utm_source=mail&colour=blue&size=xl');
    expect(json.status).toBe(200);
    const body = JSON.parse(json.body) as { ignored_parameters?: string[]; rows: Row[] };
    expect(body.ignored_parameters).toEqual(['colour', 'size']);
    // The same rows as without them.
    const plain = JSON.parse((await get('/api/reports/cost?by=tag%3Ateam')).body) as { rows: Row[]; ignored_parameters?: string[] };
    expect(plain.ignored_parameters).toBeUndefined();
    expect(body.rows).toEqual(plain.rows);

    const csv = await get('/api/reports/cost.csv?by=tag%3Ateam&utm_medium=chat');
    expect(csv.status).toBe(200);
    // A bad value of a parameter the report does read is still refused.
    expect((await get('/api/reports/cost?by=tag%3Ateam&project=abc&colour=blue')).status).toBe(400);
  });

  it('says when no resource has the grouping\'s tag key, and names the keys in use', async () => {
    for (const name of ['cost', 'overview', 'monthly', 'trend']) {
      const json = await get(`/api/reports/${name}?by=tag%3Anonexistent`);
      expect(json.status, `${name}: ${json.body.slice(0, 300)}`).toBe(200);
      const notes = (JSON.parse(json.body) as { notes: string[] }).notes;
      const note = notes.find((n) => n.includes('"nonexistent"'));
      expect(note, name).toMatch(/No resource in the latest snapshots has the tag key "nonexistent", so every resource is in \(untagged\)\. Tag keys in use: .*\bteam\b/);
      // A key that exists gets no such note.
      const known = JSON.parse((await get(`/api/reports/${name}?by=tag%3Ateam`)).body) as { notes: string[] };
      expect(known.notes.some((n) => n.includes('No resource in the latest snapshots has the tag key'))).toBe(false);
    }
  });
});

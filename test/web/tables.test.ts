/**
 * Tables over real HTTP (issue 16 items 1 and 3): the column set chosen with `cols` (default,
 * all, a list) and kept by the page's links, JSON and CSV with every column whatever `cols` says,
 * region names, and the changes report's field-by-field diff in JSON, CSV and HTML.
 */
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { testDatabases } from '../helpers/databases.js';
import { parseCsv } from './fixtures.js';
import { appTest } from '../helpers/reports-app.js';
import type { ReportsApp } from '../reports/helpers.js';

describe.each(testDatabases())('tables over HTTP on $name', (database) => {
  let app: ReportsApp;

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ app } = await reportsApps.open(database));
  });

  async function get(path: string) {
    const res = await request(`${app.base}${path}`);
    const text = await res.body.text();
    return { status: res.statusCode, body: text.replace(/^\uFEFF/, '') };
  }

  /** The table's header keys, in order. */
  function headerKeys(html: string): string[] {
    const thead = html.slice(html.indexOf('<thead>'), html.indexOf('</thead>'));
    return [...thead.matchAll(/data-key="([^"]+)"/g)].map((m) => m[1]!);
  }

  function hrefs(html: string, cls: string): string[] {
    return [...html.matchAll(new RegExp(`<a href="([^"]+)"[^>]*class="${cls}"`, 'g'))].map((m) => m[1]!.replace(/&amp;/g, '&'));
  }

  it('shows the default column set, every column with cols=all, and exactly a list with cols=a,b', async () => {
    const byDefault = await get('/reports/inventory?kind=instances&sort=name');
    expect(byDefault.status).toBe(200);
    const shown = headerKeys(byDefault.body);
    expect(shown.slice(0, 2)).toEqual(['resource_id', 'name']);
    expect(shown).toContain('price_per_hour');
    // Behind "More columns" by default.
    for (const key of ['first_seen', 'last_seen', 'ssh_key_name', 'created_at', 'currency']) expect(shown).not.toContain(key);
    expect(byDefault.body).toMatch(new RegExp(`${shown.length} of \\d+ columns`));
    const more = hrefs(byDefault.body, 'more-columns');
    expect(more).toHaveLength(1);
    expect(new URL(more[0]!, app.base).searchParams.get('cols')).toBe('all');

    const all = await get(more[0]!);
    const allKeys = headerKeys(all.body);
    expect(allKeys).toEqual(expect.arrayContaining(['first_seen', 'last_seen', 'ssh_key_name', 'created_at', 'currency', ...shown]));
    expect(all.body).not.toContain('class="more-columns"');

    // A list: exactly those, the identifying column first whatever the list says.
    const list = await get('/reports/inventory?kind=instances&sort=name&cols=tags,name');
    expect(headerKeys(list.body)).toEqual(['resource_id', 'name', 'tags']);
    // The same list from the column checkboxes (repeated cols).
    const repeated = await get('/reports/inventory?kind=instances&sort=name&cols=name&cols=tags');
    expect(headerKeys(repeated.body)).toEqual(['resource_id', 'name', 'tags']);
  });

  it('keeps the column choice in sort, paging and filter links, and leaves it out of JSON and CSV', async () => {
    const page = await get('/reports/inventory?kind=instances&sort=name&cols=all&limit=2');
    expect(page.status).toBe(200);
    const links = [...page.body.matchAll(/href="(\/reports\/inventory\?[^"]+)"/g)].map((m) => new URL(m[1]!.replace(/&amp;/g, '&'), app.base));
    const sorts = links.filter((u) => u.searchParams.has('sort') && u.searchParams.get('sort') !== 'name');
    expect(sorts.length).toBeGreaterThan(3);
    for (const u of sorts) expect(u.searchParams.get('cols')).toBe('all');
    const next = page.body.match(/<a href="([^"]+)" rel="next"/);
    expect(next).not.toBeNull();
    expect(new URL(next![1]!.replace(/&amp;/g, '&'), app.base).searchParams.get('cols')).toBe('all');
    // The filter form carries it as a hidden field.
    expect(page.body).toContain('<input type="hidden" name="cols" value="all">');

    // The page's exports: every column, with no cols parameter.
    const csvHref = page.body.match(/href="([^"]+)" data-export="csv"/)![1]!.replace(/&amp;/g, '&');
    expect(new URL(csvHref, app.base).searchParams.has('cols')).toBe(false);
    const jsonDefault = JSON.parse((await get('/api/reports/inventory?kind=instances')).body) as { columns: Array<{ key: string; secondary?: boolean }> };
    const jsonWithCols = JSON.parse((await get('/api/reports/inventory?kind=instances&cols=name')).body) as { columns: Array<{ key: string }> };
    expect(jsonWithCols.columns.map((c) => c.key)).toEqual(jsonDefault.columns.map((c) => c.key));
    expect(jsonDefault.columns.filter((c) => c.secondary).map((c) => c.key)).toEqual(expect.arrayContaining(['first_seen', 'last_seen']));
    const csv = parseCsv((await get('/api/reports/inventory.csv?kind=instances&cols=name')).body);
    expect(csv[0]).toEqual(expect.arrayContaining(['ID', 'Name', 'First seen', 'Last seen', 'SSH key']));
  });

  it('refuses a malformed cols with a 400 and notes column keys the table does not have', async () => {
    const bad = await get('/reports/inventory?kind=instances&cols=%3Cscript%3E');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/cols must be &quot;all&quot; or up to 100 column keys|cols must be "all"/);
    const api = await get('/api/reports/inventory?cols=a%20b');
    expect(api.status).toBe(400);
    expect(JSON.parse(api.body).errors).toEqual([expect.objectContaining({ field: 'query.cols' })]);
    const unknown = await get('/reports/inventory?kind=instances&cols=name,no_such_column');
    expect(unknown.status).toBe(200);
    expect(unknown.body).toContain('Columns not in this table, ignored: no_such_column.');
  });

  it('shows region names beside nothing but the region filter number in the title', async () => {
    const page = await get('/reports/inventory?kind=instances&sort=name');
    // The fixture's instances in region 1 are named "region-1" by the API.
    expect(page.body).toMatch(/<td class="region[^"]*" title="Region 1 \(region-1\)">region-1<\/td>/);
  });

  it('gives each changed resource its fields and tags as data in JSON, one readable line in CSV', async () => {
    const json = JSON.parse((await get('/api/reports/changes?kind=instances&hours=6')).body) as { rows: Array<Record<string, unknown>> };
    const byId = new Map(json.rows.map((r) => [r.resource_id, r]));
    expect(byId.get('i2')!.diff).toEqual({
      fields: [
        { field: 'status', label: 'Status', before: 'ACTIVE', after: 'SHUTOFF' },
        { field: 'vm_state', label: 'VM state', before: 'active', after: 'stopped' },
      ],
      tags: [],
    });
    expect(byId.get('i1')!.diff).toEqual({ fields: [], tags: [{ key: 'env', change: 'added', before: null, after: 'prod' }] });
    // The earlier fields stay for existing readers.
    expect(byId.get('i2')!.details).toEqual({ status: ['ACTIVE', 'SHUTOFF'], vm_state: ['active', 'stopped'] });
    expect(byId.get('i2')!.changed_fields).toBe('status, vm_state');
    expect(byId.get('i1')!.tag_changes).toBe('+env="prod"');

    const csv = parseCsv((await get('/api/reports/changes.csv?kind=instances&hours=6')).body);
    const header = csv[0]!;
    const at = (id: string, label: string) => csv.find((r) => r[header.indexOf('ID')] === id)![header.indexOf(label)];
    expect(at('i2', 'What changed')).toBe('Status: ACTIVE → SHUTOFF; VM state: active → stopped');
    expect(at('i1', 'What changed')).toBe('tag added env=prod');
    expect(at('i7', 'What changed')).toBe('');
  });

  it('draws the diff as old and new values per field, and tag changes as chips', async () => {
    const page = await get('/reports/changes?kind=instances&hours=6');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('{&quot;status&quot;');
    expect(page.body).toMatch(/<tr><th scope="row">Status<\/th><td class="diff-old"><del>ACTIVE<\/del><\/td><td class="diff-arrow" aria-hidden="true">→<\/td><td class="diff-new"><ins>SHUTOFF<\/ins><\/td><\/tr>/);
    expect(page.body).toMatch(/<th scope="row">VM state<\/th><td class="diff-old"><del>active<\/del>/);
    expect(page.body).toMatch(/<li class="tag-added" title="added env=prod">.*<span class="tag-key">env<\/span><span class="tag-value"><ins>prod<\/ins><\/span><\/li>/);
    // The name identifies the row: first, sticky.
    expect(headerKeys(page.body)[0]).toBe('name');
  });
});

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { COST_COLUMNS, COST_ROWS, parseCsv, startTestServer, type TestServer } from './fixtures.js';
import type { DataStatus } from '../../src/web/types.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await request(`${server.url}${path}`, { headers });
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body };
}

async function getJson(path: string) {
  const res = await get(path);
  return { ...res, json: JSON.parse(res.body) as Record<string, any> };
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

describe('report index and navigation', () => {
  it('lists every report with its three URLs', async () => {
    const { status, json } = await getJson('/api/reports');
    expect(status).toBe(200);
    expect(json.reports.map((r: { name: string }) => r.name)).toEqual(['costs', 'big', 'failing']);
    expect(json.reports[0]).toEqual({
      name: 'costs',
      title: 'Cost by resource',
      description: 'Fake cost rows in two currencies with odd tag keys.',
      section: 'cost',
      urls: { html: '/reports/costs', json: '/api/reports/costs', csv: '/api/reports/costs.csv' },
    });
  });

  it('shows a report list at / when there is no overview report, grouped by section', async () => {
    const { status, body } = await get('/');
    expect(status).toBe(200);
    expect(body).toContain('<h2>Cost</h2>');
    expect(body).toContain('<h2>Inventory</h2>');
    expect(body).toContain('<h2>Health</h2>');
    expect(body).not.toContain('<h2>Operations</h2>');
    expect(body).toContain('href="/reports/big"');
  });

  it('redirects / to the overview when there is one', async () => {
    const { costsReport } = await import('./fixtures.js');
    const other = await startTestServer({ reports: [{ ...costsReport, name: 'overview' }, costsReport] });
    try {
      const res = await request(`${other.url}/`);
      await res.body.dump();
      expect(res.statusCode).toBe(302);
      expect(res.headers.location).toBe('/reports/overview');
    } finally {
      await other.close();
    }
  });
});

describe('the report page', () => {
  it('renders title, filters, cards, charts with their tables, the rows, notes and export links', async () => {
    const { status, headers, body } = await get('/reports/costs?team=alpha&sort=amount&dir=desc');
    expect(status).toBe(200);
    expect(header(headers, 'content-type')).toMatch(/^text\/html/);
    expect(body).toContain('<h1>Cost by resource: team alpha</h1>');
    // Navigation reaches every report, the current one marked.
    expect(body).toContain('<a href="/reports/costs" aria-current="page">Cost by resource</a>');
    expect(body).toContain('<a href="/reports/failing">Failing report</a>');
    // Banners: demo data and stale scopes.
    expect(body).toContain('Demo data from the built-in simulator');
    expect(body).toContain('proj-a/eu-1');
    // Filters: a GET form keeping sort/dir as hidden fields.
    expect(body).toMatch(/<form class="filters" method="get" action="\/reports\/costs">/);
    expect(body).toContain('<option value="alpha" selected>alpha</option>');
    expect(body).toContain('<input type="hidden" name="sort" value="amount">');
    // Money rounded for display only, with currency; exact value as title.
    // Every amount of the column in one currency: the header names it, the cells do not repeat it.
    expect(body).toContain('<td class="num money negative" title="-12.5 EUR">-12.50</td>');
    expect(body).toContain('<td class="num money" title="0.0035 EUR">0.00</td>');
    expect(body).toMatch(/class="sort-link">Monthly cost \(EUR\)</);
    expect(body).toContain('title="100001234.5628 USD">100,001,234.56 USD</p>');
    expect(body).toContain('12.50%');
    // Formula-looking names are plain escaped text in HTML, links for drill-down.
    expect(body).toContain('<a href="/reports/costs?team=alpha">=HYPERLINK(&quot;x&quot;)</a>');
    // Sortable headers are links that set sort/dir; the current one shows its direction.
    expect(body).toContain('aria-sort="descending"><a href="/reports/costs?team=alpha&amp;sort=amount&amp;dir=asc" class="sort-link">Monthly cost');
    expect(body).toContain('href="/reports/costs?team=alpha&amp;sort=count&amp;dir=desc"');
    // Charts: JSON spec safely escaped, a canvas, the table beside it; scripts from /static only.
    expect(body).toContain('<canvas id="chart-trend" role="img"');
    expect(body).toContain('Trend \\u003c/script\\u003e\\u003cb\\u003ex\\u003c/b\\u003e');
    expect(body).not.toContain('</script><b>');
    expect(body).toContain('<script src="/static/chart.umd.js" defer></script>');
    expect(body).toMatch(/<th scope="row">05-16<\/th><td class="num"><\/td><td class="num">3.5<\/td>/);
    // Tag keys survive as chips.
    expect(body).toContain('<span class="tag-key">Ünï code</span><span class="tag-value">ü</span>');
    expect(body).toContain('Two currencies are never added together.');
    // JSON and CSV of exactly these parameters.
    expect(body).toContain('href="/api/reports/costs?team=alpha&amp;sort=amount&amp;dir=desc&amp;limit=50&amp;offset=0" data-export="json"');
    expect(body).toContain('href="/api/reports/costs.csv?team=alpha&amp;sort=amount&amp;dir=desc" data-export="csv" download');
    // No inline scripts, handlers or styles.
    expect(body).not.toMatch(/<script(?![^>]*(src=|type="application\/json"))/);
    expect(body).not.toMatch(/\son[a-z]+=/i);
    expect(body).not.toMatch(/\sstyle=/i);
  });

  it('shows the same rows, in the same order, as the JSON of the same parameters', async () => {
    const query = 'sort=amount&dir=asc&limit=4&offset=1';
    const [{ body }, { json }] = await Promise.all([get(`/reports/costs?${query}`), getJson(`/api/reports/costs?${query}`)]);
    const tbody = body.slice(body.indexOf('<tbody>', body.indexOf('report-table')), body.indexOf('</tbody>', body.indexOf('report-table')));
    const htmlRows = [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => [...m[1]!.matchAll(/<td class="([^"]*)"[^>]*>([\s\S]*?)<\/td>/g)].map((c) => c[2]!.replace(/<[^>]+>/g, '')));
    expect(htmlRows).toHaveLength(4);
    const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    expect(htmlRows.map((r) => unescape(r[0]!))).toEqual(json.rows.map((r: { name: string }) => r.name));
    expect(htmlRows.map((r) => r[2])).toEqual(['0.00 EUR', '100.00 EUR', '1,234.57 USD', '100,000,000.00 USD']);
    expect(json.rows.map((r: { amount: string }) => r.amount)).toEqual(['0.0035', '100', '1234.5678', '99999999.995']);
  });

  it('never links row data that is not an app path', async () => {
    const { body } = await get('/reports/costs?team=beta');
    expect(body).not.toContain('javascript:');
    expect(body).toContain('<td class="text sticky-col">web-1, &quot;quoted&quot;</td>');
  });

  it('pages with links that keep the filters', async () => {
    const first = await get('/reports/costs?limit=2&sort=name');
    expect(first.body).toContain('Rows 1–2 of 5');
    expect(first.body).toContain('<a href="/reports/costs?sort=name&amp;limit=2&amp;offset=2" rel="next">');
    const second = await get('/reports/costs?sort=name&limit=2&offset=2');
    expect(second.body).toContain('Rows 3–4 of 5');
    expect(second.body).toContain('<a href="/reports/costs?sort=name&amp;limit=2" rel="prev">');
    const big = await get('/reports/big?offset=99990');
    expect(big.body).not.toContain('chart.umd.js'); // no charts, no chart scripts
    expect(big.body).toContain('Rows 99,991–100,000 of 100,000');
    expect(big.body).toContain('<span class="disabled">Next →</span>');
  });

  it('says a page past the last row is that, and links back to the last page', async () => {
    const past = await get('/reports/costs?sort=name&limit=2&offset=40');
    expect(past.status).toBe(200);
    expect(past.body).toContain('This page is past the last of 5 rows');
    expect(past.body).toContain('This page is past the last row');
    expect(past.body).not.toContain('No rows match these parameters.');
    expect(past.body).toContain('<a href="/reports/costs?sort=name&amp;limit=2&amp;offset=4" rel="prev">');
  });

  it('shows the collect button with a CSRF token only when collectNow is given', async () => {
    const withButton = await get('/reports/costs');
    expect(withButton.body).toMatch(/<form class="collect-form" method="post" action="\/actions\/collect">\s*<input type="hidden" name="_csrf" value="[0-9a-f]+\.[0-9a-f]+">/);
    const other = await startTestServer({ collectNow: null, demo: false, status: async () => ({ lastGoodAt: null, staleScopes: [], running: true }) });
    try {
      const res = await request(`${other.url}/reports/costs`);
      const body = await res.body.text();
      expect(body).not.toContain('collect-form');
      expect(body).not.toContain('Demo data');
      expect(body).toContain('No data yet: the first collection is running.');
      const post = await request(`${other.url}/actions/collect`, { method: 'POST' });
      await post.body.dump();
      expect(post.statusCode).toBe(403); // CSRF first: nothing state-changing is reachable without a token
    } finally {
      await other.close();
    }
  });

  it('says the demo is being prepared, not that its backdated history is stale', async () => {
    const stale = { lastGoodAt: new Date('2024-05-10T00:00:00Z'), staleScopes: ['1-1'], running: false };
    for (const preparingDemo of [true, false]) {
      const other = await startTestServer({ status: async () => ({ ...stale, preparingDemo }) });
      try {
        const body = await (await request(`${other.url}/reports/costs`)).body.text();
        expect(body.includes('Preparing the demo'), `preparingDemo ${preparingDemo}`).toBe(preparingDemo);
        expect(body.includes('Stale data'), `preparingDemo ${preparingDemo}`).toBe(!preparingDemo);
      } finally {
        await other.close();
      }
    }
    const building = await startTestServer({ status: async () => ({ ...stale, preparingDemo: true, demoHistory: { done: 12, total: 28 } }) });
    try {
      const body = await (await request(`${building.url}/reports/costs`)).body.text();
      expect(body).toMatch(/<p class="banner banner-info" role="status">Building demo history: 12 of 28 collections\./);
    } finally {
      await building.close();
    }
  });

  it('says why a table or chart is empty: no collection yet, the first one running, the demo being built, or the filters', async () => {
    const filtered = await get('/reports/costs?q=zzz');
    expect(filtered.body).toMatch(/The filters matched nothing \(Name contains: zzz\)\. <a href="\/reports\/costs">Reset the filters<\/a> to see every row\./);
    // The charts of no rows: said, not drawn as empty axes.
    expect(filtered.body).toContain('<figure class="chart chart-doughnut chart-empty"');
    expect(filtered.body).toContain('Nothing to draw yet: no values for this chart in this period with these filters.');
    expect(filtered.body).not.toContain('id="chart-by-team"');

    const cases: Array<[DataStatus, string]> = [
      [{ lastGoodAt: null, staleScopes: [], running: false }, 'No data yet: nothing has been collected. Use “Collect now” above, or wait for the schedule.'],
      [{ lastGoodAt: null, staleScopes: [], running: true }, 'No data yet: the first collection is running; rows appear when it finishes.'],
      [{ lastGoodAt: null, staleScopes: [], running: true, preparingDemo: true, demoHistory: { done: 3, total: 28 } }, 'Nothing yet: the demo history is being built (see the banner above); rows appear as its collections finish.'],
    ];
    for (const [status, text] of cases) {
      const other = await startTestServer({ status: async () => status });
      try {
        const body = await (await request(`${other.url}/reports/costs?q=zzz`)).body.text();
        expect(body).toContain(text);
        expect(body).not.toContain('The filters matched nothing');
      } finally {
        await other.close();
      }
    }
  });

  it('still renders when the data status cannot be read, saying so', async () => {
    const other = await startTestServer({ status: async () => { throw new Error('db down'); } });
    try {
      const res = await request(`${other.url}/reports/costs`);
      const body = await res.body.text();
      expect(res.statusCode).toBe(200);
      expect(body).toContain('The age of the data could not be read');
      expect(other.logs.some((l) => l.msg === 'data status unavailable' && (l.err as { message: string }).message === 'db down')).toBe(true);
    } finally {
      await other.close();
    }
  });
});

describe('JSON', () => {
  it('answers the report with its page, parameters and generation time', async () => {
    const { status, json } = await getJson('/api/reports/costs?team=alpha&limit=1&offset=1');
    expect(status).toBe(200);
    expect(json.report).toBe('costs');
    expect(json.params).toEqual({ team: 'alpha' });
    expect(json.page).toEqual({ limit: 1, offset: 1, total: 2 });
    expect(json.title).toBe('Cost by resource: team alpha');
    expect(json.rows).toHaveLength(1);
    expect(json.rows[0].name).toBe('@cmd');
    expect(json.rows[0].amount).toBe('0.0035');
    expect(json.columns).toEqual(COST_COLUMNS);
    expect(json.charts).toHaveLength(3);
    expect(json.summary[1]).toEqual({ label: 'Total USD', value: '100001234.5628', kind: 'money', currency: 'USD' });
    expect(json.notes).toEqual(['Two currencies are never added together.']);
    expect(json.generated_at).toBe('2024-05-17T10:30:00.000Z');
  });

  it('defaults to 100 rows and allows up to 10,000', async () => {
    expect((await getJson('/api/reports/big')).json.page).toEqual({ limit: 100, offset: 0, total: 100000 });
    const max = await getJson('/api/reports/big?limit=10000&offset=5');
    expect(max.json.rows).toHaveLength(10000);
    expect(max.json.rows[0].id).toBe('res-000005');
  });

  it('drops empty values (an unset filter) before the report sees them', async () => {
    const { status, json } = await getJson('/api/reports/costs?team=&q=');
    expect(status).toBe(200);
    expect(json.params).toEqual({});
  });
});

describe('CSV', () => {
  it('parses back to the same rows as the JSON, with labels, currency, money rounded to the currency (exact with exact=1) and tags as JSON', async () => {
    const res = await request(`${server.url}/api/reports/costs.csv?sort=name`);
    const buffer = Buffer.from(await res.body.arrayBuffer());
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect([...buffer.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const records = parseCsv(buffer.subarray(3).toString('utf8'));
    const { json } = await getJson('/api/reports/costs?sort=name');

    expect(records[0]).toEqual(['Name', 'Team', 'Monthly cost', 'Monthly cost currency', 'Share', 'Resources', 'cost.center', 'team/sub', 'Ünï code', 'Tags']);
    expect(records).toHaveLength(json.rows.length + 1);
    const unneutralise = (s: string) => (s.startsWith("'") ? s.slice(1) : s);
    // Rounded half away from zero to cents, by hand: -12.5, 0.0035, 100, 1234.5678, 99999999.995.
    const rounded: Record<string, string> = { '-12.5': '-12.50', '0.0035': '0.00', '100': '100.00', '1234.5678': '1234.57', '99999999.995': '100000000.00' };
    const exact = parseCsv((await (await request(`${server.url}/api/reports/costs.csv?sort=name&exact=1`)).body.text()).replace(/^\uFEFF/, ''));
    json.rows.forEach((row: Record<string, any>, i: number) => {
      const record = records[i + 1]!;
      expect(unneutralise(record[0]!)).toBe(row.name);
      expect(record[1]).toBe(row.team);
      expect(record[2]).toBe(rounded[row.amount]);
      expect(exact[i + 1]![2]).toBe(row.amount);
      expect(record[3]).toBe(row.currency);
      expect(record[4]).toBe(row.share);
      expect(record[5]).toBe(String(row.count));
      expect(unneutralise(record[6]!)).toBe(row['cost.center'] ?? '');
      expect(record[7]).toBe(row['team/sub'] ?? '');
      expect(record[8]).toBe(row['Ünï code'] ?? '');
      expect(JSON.parse(record[9]!)).toEqual(row.tags);
    });
  });

  it('neutralises formula cells but keeps negative amounts numeric', async () => {
    const res = await request(`${server.url}/api/reports/costs.csv`);
    const text = (await res.body.text()).replace(/^\uFEFF/, '');
    const records = parseCsv(text);
    const byName = new Map(records.slice(1).map((r) => [r[0], r]));
    expect(byName.has(`'=HYPERLINK("x")`)).toBe(true);
    expect(byName.has("'+1")).toBe(true);
    expect(byName.has("'@cmd")).toBe(true);
    expect(byName.has("'-2")).toBe(true);
    expect(byName.get(`'=HYPERLINK("x")`)![2]).toBe('-12.50');
    expect(byName.get("'@cmd")![6]).toBe("'=1+1");
    expect(byName.get('web-1, "quoted"')![2]).toBe('100000000.00');
    // The exact text on the wire: RFC 4180 quoting, CRLF, a newline inside a quoted JSON cell.
    expect(text.startsWith('Name,Team,Monthly cost,Monthly cost currency,Share,Resources,cost.center,team/sub,Ünï code,Tags\r\n')).toBe(true);
    expect(text).toContain(`"'=HYPERLINK(""x"")",alpha,-12.50,EUR,10.00,1,cc-1,a/b,ü,"{""team/sub"": ""a/b"", ""Ünï code"": ""ü"", ""cost.center"": ""cc-1""}"\r\n`);
    expect(text).toContain(`'-2,gamma,100.00,EUR,50.00,4,cc-2,x,é,"{""note"": ""says \\""hi\\"", then\\nleaves"", ""team"": ""gamma""}"\r\n`);
    expect(text.endsWith('\r\n')).toBe(true);
  });

  it('names the file after report, filters and the instant of its figures, ASCII and UTF-8', async () => {
    const res = await request(`${server.url}/api/reports/costs.csv?team=alpha&q=%C3%9Cber%2Fx&sort=name`);
    await res.body.dump();
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="cloudtally-costs-team-alpha_q-Uber-x-2024-05-17T103000Z.csv"; filename*=UTF-8''cloudtally-costs-team-alpha_q-%C3%9Cber-x-2024-05-17T103000Z.csv`,
    );
    const plain = await request(`${server.url}/api/reports/costs.csv`);
    await plain.body.dump();
    expect(plain.headers['content-disposition']).toBe(`attachment; filename="cloudtally-costs-2024-05-17T103000Z.csv"; filename*=UTF-8''cloudtally-costs-2024-05-17T103000Z.csv`);
  });

  it('answers HEAD with the headers only, without running the export', async () => {
    const { bigExportProgress } = await import('./fixtures.js');
    bigExportProgress.produced = 0;
    const res = await request(`${server.url}/api/reports/big.csv`, { method: 'HEAD' });
    await res.body.dump();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toContain('cloudtally-big-2024-05-17T103000Z.csv');
    expect(bigExportProgress.produced).toBe(0);
  });

  it('is also served for format=csv on the JSON URL', async () => {
    const res = await request(`${server.url}/api/reports/costs?format=csv&team=beta`);
    const text = await res.body.text();
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(parseCsv(text.replace(/^\uFEFF/, ''))).toHaveLength(3);
  });

  it('cuts the connection (not a silently short file) when the export fails half-way, and logs it', async () => {
    await expect(async () => {
      const res = await request(`${server.url}/api/reports/failing.csv`);
      await res.body.text();
    }).rejects.toThrow();
    const entry = await vi.waitFor(() => {
      const logged = server.logs.find((l) => l.msg === 'response failed after it started; connection closed');
      if (!logged) throw new Error('the failed response was not logged');
      return logged;
    });
    expect((entry?.err as { message?: string } | undefined)?.message).toBe('cursor lost mid-export');
  });
});

describe('errors', () => {
  it('400 with every bad parameter named, for JSON and CSV', async () => {
    const { status, json } = await getJson('/api/reports/costs?limit=0&offset=-1&team=delta&color=red');
    expect(status).toBe(400);
    expect(json.code).toBe('invalid_parameters');
    const fields = json.errors.map((e: { field: string }) => e.field);
    expect(fields).toEqual(expect.arrayContaining(['query.limit', 'query.offset', 'query.team']));
    // A parameter the report does not read is no error: it is dropped and named (see the reports' web test).
    expect(fields).not.toContain('query.color');
    expect(json.errors.find((e: { field: string }) => e.field === 'query.limit').message).toBe('limit must be an integer from 1 to 10000 (got "0")');
    expect(json.message).toContain('query.team');
    expect(json.request_id).toEqual(expect.any(String));

    const csv = await getJson('/api/reports/costs.csv?offset=abc');
    expect(csv.status).toBe(400);
    expect(csv.json.errors).toEqual([{ field: 'query.offset', message: 'offset must be an integer from 0 to 1000000000 (got "abc")' }]);

    expect((await getJson('/api/reports/big?limit=10001')).status).toBe(400);
    expect((await getJson('/api/reports/big?limit=2&limit=3')).json.errors[0].field).toBe('query.limit');
    expect((await getJson('/api/reports/big?page=2&offset=3')).json.errors[0].field).toBe('query.page');
  });

  it('400 as an HTML page with the same messages for pages (limit max 500)', async () => {
    const { status, headers, body } = await get('/reports/costs?limit=501&team=delta');
    expect(status).toBe(400);
    expect(header(headers, 'content-type')).toMatch(/^text\/html/);
    expect(body).toContain('<code>limit</code>: limit must be an integer from 1 to 500 (got &quot;501&quot;)');
    expect(body).toContain('<code>team</code>:');
    expect(body).toContain('href="/reports/costs">Open this report with its default parameters');
    // The navigation is still there to go elsewhere.
    expect(body).toContain('href="/reports/big"');
  });

  it('400 for a NUL character in any parameter, which Postgres text cannot hold', async () => {
    const { status, json } = await getJson('/api/reports/costs?team=a%00b');
    expect(status).toBe(400);
    expect(json.errors).toEqual([{ field: 'query.team', message: 'must not contain a NUL character' }]);
    const page = await get('/reports/costs?q=x&q=%00');
    expect(page.status).toBe(400);
    expect(page.body).toContain('<code>q</code>: must not contain a NUL character');
  });

  it('passes a report’s own 4xx errors through with their message', async () => {
    const { status, json } = await getJson('/api/reports/failing?mode=client');
    expect(status).toBe(400);
    expect(json.message).toBe('unknown tag key "nope"');
  });

  it('404 for unknown reports and paths', async () => {
    const api = await getJson('/api/reports/nope');
    expect(api.status).toBe(404);
    expect(api.json.code).toBe('not_found');
    expect((await getJson('/api/reports/nope.csv')).status).toBe(404);
    const page = await get('/reports/nope');
    expect(page.status).toBe(404);
    expect(page.body).toContain('No report named &quot;nope&quot;');
    expect(page.body).toContain('The navigation lists every report.');
    expect(api.json.message).toContain('GET /api/reports lists them.');
    expect((await get('/nothing-here')).status).toBe(404);
  });

  it('500 with a request id and no stack or internal message; the stack goes to the log', async () => {
    const api = await get('/api/reports/failing', { 'x-request-id': 'req-abc.123' });
    expect(api.status).toBe(500);
    expect(api.headers['x-request-id']).toBe('req-abc.123');
    const json = JSON.parse(api.body);
    expect(json).toEqual({ code: 'internal_error', message: 'Internal error; quote request id req-abc.123 when reporting it.', request_id: 'req-abc.123' });
    const page = await get('/reports/failing');
    expect(page.status).toBe(500);
    expect(page.body).not.toContain('exploded');
    expect(page.body).not.toMatch(/at .*\.ts:\d+/);
    expect(page.body).toContain(header(page.headers, 'x-request-id'));
    const logged = server.logs.find((l) => l.reqId === 'req-abc.123' && l.msg === 'unexpected error');
    expect((logged?.err as { stack?: string }).stack).toContain('database exploded');
  });
});

describe('headers and logs', () => {
  it('sends a strict CSP and the usual security headers', async () => {
    const { headers } = await get('/reports/costs');
    expect(headers['content-security-policy']).toBe(
      "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;object-src 'none';base-uri 'self';frame-ancestors 'none';form-action 'self'",
    );
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('same-origin');
    expect(headers['x-frame-options']).toBe('SAMEORIGIN');
    expect(headers['x-powered-by']).toBeUndefined();
  });

  it('serves Chart.js and our assets from this server', async () => {
    const logged = server.logs.length;
    const chart = await get('/static/chart.umd.js');
    expect(chart.status).toBe(200);
    // A whole answer is not followed by a 404 or a "client went away" (which closed the connection).
    expect(server.logs.slice(logged).filter((l) => Number(l.level) >= 40)).toEqual([]);
    expect(chart.body).toContain('Chart.js v4');
    expect(header(chart.headers, 'content-type')).toMatch(/javascript/);
    expect((await get('/static/charts.js')).status).toBe(200);
    expect((await get('/static/app.css')).status).toBe(200);
    expect((await get('/static/favicon.svg')).status).toBe(200);
    const icon = await get('/favicon.ico');
    expect([icon.status, header(icon.headers, 'location')]).toEqual([301, '/static/favicon.svg']);
    expect((await get('/static/../package.json')).status).toBe(404);
  });

  it('logs each request as JSON with its id, and never cookies or authorization', async () => {
    const res = await get('/api/reports', { cookie: 'session=SECRET-COOKIE', authorization: 'Bearer SECRET-TOKEN' });
    const id = header(res.headers, 'x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const line = server.logs.find((l) => l.reqId === id && l.msg === 'request');
    expect(line).toMatchObject({ method: 'GET', url: '/api/reports', status: 200 });
    expect(JSON.stringify(server.logs)).not.toContain('SECRET');
    // A forged id with a newline or too long is replaced.
    const forged = await get('/api/reports', { 'x-request-id': 'x'.repeat(200) });
    expect(header(forged.headers, 'x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

import { Writable } from 'node:stream';
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvCell, csvColumns, csvFilename, contentDisposition, streamCsv } from '../../src/present/csv.js';
import { boundedMemo } from '../../src/memo.js';
import { formatDecimalText, formatMoney, formatPercent } from '../../src/present/format.js';
import { formatCell, formatValue, safeAppHref } from '../../src/web/cells.js';
import { jsonForScript } from '../../src/web/json.js';
import { shareCharts } from '../../src/reports/shared/summary.js';
import type { ChartSpec } from '../../src/reports/report.js';
import { buildReportView } from '../../src/web/report-view.js';
import { z } from 'zod';

describe('display formatting (rounding only for display, in decimal text)', () => {
  it('rounds half away from zero without binary floats', () => {
    expect(formatDecimalText('1234.565', 2, 2)).toBe('1,234.57');
    expect(formatDecimalText('-1234.565', 2, 2)).toBe('-1,234.57');
    expect(formatDecimalText('0.125', 2, 2)).toBe('0.13');
    expect(formatDecimalText('99999999999999999.995', 2, 2)).toBe('100,000,000,000,000,000.00');
    expect(formatDecimalText('-0.001', 2, 2)).toBe('0.00');
    expect(formatDecimalText('720', 2, 2)).toBe('720.00');
  });

  it('shows money at the currency\'s minor unit (hourly amounts two digits more), with the currency', () => {
    expect(formatMoney('0.0035', 'EUR')).toBe('0.00 EUR');
    expect(formatMoney('0.0035', 'EUR', true)).toBe('0.0035 EUR');
    expect(formatMoney('0.1', 'EUR')).toBe('0.10 EUR');
    expect(formatMoney(720, 'USD')).toBe('720.00 USD');
    expect(formatMoney('1234567.5', 'JPY')).toBe('1,234,568 JPY');
    expect(formatMoney('-1234.005', 'EUR')).toBe('-1,234.01 EUR');
    expect(formatMoney('12.345', undefined)).toBe('12.35');
    expect(formatMoney(null, 'EUR')).toBe('n/a');
  });

  it('shows percentages (already multiplied by 100) with two decimals', () => {
    expect(formatPercent('67.31')).toBe('67.31%');
    expect(formatPercent('12.5')).toBe('12.50%');
    expect(formatPercent(100)).toBe('100.00%');
    expect(formatPercent('0.00')).toBe('0.00%');
    expect(formatPercent('-50')).toBe('-50.00%');
  });

  it('formats the other kinds', () => {
    expect(formatValue('2024-05-17T10:30:00Z', 'timestamp')).toMatchObject({ text: '2024-05-17 10:30 UTC', datetime: '2024-05-17T10:30:00.000Z' });
    expect(formatValue(12345, 'int').text).toBe('12,345');
    // Identifiers are shown as they are looked up, counts with separators.
    expect(formatCell({ project_id: 380101, servers: 12345 }, { key: 'project_id', label: 'Project', kind: 'int' }).text).toBe('380101');
    expect(formatCell({ project_id: 380101, servers: 12345 }, { key: 'servers', label: 'Servers', kind: 'int' }).text).toBe('12,345');
    expect(formatValue(true, 'bool').text).toBe('yes');
    expect(formatValue({ a: 1 }, 'json').text).toBe('{"a":1}');
    expect(formatValue({ 'cost.center': 'x' }, 'tags').tags).toEqual([['cost.center', 'x']]);
  });

  it('links only app paths', () => {
    expect(safeAppHref('/reports/x?a=1')).toBe('/reports/x?a=1');
    expect(safeAppHref('//evil.example')).toBeUndefined();
    expect(safeAppHref('javascript:alert(1)')).toBeUndefined();
    expect(safeAppHref('https://evil.example')).toBeUndefined();
    expect(safeAppHref('/\\evil.example')).toBeUndefined();
  });

  it('escapes JSON for a script element', () => {
    expect(jsonForScript({ t: '</script><!--&\u2028' })).toBe('{"t":"\\u003c/script\\u003e\\u003c!--\\u0026\\u2028"}');
    expect(JSON.parse(jsonForScript({ t: '</script>' }))).toEqual({ t: '</script>' });
  });
});

describe('CSV cells', () => {
  it('neutralises formula starts in every column kind except plain numbers in numeric ones', () => {
    for (const text of ['=1+1', '+1', '-2', '@cmd', '\tx', '\rx']) expect(csvCell(text, 'text')).toBe(`'${text}`);
    expect(csvCell(-2, 'text')).toBe("'-2");
    expect(csvCell('-12.5', 'money')).toBe('-12.5');
    expect(csvCell(-3, 'int')).toBe('-3');
    expect(csvCell('-1e-7', 'decimal')).toBe('-1e-7');
    expect(csvCell('-1+2', 'money')).toBe("'-1+2");
    expect(csvCell('=1', 'decimal')).toBe("'=1");
    expect(csvCell('+5', 'int')).toBe("'+5");
  });

  it('writes money exactly, tags and JSON as JSON, dates as ISO', () => {
    expect(csvCell('0.123456789012345678', 'money')).toBe('0.123456789012345678');
    // Tags as Postgres writes a jsonb (so the database can write the same: csv-sql.ts), keys by length, then bytes.
    expect(csvCell({ 'team/sub': '=x', env: 'prod', ü: 'é' }, 'tags')).toBe('{"ü": "é", "env": "prod", "team/sub": "=x"}');
    expect(csvCell({ a: { b: [1, 'two'] } }, 'json')).toBe('{"a":{"b":[1,"two"]}}');
    expect(csvCell(new Date('2024-05-17T10:30:00Z'), 'timestamp')).toBe('2024-05-17T10:30:00.000Z');
    expect(csvCell(new Date('2024-05-17T10:30:00Z'), 'date')).toBe('2024-05-17');
    expect(csvCell(null, 'money')).toBe('');
    expect(csvCell(false, 'bool')).toBe('false');
  });

  it('writes the bytes csv-stringify writes for the same cells, in chunks, totals last', async () => {
    const texts = ['', 'plain', 'a,b', 'say "hi"', '"', 'line\nbreak', 'cr\rhere', 'both\r\n', ',', 'x'.repeat(70_000), 'Ünïcode, 😀'];
    const rows = Array.from({ length: 300 }, (_, i) => ({ a: texts[i % texts.length], b: texts[(i * 7) % texts.length], n: i % 5 === 0 ? null : -i, t: { k: texts[i % texts.length] } }));
    const columns = [
      { key: 'a', label: 'A, first', kind: 'text' as const },
      { key: 'b', label: 'B "quoted"', kind: 'text' as const },
      { key: 'n', label: 'N', kind: 'int' as const },
      { key: 't', label: 'Tags', kind: 'tags' as const },
    ];
    const chunks: string[] = [];
    const out = new Writable({ write: (chunk: Buffer, _enc, done) => (chunks.push(chunk.toString('utf8')), done()) });
    let totalsAskedAfterRows = -1;
    let produced = 0;
    await streamCsv(out, columns, (async function* () { for (const row of rows) (produced++, yield row); })(), {
      totals: async () => ((totalsAskedAfterRows = produced), [{ a: 'x', b: 'y', n: 3, t: null }]),
    });
    const expected = stringify(
      [columns.map((c) => c.label), ...rows.map((r) => columns.map((c) => csvCell(r[c.key as keyof typeof r], c.kind))), ['Total', 'y', '3', '']],
      { bom: true, record_delimiter: 'windows', quote_record_delimiter: true },
    );
    expect(chunks.join('')).toBe(expected);
    expect(chunks.length).toBeGreaterThan(1);
    // Asked for before the first row: the database sums while the rows stream.
    expect(totalsAskedAfterRows).toBe(0);
  });

  it('adds a currency column after money unless the report has one', () => {
    expect(csvColumns([{ key: 'm', label: 'Cost', kind: 'money', currencyKey: 'cur' }]).map((c) => c.header)).toEqual(['Cost', 'Cost currency']);
    expect(
      csvColumns([
        { key: 'm', label: 'Cost', kind: 'money', currencyKey: 'cur' },
        { key: 'cur', label: 'Currency', kind: 'text' },
      ]).map((c) => c.header),
    ).toEqual(['Cost', 'Currency']);
  });

  it('makes a safe file name with a UTF-8 variant', () => {
    const name = csvFilename('cost-by-tag', { key: 'Ünï code', project: ['p1', 'p2'], sort: 'amount', q: 'a"b\\c;d' }, new Date('2024-05-17T23:59:00Z'));
    expect(name.ascii).toBe('cloudtally-cost-by-tag-key-Uni-code_project-p1+p2_q-a-b-c-d-2024-05-17.csv');
    expect(name.unicode).toBe('cloudtally-cost-by-tag-key-Ünï-code_project-p1+p2_q-a-b-c;d-2024-05-17.csv');
    expect(contentDisposition(name)).toBe(
      `attachment; filename="cloudtally-cost-by-tag-key-Uni-code_project-p1+p2_q-a-b-c-d-2024-05-17.csv"; filename*=UTF-8''cloudtally-cost-by-tag-key-%C3%9Cn%C3%AF-code_project-p1%2Bp2_q-a-b-c%3Bd-2024-05-17.csv`,
    );
    expect(csvFilename('x', { q: 'y'.repeat(500) }, new Date('2024-01-01T00:00:00Z')).ascii.length).toBeLessThan(160);
  });
});

describe('boundedMemo', () => {
  it('computes each distinct input once until full, then starts over', () => {
    const seen: string[] = [];
    const upper = boundedMemo((s: string) => (seen.push(s), s.toUpperCase()), 2);
    expect([upper('a'), upper('a'), upper('b'), upper('a')]).toEqual(['A', 'A', 'B', 'A']);
    expect(seen).toEqual(['a', 'b']);
    upper('c'); // full: forgets a and b
    upper('a');
    expect(seen).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('shareCharts', () => {
  const groups = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ group_value: `g${i + 1}`, currency: 'EUR', price_per_hour: String(100 - i), price_per_month: '0', resource_count: 1, unpriced_count: 0 }));

  it('shows the seven largest groups and the rest as "other" (at most 8 slices), but never a lone group as "other (1)"', () => {
    expect(shareCharts('s', 'Share', groups(8))[0]!.labels).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8']);
    const nine = shareCharts('s', 'Share', groups(9))[0]!;
    expect(nine.labels).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'other (2)']);
    // g8 and g9: 93 + 92 per hour.
    expect(nine.datasets[0]!.data.at(-1)).toBe(185);
  });

  it('sums "other" exactly from the decimals (no binary float drift) and names groups with the given labels', () => {
    const tenths = Array.from({ length: 10 }, (_, i) => ({ group_value: `k${i}`, currency: 'EUR', price_per_hour: i < 7 ? '5' : '0.1', price_per_month: '0', resource_count: 1, unpriced_count: 0 }));
    const chart = shareCharts('s', 'Share', tenths, (v) => v.toUpperCase())[0]!;
    expect(chart.labels).toEqual(['K0', 'K1', 'K2', 'K3', 'K4', 'K5', 'K6', 'other (3)']);
    // 0.1 + 0.1 + 0.1 is 0.30000000000000004 in floats; the chart gets 0.3.
    expect(chart.datasets[0]!.data.at(-1)).toBe(0.3);
  });
});

describe('chart views', () => {
  const view = (charts: ChartSpec[]) =>
    buildReportView({
      report: { name: 'x', title: 'X', description: '', section: 'cost', params: z.object({}), run: async () => { throw new Error('unused'); }, export: async () => { throw new Error('unused'); } },
      output: { title: 'X', summary: [], columns: [], rows: [], totalRows: 0, notes: [], charts },
      filters: null, query: {}, reportQuery: {}, page: { limit: 50, offset: 0 }, defaultLimit: 50,
    }).charts;

  it('name every axis label up to 40, and beyond that every n-th deliberately, saying so', () => {
    const days = (n: number) => Array.from({ length: n }, (_, i) => `d${i}`);
    const [month, quarter, horizontal] = view([
      { id: 'a', title: 'A', type: 'bar', labels: days(31), datasets: [{ label: 'EUR', data: days(31).map(() => 1) }] },
      { id: 'b', title: 'B', type: 'line', labels: days(92), datasets: [{ label: 'EUR', data: days(92).map(() => 1) }] },
      { id: 'c', title: 'C', type: 'bar', horizontal: true, labels: days(92), datasets: [{ label: 'EUR', data: days(92).map(() => 1) }] },
    ]);
    expect(month!.axisNote).toBeNull();
    expect(JSON.parse(month!.json).axisStep).toBe(1);
    // 92 labels, at most 40 named: every 3rd.
    expect(JSON.parse(quarter!.json).axisStep).toBe(3);
    expect(quarter!.axisNote).toBe("The axis names every 3rd of the 92 points; each one is in the table and in the chart's tooltip.");
    expect(horizontal!.axisNote).toBeNull();
  });

  it('link the canvas to its table, put wide tables below, and say when there is nothing to draw', () => {
    const [one, three, empty, zeros] = view([
      { id: 'one', title: 'One', type: 'bar', labels: ['a'], datasets: [{ label: 'EUR', data: [0] }] },
      { id: 'three', title: 'Three', type: 'bar', labels: ['a'], datasets: ['x', 'y', 'z'].map((label) => ({ label, data: [1] })) },
      { id: 'empty', title: 'Empty', type: 'line', labels: ['a', 'b'], datasets: [{ label: 'EUR', data: [null, null] }] },
      { id: 'zeros', title: 'Zeros', type: 'doughnut', labels: ['a'], datasets: [{ label: 'EUR', data: [0] }] },
    ]);
    expect(one!.tableId).toBe('chart-one-table');
    expect([one!.empty, one!.wideTable]).toEqual([false, false]);
    expect(three!.wideTable).toBe(true);
    expect(empty!.empty).toBe(true);
    expect(zeros!.empty).toBe(true);
  });
});

describe('chart tables', () => {
  it('show cents for amounts of 10 or more and up to 4 decimals below, blanks for gaps', () => {
    const view = buildReportView({
      report: { name: 'x', title: 'X', description: '', section: 'cost', params: z.object({}), run: async () => { throw new Error('unused'); }, export: async () => { throw new Error('unused'); } },
      output: {
        title: 'X', summary: [], columns: [], rows: [], totalRows: 0, notes: [],
        charts: [{ id: 'c', title: 'C', type: 'bar', labels: ['a', 'b', 'c'], datasets: [{ label: 'EUR', data: [3736.9657, 0.0095, null] }] }],
      },
      filters: null, query: {}, reportQuery: {}, page: { limit: 50, offset: 0 }, defaultLimit: 50,
    });
    expect(view.charts[0]!.table.rows.map((r) => r.values[0])).toEqual(['3,736.97', '0.0095', '']);
  });
});

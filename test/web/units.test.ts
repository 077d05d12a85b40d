import { describe, expect, it } from 'vitest';
import { csvCell, csvColumns, csvFilename, contentDisposition } from '../../src/web/csv.js';
import { formatCell, formatDecimalText, formatMoney, formatPercent, formatValue, safeAppHref } from '../../src/web/format.js';
import { jsonForScript } from '../../src/web/json.js';
import { shareCharts } from '../../src/reports/shared/summary.js';
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
    expect(csvCell({ 'team/sub': '=x' }, 'tags')).toBe('{"team/sub":"=x"}');
    expect(csvCell(new Date('2024-05-17T10:30:00Z'), 'timestamp')).toBe('2024-05-17T10:30:00.000Z');
    expect(csvCell(new Date('2024-05-17T10:30:00Z'), 'date')).toBe('2024-05-17');
    expect(csvCell(null, 'money')).toBe('');
    expect(csvCell(false, 'bool')).toBe('false');
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

describe('shareCharts', () => {
  const groups = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ group_value: `g${i + 1}`, currency: 'EUR', price_per_hour: String(100 - i), price_per_month: '0', resource_count: 1, unpriced_count: 0 }));

  it('shows the largest groups and the rest as "other", but never a lone group as "other (1)"', () => {
    expect(shareCharts('s', 'Share', groups(9))[0]!.labels).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'g9']);
    const ten = shareCharts('s', 'Share', groups(10))[0]!;
    expect(ten.labels).toEqual(['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'other (2)']);
    expect(ten.datasets[0]!.data.at(-1)).toBe(92 + 91);
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

import { z } from 'zod';
import { createLogger } from '../../src/logger.js';
import type { ChartSpec, Column, ReportDefinition, ReportOutput, Row } from '../../src/reports/report.js';
import { createWebApp, type CollectResult, type DataStatus, type WebDeps } from '../../src/web/app.js';
import { listenOnFreePort } from '../helpers/listen.js';

/** Fake reports over in-memory rows, to drive the web layer the way real reports will. */

export const NOW = new Date('2024-05-17T10:30:00Z');

export interface CostRow extends Row {
  name: string;
  team: string;
  amount: string;
  currency: string;
  share: string;
  count: number;
  'cost.center': string | null;
  'team/sub': string | null;
  'Ünï code': string | null;
  tags: Record<string, string>;
  href: string;
}

export const COST_ROWS: CostRow[] = [
  { name: '=HYPERLINK("x")', team: 'alpha', amount: '-12.5', currency: 'EUR', share: '10.00', count: 1, 'cost.center': 'cc-1', 'team/sub': 'a/b', 'Ünï code': 'ü', tags: { 'cost.center': 'cc-1', 'team/sub': 'a/b', 'Ünï code': 'ü' }, href: '/reports/costs?team=alpha' },
  { name: '+1', team: 'beta', amount: '1234.5678', currency: 'USD', share: '25.00', count: 2, 'cost.center': null, 'team/sub': null, 'Ünï code': null, tags: {}, href: '/reports/costs?team=beta' },
  { name: '@cmd', team: 'alpha', amount: '0.0035', currency: 'EUR', share: '12.50', count: 3, 'cost.center': '=1+1', 'team/sub': null, 'Ünï code': null, tags: { 'cost.center': '=1+1' }, href: '/reports/costs?team=alpha' },
  { name: '-2', team: 'gamma', amount: '100', currency: 'EUR', share: '50.00', count: 4, 'cost.center': 'cc-2', 'team/sub': 'x', 'Ünï code': 'é', tags: { team: 'gamma', note: 'says "hi", then\nleaves' }, href: '/reports/costs?team=gamma' },
  { name: 'web-1, "quoted"', team: 'beta', amount: '99999999.995', currency: 'USD', share: '2.50', count: 5, 'cost.center': 'cc-1', 'team/sub': 'b/c', 'Ünï code': 'ø', tags: { 'cost.center': 'cc-1' }, href: 'javascript:alert(1)' },
];

export const COST_COLUMNS: Column[] = [
  { key: 'name', label: 'Name', kind: 'text', hrefKey: 'href', sortable: true },
  { key: 'team', label: 'Team', kind: 'text', sortable: true },
  { key: 'amount', label: 'Monthly cost', kind: 'money', currencyKey: 'currency', sortable: true },
  { key: 'share', label: 'Share', kind: 'percent' },
  { key: 'count', label: 'Resources', kind: 'int', sortable: true },
  { key: 'cost.center', label: 'cost.center', kind: 'text' },
  { key: 'team/sub', label: 'team/sub', kind: 'text' },
  { key: 'Ünï code', label: 'Ünï code', kind: 'text' },
  { key: 'tags', label: 'Tags', kind: 'tags' },
];

const costParams = z.strictObject({
  team: z.enum(['alpha', 'beta', 'gamma']).optional(),
  q: z.string().max(50).optional(),
  sort: z.enum(['name', 'team', 'amount', 'count']).optional(),
  dir: z.enum(['asc', 'desc']).optional(),
});
type CostParams = z.infer<typeof costParams>;

function selectCosts(params: CostParams): CostRow[] {
  let rows = COST_ROWS.filter((r) => (!params.team || r.team === params.team) && (!params.q || r.name.includes(params.q)));
  if (params.sort) {
    const key = params.sort;
    const sign = params.dir === 'desc' ? -1 : 1;
    const value = (r: CostRow) => (key === 'amount' ? Number(r.amount) : r[key]);
    rows = [...rows].sort((a, b) => (value(a) < value(b) ? -sign : value(a) > value(b) ? sign : 0));
  }
  return rows;
}

function costCharts(rows: CostRow[]): ChartSpec[] {
  return [
    { id: 'by-team', title: 'Cost by team (EUR)', type: 'doughnut', labels: rows.map((r) => r.team), datasets: [{ label: 'EUR', data: rows.map((r) => Number(r.amount)) }] },
    { id: 'resources', title: 'Resources', type: 'bar', labels: rows.map((r) => r.name), datasets: [{ label: 'Resources', data: rows.map((r) => r.count) }], valueLabel: 'count' },
    { id: 'trend', title: 'Trend </script><b>x</b>', type: 'line', labels: ['05-15', '05-16', '05-17'], datasets: [{ label: 'EUR per hour', data: [1.5, null, 2.25] }, { label: 'USD per hour', data: [3, 3.5, 4] }], valueLabel: 'per hour' },
  ];
}

export const costsReport: ReportDefinition<CostParams> = {
  name: 'costs',
  title: 'Cost by resource',
  description: 'Fake cost rows in two currencies with odd tag keys.',
  section: 'cost',
  params: costParams,
  async run(_ctx, params, page): Promise<ReportOutput> {
    const rows = selectCosts(params);
    return {
      title: params.team ? `Cost by resource: team ${params.team}` : 'Cost by resource',
      summary: [
        { label: 'Total EUR', value: '87.5035', kind: 'money', currency: 'EUR' },
        { label: 'Total USD', value: '100001234.5628', kind: 'money', currency: 'USD' },
        { label: 'Resources', value: rows.length, kind: 'int' },
        { label: 'Unpriced', value: null, kind: 'int', hint: 'no price known' },
      ],
      charts: costCharts(rows),
      columns: COST_COLUMNS,
      rows: rows.slice(page.offset, page.offset + page.limit),
      totalRows: rows.length,
      notes: ['Two currencies are never added together.'],
    };
  },
  async export(_ctx, params) {
    const rows = selectCosts(params);
    return {
      columns: COST_COLUMNS,
      rows: (async function* () {
        yield* rows;
      })(),
    };
  },
  async filters(_ctx, params) {
    return [
      { name: 'team', label: 'Team', type: 'select', value: params.team ?? '', options: [{ value: '', label: 'All teams' }, ...['alpha', 'beta', 'gamma'].map((t) => ({ value: t, label: t }))] },
      { name: 'q', label: 'Name contains', type: 'text', value: params.q ?? '' },
    ];
  },
};

export const BIG_ROWS = 100_000;
const BIG_COLUMNS: Column[] = [
  { key: 'id', label: 'ID', kind: 'text' },
  { key: 'n', label: 'N', kind: 'int' },
  { key: 'price', label: 'Price per hour', kind: 'money', currencyKey: 'currency' },
  { key: 'description', label: 'Description', kind: 'text' },
];

function bigRow(i: number): Row {
  return {
    id: `res-${String(i).padStart(6, '0')}`,
    n: i,
    price: `${(i % 1000) / 100}`,
    currency: 'EUR',
    // ~200 bytes per row, so 100,000 rows are ~25 MB of CSV.
    description: `resource number ${i} `.padEnd(200, 'x'),
  };
}

/** Counts what the export has produced, so a test can see that the server does not run ahead. */
export const bigExportProgress = { produced: 0, closed: false };

export const bigReport: ReportDefinition<Record<string, never>> = {
  name: 'big',
  title: 'Big inventory',
  description: '100,000 rows generated lazily.',
  section: 'inventory',
  params: z.strictObject({}),
  async run(_ctx, _params, page) {
    const rows: Row[] = [];
    for (let i = page.offset; i < Math.min(BIG_ROWS, page.offset + page.limit); i++) rows.push(bigRow(i));
    return { title: 'Big inventory', summary: [], charts: [], columns: BIG_COLUMNS, rows, totalRows: BIG_ROWS, notes: [] };
  },
  async export() {
    bigExportProgress.produced = 0;
    bigExportProgress.closed = false;
    return {
      columns: BIG_COLUMNS,
      rows: (async function* () {
        try {
          for (let i = 0; i < BIG_ROWS; i++) {
            bigExportProgress.produced = i + 1;
            yield bigRow(i);
          }
        } finally {
          bigExportProgress.closed = true;
        }
      })(),
    };
  },
};

export const failingReport: ReportDefinition<{ mode?: string }> = {
  name: 'failing',
  title: 'Failing report',
  description: 'Throws.',
  section: 'health',
  params: z.object({ mode: z.enum(['boom', 'client']).optional() }),
  async run(_ctx, params) {
    if (params.mode === 'client') throw Object.assign(new Error('unknown tag key "nope"'), { status: 400 });
    throw new Error('database exploded at /secret/path');
  },
  async export() {
    return {
      columns: [{ key: 'a', label: 'A', kind: 'text' }],
      rows: (async function* () {
        yield { a: 'first' };
        throw new Error('cursor lost mid-export');
      })(),
    };
  },
};

export interface TestServer {
  url: string;
  logs: Array<Record<string, unknown>>;
  collectCalls: number;
  close(): Promise<void>;
}

export interface TestServerOptions {
  reports?: WebDeps['reports'];
  demo?: boolean;
  status?: () => Promise<DataStatus>;
  collectNow?: (() => Promise<CollectResult>) | null;
  /** Public URL, trusted proxies, local-only mode (default: none of them). */
  site?: WebDeps['site'];
}

/** Starts the app on a random port with a logger whose JSON lines the test can read. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const logs: Array<Record<string, unknown>> = [];
  const destination = { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) };
  const logger = createLogger({ level: 'debug', destination });
  const state: TestServer = { url: '', logs, collectCalls: 0, close: async () => undefined };
  const app = createWebApp({
    reports: options.reports ?? [costsReport, bigReport, failingReport],
    context: () => ({ db: null, config: null, now: NOW }),
    logger,
    demo: options.demo ?? true,
    site: options.site,
    status: options.status ?? (async () => ({ lastGoodAt: new Date('2024-05-17T09:00:00Z'), staleScopes: ['proj-a/eu-1'], running: false })),
    collectNow:
      options.collectNow === null
        ? undefined
        : options.collectNow ??
          (async () => {
            state.collectCalls++;
            return { runId: 42, status: 'running' };
          }),
  });
  ({ url: state.url, close: state.close } = await listenOnFreePort(app));
  return state;
}

/** A small RFC 4180 reader: quoted fields with "" escapes, CRLF between records. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"') {
      if (field !== '') throw new Error(`quote inside an unquoted field at ${i}`);
      quoted = true;
      i++;
    } else if (c === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (c === '\r') {
      if (text[i + 1] !== '\n') throw new Error(`bare CR at ${i}`);
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else if (c === '\n') {
      throw new Error(`bare LF at ${i}`);
    } else {
      field += c;
      i++;
    }
  }
  if (quoted) throw new Error('unterminated quoted field');
  if (field !== '' || record.length > 0) throw new Error('last record not terminated by CRLF');
  return records;
}

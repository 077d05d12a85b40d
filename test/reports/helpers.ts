import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { allReports } from '../../src/reports/index.js';
import type { ReportDefinition, ReportOutput, Row } from '../../src/reports/report.js';
import { createWebApp } from '../../src/web/app.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { NOW, seedKnownDataset } from './fixture.js';
import { request } from 'undici';
import { expect } from 'vitest';

/** The configuration of the report tests: `Owner-Team` is an alias of `team`. */
export function testConfig(): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ tag_aliases: { 'Owner-Team': 'team' }, budgets: [{ name: 'Everything in EUR', currency: 'EUR', amount_per_month: '100' }] }) });
}

export interface Ctx {
  db: Database;
  config: Config;
  now: Date;
}

export function contextFor(db: Database, now = NOW): Ctx {
  return { db, config: testConfig(), now };
}

/** A database opened with `open`, the known dataset (fixture.ts) in it, and the report context over it. */
export async function openKnownDataset(open: () => Promise<Database>): Promise<{ db: Database; ctx: Ctx }> {
  const db = await open();
  await seedKnownDataset(db);
  return { db, ctx: contextFor(db) };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyReport = ReportDefinition<any, any, any>;

/** Parses the query like the web does (zod) and runs one page. */
export async function run(report: AnyReport, ctx: Ctx, query: Record<string, string | string[]> = {}, page = { limit: 1000, offset: 0 }): Promise<ReportOutput> {
  return report.run(ctx, report.params.parse(query), page);
}

export async function exportRows(report: AnyReport, ctx: Ctx, query: Record<string, string | string[]> = {}): Promise<Row[]> {
  const exported = await report.export(ctx, report.params.parse(query));
  const rows: Row[] = [];
  for await (const row of exported.rows) rows.push(row);
  return rows;
}

/** Decimal text as a number rounded to 9 places, for comparing with amounts computed by hand. */
export const dec = (v: unknown) => (v === null || v === undefined ? null : Number(Number(v).toFixed(9)));

/** Picks fields of rows, decimals through dec(). */
export function pick(rows: readonly Row[], keys: readonly string[], decimals: readonly string[] = []): unknown[][] {
  return rows.map((r) => keys.map((k) => (decimals.includes(k) ? dec(r[k]) : r[k])));
}

export function summaryValue(output: ReportOutput, label: string): unknown {
  const item = output.summary.find((s) => s.label === label);
  if (!item) throw new Error(`no summary item "${label}" in ${output.summary.map((s) => s.label).join(', ')}`);
  return item.value;
}

export interface ReportsApp {
  /** http://127.0.0.1:<port> */
  base: string;
  close(): Promise<void>;
}

/** The web app with every report over `context` (no sign-in, not demo), on a free loopback port. */
export async function startReportsApp(context: () => Ctx): Promise<ReportsApp> {
  const app = createWebApp({ reports: allReports(), context, logger: silentLogger(), demo: false });
  // The client (undici) drops an idle connection before the server does, never the other way:
  // on PGlite a long statement blocks this process's event loop, and with Node's 5 s default the
  // server could close an idle keep-alive socket just as the client reused it (ECONNRESET).
  const { url, close } = await listenOnFreePort(app, { keepAliveTimeout: 60_000 });
  return { base: url, close };
}

/** GET `path` from `app`: the body as text (without a byte order mark), after checking the answer is 200. */
export async function okText(app: ReportsApp, path: string): Promise<string> {
  const res = await request(`${app.base}${path}`);
  const body = (await res.body.text()).replace(/^\uFEFF/, '');
  expect(res.statusCode, body.slice(0, 300)).toBe(200);
  return body;
}

/** GET `path` from `app` as JSON: its status and body. */
export async function getJson<B>(app: ReportsApp, path: string): Promise<{ status: number; body: B }> {
  const res = await request(`${app.base}${path}`);
  return { status: res.statusCode, body: (await res.body.json()) as B };
}

/** GET `path` from `app` as JSON, after checking the answer is 200. */
export async function okJson<B>(app: ReportsApp, path: string): Promise<B> {
  const { status, body } = await getJson<B>(app, path);
  expect(status, JSON.stringify(body).slice(0, 500)).toBe(200);
  return body;
}

import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { stringify as stringifySync } from 'csv-stringify/sync';
import type { ColumnKind, PresentedColumn, Row } from './column.js';
import { isRegionColumn } from './regions.js';
import { csvCellSql, withCrlf, type CsvProgress, type ExportSql } from './csv-sql.js';
import { diffText, isDiff } from './diff.js';
import { FORMULA_START_CODES } from './formula.js';
import { footedAmount } from './footing.js';
import { DECIMAL_DIGITS, decimalText, roundDecimal, roundMoney } from './money.js';
import type { RawQuery } from './urls.js';
import { boundedMemo } from '../memo.js';

/*
 * CSV exports, decided here:
 * - RFC 4180: CRLF between records, fields quoted when they hold a comma, quote, CR or LF; UTF-8
 *   with a byte order mark so Excel reads the encoding right.
 * - Header row = column labels, as the report wrote them (tag keys with dots, slashes, spaces or
 *   non-ASCII included). Rows are written as arrays, never through csv-stringify's `columns`
 *   option, which would read a key like `cost.center` as a nested path.
 * - Formula injection: any cell (header included) starting with = + - @ TAB or CR, or a full-width
 *   ＝ ＋ － ＠, gets a leading apostrophe, so spreadsheets show it as text. The one exception: a
 *   plain number (e.g. `-12.5`) in a numeric column (int, decimal, money, percent) stays as it is,
 *   so negative amounts remain numbers in the spreadsheet; a numeric column holding anything else
 *   is neutralised too.
 * - Money is rounded to its currency's minor unit (hourly amounts: two digits more) by the one
 *   rule of money.ts, written as a plain number with a dot and no thousands separators, so
 *   Excel and Sheets read it as a number; with `exact` (the `?exact=1` parameter) it is written
 *   exactly as the report gives it. Rows a report footed (footing.ts) carry their footed amounts,
 *   which the rounded CSV writes, so that they add up to the Total rows. Decimals (hours,
 *   GPU-hours, change %) are rounded to two digits (the column's `digits`) unless `exact`.
 *   Each money column is followed by its currency unless the
 *   report already has the currency column. Percent columns are percentages (67.31) as the report
 *   gives them. Tags are written as JSON text as Postgres writes a jsonb (`{"env": "prod"}`, keys
 *   in jsonb's order, so that the database can write the same: csv-sql.ts), JSON columns as
 *   compact JSON text, a change (`diff`) as one readable line. Timestamps as ISO 8601, booleans
 *   as true/false, null as an empty cell.
 * - Totals per currency (when the report has them) follow the rows: their first cell is "Total".
 * - An export that fails after its first byte (the database went away) ends with one line saying
 *   so, `# export incomplete: <why> after <n> rows`, after its last whole row, and the transfer
 *   is then cut (streamCsv throws; the web layer closes the connection), so that neither a person
 *   nor a program takes a cut file for a whole one.
 * - A report that gives its rows as SQL (on Postgres) has the database write the rows by the same
 *   rules (csv-sql.ts).
 */

const NUMERIC_KINDS = new Set(['int', 'decimal', 'money', 'percent']);
const PLAIN_NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Checked on every cell: a set of char codes rather than a regular expression. */
const FORMULA_START = new Set(FORMULA_START_CODES);

function neutraliseFormula(text: string): string {
  return FORMULA_START.has(text.charCodeAt(0)) ? `'${text}` : text;
}

/**
 * Recently formatted instants (rows share their snapshot times), in slots by whole seconds modulo
 * a prime, so that whole hours and minutes do not all meet in one slot.
 */
const ISO_SLOTS = 61;
const isoSlotMs = new Float64Array(ISO_SLOTS).fill(NaN);
const isoSlotText: string[] = new Array<string>(ISO_SLOTS).fill('');
function isoInstant(ms: number): string {
  const slot = Math.abs(Math.floor(ms / 1000) % ISO_SLOTS);
  if (isoSlotMs[slot] !== ms) {
    isoSlotMs[slot] = ms;
    isoSlotText[slot] = new Date(ms).toISOString();
  }
  return isoSlotText[slot]!;
}

function plainText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : isoInstant(value.getTime());
  try {
    // Without a replacer first: several times faster, and the same text unless a BigInt is inside.
    return JSON.stringify(value);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  }
}

/** jsonb orders an object's keys by their length in bytes, then by their bytes. */
function jsonbKeyOrder(a: string, b: string): number {
  return Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * A JSON value as Postgres writes a jsonb (`{"env": "prod", "team": "ml"}`): keys in jsonb's
 * order, ", " and ": " between them. Tags are written so by Node and by Postgres alike (csv-sql.ts).
 */
function jsonbText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort(jsonbKeyOrder)
      .map((key) => `${JSON.stringify(key)}: ${jsonbText(record[key])}`)
      .join(', ')}}`;
  }
  return typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? 'null');
}

/** The text of one cell, formula-safe. */
export function csvCell(value: unknown, kind: ColumnKind): string {
  if (value === null || value === undefined) return '';
  // A finite number in a numeric column is a plain number, kept as it is (negative ones too).
  if (typeof value === 'number' && NUMERIC_KINDS.has(kind)) return Number.isFinite(value) ? String(value) : '';
  let text: string;
  switch (kind) {
    case 'date':
      text = value instanceof Date ? value.toISOString().slice(0, 10) : plainText(value);
      break;
    case 'tags':
      text = typeof value === 'string' ? value : jsonbText(value);
      break;
    case 'json':
      text = typeof value === 'string' ? value : plainText(value);
      break;
    case 'lines':
      text = Array.isArray(value) ? value.map(String).join('\n') : plainText(value);
      break;
    case 'diff':
      // One readable line per resource: `Status: ACTIVE → SHUTOFF; tag added env=prod`.
      text = isDiff(value) ? diffText(value) : plainText(value);
      break;
    default:
      text = plainText(value);
  }
  if (NUMERIC_KINDS.has(kind) && PLAIN_NUMBER.test(text)) return text;
  return neutraliseFormula(text);
}

export interface CsvColumn {
  header: string;
  key: string;
  kind: ColumnKind;
  /** For money: the row field holding the currency, and whether the amount is hourly. */
  currencyKey?: string;
  hourly?: boolean;
  /** For decimals: fraction digits when rounded (default DECIMAL_DIGITS). */
  digits?: number;
  /** A name looked up by the id in another column of the row (a region's name beside its id). */
  names?: { from: string; byId: Readonly<Record<string, string>> };
}

export interface CsvOptions {
  /** Write money exactly as the report gives it, not rounded to the currency's minor unit. */
  exact?: boolean;
}

/**
 * The cells of one row; unless `exact`, money rounded to each row's currency (footed when the
 * report footed its rows: footing.ts) and decimals to their digits.
 */
export function csvRecord(row: Row, columns: readonly CsvColumn[], options: CsvOptions = {}): string[] {
  return columns.map((c) => {
    if (c.names) return csvCell(c.names.byId[String(row[c.names.from])] ?? null, c.kind);
    const value = row[c.key];
    if (c.kind === 'money' && !options.exact) {
      const currency = c.currencyKey ? row[c.currencyKey] : undefined;
      const rounded = footedAmount(row, c.key) ?? roundMoney(value, typeof currency === 'string' ? currency : null, c.hourly ?? false);
      if (rounded !== null) return csvCell(rounded, c.kind);
    }
    if (c.kind === 'decimal' && !options.exact) {
      const text = decimalText(value);
      if (text !== null) return csvCell(roundDecimal(text, c.digits ?? DECIMAL_DIGITS), c.kind);
    }
    return csvCell(value, c.kind);
  });
}

/**
 * The report's columns plus a currency column after each money column that lacks one, and, given
 * region names, a "Region name" column after each region id column of a report that has no name
 * column of its own.
 */
export function csvColumns(columns: readonly PresentedColumn[], regionNames?: Readonly<Record<string, string>>): CsvColumn[] {
  const keys = new Set(columns.map((c) => c.key));
  const namesRegions = keys.has(REGION_NAME_KEY) || columns.some((c) => c.key === 'region' && c.kind === 'text');
  const out: CsvColumn[] = [];
  for (const column of columns) {
    out.push({
      header: column.label,
      key: column.key,
      kind: column.kind,
      ...(column.currencyKey ? { currencyKey: column.currencyKey } : {}),
      ...(column.hourly ? { hourly: true } : {}),
      ...(column.digits !== undefined ? { digits: column.digits } : {}),
    });
    if (column.kind === 'money' && column.currencyKey && !keys.has(column.currencyKey)) {
      out.push({ header: `${column.label} currency`, key: column.currencyKey, kind: 'text' });
      keys.add(column.currencyKey);
    }
    if (regionNames && !namesRegions && isRegionColumn(column) && !keys.has(REGION_NAME_KEY)) {
      out.push({ header: 'Region name', key: REGION_NAME_KEY, kind: 'text', names: { from: column.key, byId: regionNames } });
      keys.add(REGION_NAME_KEY);
    }
  }
  return out;
}

const REGION_NAME_KEY = 'region_name';

/** csv-stringify's settings for every export: RFC 4180 with CRLF, a field holding CR or LF quoted. */
const STRINGIFY_OPTIONS = { record_delimiter: 'windows', quote_record_delimiter: true } as const;
const RECORD_DELIMITER = '\r\n';
const BOM = '\ufeff';
/** A field holding one of these is quoted by csv-stringify; any other field it writes as it is. */
const NEEDS_QUOTING = /[",\r\n]/;
/** Text gathered before one write to the socket: few large writes instead of one per record. */
const CHUNK_CHARS = 64 * 1024;

const FIELD_OPTIONS = { ...STRINGIFY_OPTIONS, eof: false } as const;
/** Fields that need quoting (tags, mostly) repeat from row to row: each quoted once. */
const quotedField = boundedMemo((field: string) => stringifySync([[field]], FIELD_OPTIONS));

/** A field as csv-stringify writes it: as it is unless it holds a comma, quote, CR or LF. */
function csvField(field: string): string {
  return NEEDS_QUOTING.test(field) ? quotedField(field) : field;
}

/** One CSV line with its CRLF: what csv-stringify writes for the record, quoting through it. */
function csvLine(record: readonly string[]): string {
  let line = '';
  for (let i = 0; i < record.length; i++) line += (i === 0 ? '' : ',') + csvField(record[i]!);
  return line + RECORD_DELIMITER;
}

/**
 * The statements whose results, copied out as CSV one after the other, are the export's rows: each column's
 * SQL (csv-sql.ts); null when a column has no SQL writer. The benchmark's baseline runs it too.
 */
export function csvQueries(columns: readonly CsvColumn[], sql: ExportSql, options: CsvOptions = {}): Array<{ text: string; values: unknown[] }> | null {
  if (!columns.every((c) => csvCellSql(c, (key) => key, options) !== null)) return null;
  return sql.queries((value) => columns.map((c) => csvCellSql(c, value, options)!));
}

function headerLine(columns: readonly CsvColumn[]): string {
  return BOM + csvLine(columns.map((c) => neutraliseFormula(c.header)));
}

/**
 * Totals are asked for before the first row, so that the database sums them (on another pooled
 * connection) while the rows stream; their lines are written last.
 */
function totalsAhead(columns: readonly CsvColumn[], options: CsvStreamOptions): () => Promise<string> {
  const totals = options.totals?.();
  // Awaited after the rows; until then a failure must not count as unhandled.
  totals?.catch(() => undefined);
  return async () => (totals ? (await totals).map((row) => csvLine(totalRecord(row, columns, options))).join('') : '');
}

/**
 * The CSV of a report whose rows the database writes (ExportSql, csv-sql.ts): the header, then
 * COPY's pieces with CRLF record ends, then the totals. The header waits for the first piece, so
 * a query that fails at once is an error response, not a cut file.
 */
async function* copiedCsvChunks(
  columns: CsvColumn[],
  sql: ExportSql,
  queries: ReadonlyArray<{ text: string; values: unknown[] }>,
  options: CsvStreamOptions,
  progress: CsvProgress,
): AsyncGenerator<string | Buffer> {
  const totalLines = totalsAhead(columns, options);
  let header: string | null = headerLine(columns);
  const start = (i: number) => (i < queries.length ? startedNow(sql.csvCopy(queries[i]!.text, queries[i]!.values)) : null);
  // Each statement starts while the one before it streams, on another pooled connection: its scan,
  // joins and sort, all done before its first row, overlap the transfer (so at most two run at once).
  let next = start(0);
  try {
    for (let i = 0; next; i++) {
      const current = next;
      next = start(i + 1);
      for await (const piece of withCrlf(current, progress)) {
        if (header !== null) {
          yield header;
          header = null;
        }
        yield piece;
      }
    }
  } finally {
    // Not awaited: a statement started ahead and never read ends once its first rows or its error
    // arrive (its connection is then dropped), and the export's own error must not wait for that.
    // Its error is of no use to anyone: the export has failed or been abandoned already.
    void next?.close().catch(() => undefined);
  }
  yield (header ?? '') + (await totalLines());
}

/** An async iterable whose work starts at once (its first item is asked for now), and that can be closed unread. */
interface StartedIterable<T> extends AsyncIterable<T> {
  close(): Promise<void>;
}

function startedNow<T>(iterable: AsyncIterable<T>): StartedIterable<T> {
  const it = iterable[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<T>> | null = it.next();
  // Awaited when read; until then (or if it is closed unread) a failure must not count as unhandled.
  first.catch(() => undefined);
  const close = async () => {
    first = null;
    await it.return?.();
  };
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => {
        const item = first ?? it.next();
        first = null;
        return item;
      },
      return: async () => {
        await close();
        return { done: true, value: undefined };
      },
    }),
    close,
  };
}

/**
 * The CSV text written in Node: the header and first row, then chunks of about 64 KB, then the
 * totals. When the rows fail, the whole rows already written go out before the error does.
 */
async function* csvChunks(columns: CsvColumn[], rows: AsyncIterable<Row>, options: CsvStreamOptions, progress: CsvProgress): AsyncGenerator<string> {
  const totalLines = totalsAhead(columns, options);
  let chunk = headerLine(columns);
  let first = true;
  try {
    for await (const row of rows) {
      chunk += csvLine(csvRecord(row, columns, options));
      progress.rows++;
      // The first row goes at once: the download starts, and a failure later cuts a started response.
      if (first || chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
        first = false;
      }
    }
  } catch (error) {
    if (!first && chunk !== '') yield chunk;
    throw error;
  }
  yield chunk + (await totalLines());
}

/**
 * A totals row: its first cell says "Total" whatever the first column is (a spreadsheet filters
 * on it), and the report's own "Total" label further right is left empty.
 */
function totalRecord(row: Row, columns: readonly CsvColumn[], options: CsvOptions): string[] {
  const record = csvRecord(row, columns, options);
  const label = columns.findIndex((c) => c.kind === 'text' && row[c.key] === TOTAL_CELL);
  if (label > 0) record[label] = '';
  if (record.length > 0) record[0] = TOTAL_CELL;
  return record;
}

const TOTAL_CELL = 'Total';

export interface CsvStreamOptions extends CsvOptions {
  /** Totals per currency, written after the rows (asked for when the rows start: see csvChunks). */
  totals?: () => Promise<Row[]>;
  /** The rows as SQL: when given and every column has an SQL writer, the database writes the rows. */
  sql?: ExportSql;
  /**
   * Why an export that had started could not finish, for its last line ("the database connection
   * was lost"); default "the export failed".
   */
  failureReason?: (error: unknown) => string;
  /** How long the last line may wait for a slow client before the connection is cut anyway. Default 5 s. */
  incompleteLineWaitMs?: number;
  /** Region names by id: a "Region name" column follows the region id column (csvColumns). */
  regionNames?: Readonly<Record<string, string>>;
}

/** The start of the last line of an export that could not finish. */
export const INCOMPLETE_EXPORT_LINE = '# export incomplete:';

/** `# export incomplete: the database connection was lost after 1200 rows` (and CRLF). */
export function incompleteExportLine(reason: string, rows: number): string {
  return `${INCOMPLETE_EXPORT_LINE} ${reason.replace(/[\r\n]+/g, ' ')} after ${rows} row${rows === 1 ? '' : 's'}${RECORD_DELIMITER}`;
}

/**
 * Streams rows as CSV into `out` with backpressure: a row is pulled from the report only when
 * the socket has taken the previous ones, so memory stays flat however many rows there are.
 * If the client goes away, the report's iterator is closed (its `finally` runs).
 *
 * If the rows fail before anything was written, the error is thrown and nothing is written (the
 * caller answers with an error instead of a file). If they fail later, the export's last line
 * says it is incomplete (incompleteExportLine), `out` is left unended, and the error is thrown:
 * the caller must then destroy the connection, so the client sees a failed transfer.
 */
export async function streamCsv(out: Writable, columns: readonly PresentedColumn[], rows: AsyncIterable<Row>, options: CsvStreamOptions = {}): Promise<void> {
  const cells = csvColumns(columns, options.regionNames);
  const queries = options.sql ? csvQueries(cells, options.sql, options) : null;
  const progress: CsvProgress = { rows: 0 };
  const chunks = options.sql && queries ? copiedCsvChunks(cells, options.sql, queries, options, progress) : csvChunks(cells, rows, options, progress);
  // The rows' failure is kept here rather than thrown into the pipeline, which would destroy `out`
  // before anything could be said in it.
  let failure: { error: unknown; started: boolean } | null = null;
  let started = false;
  const guarded = async function* () {
    try {
      for await (const chunk of chunks) {
        started = true;
        yield chunk;
      }
    } catch (error) {
      failure = { error, started };
    }
  };
  // Ended here, not by the pipeline: a failed export must not end like a whole one.
  await pipeline(Readable.from(guarded(), { highWaterMark: 1 }), out, { end: false });
  const failed = failure as { error: unknown; started: boolean } | null;
  if (!failed) {
    out.end();
    await finished(out);
    return;
  }
  if (failed.started) {
    const reason = options.failureReason?.(failed.error) ?? 'the export failed';
    await writeAndWait(out, incompleteExportLine(reason, progress.rows), options.incompleteLineWaitMs ?? 5_000);
  }
  throw failed.error;
}

/** Writes `text` and waits until the socket has taken it (or `out` closed, or `waitMs` passed). */
function writeAndWait(out: Writable, text: string, waitMs: number): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      out.off('close', done);
      resolve();
    };
    timer = setTimeout(done, waitMs);
    out.once('close', done);
    if (out.destroyed) return done();
    out.write(text, () => done());
  });
}

const FILENAME_EXCLUDED_PARAMS = new Set(['sort', 'dir']);
const MAX_FILTER_PART = 120;

function filterWords(query: RawQuery): string[] {
  const words: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (FILENAME_EXCLUDED_PARAMS.has(key)) continue;
    const values = (Array.isArray(value) ? value : [value]).filter((v) => v !== '');
    if (values.length > 0) words.push(`${key}-${values.join('+')}`);
  }
  return words;
}

function asciiPart(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._+-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|-+$/g, '');
}

function unicodePart(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f"\\/:*?<>|\s]+/g, '-').replace(/-{2,}/g, '-').replace(/^[-.]+|-+$/g, '');
}

export interface CsvFilename {
  /** Safe ASCII for `filename="..."`. */
  ascii: string;
  /** The same with non-ASCII letters kept, for `filename*`. */
  unicode: string;
}

/**
 * cloudtally-<report>-<filters>-<YYYY-MM-DD>.csv; sort order is not part of the name. With
 * `asOf`, the date is the instant the figures are as of, to the second in UTC
 * (`2026-11-27T210005Z`: no colons, which some systems refuse in file names). A report over a
 * period that snapshots do not fully cover ends in `-partial.csv`.
 */
export function csvFilename(report: string, reportQuery: RawQuery, now: Date, options: { partial?: boolean; asOf?: boolean } = {}): CsvFilename {
  const iso = now.toISOString();
  const date = options.asOf ? `${iso.slice(0, 10)}T${iso.slice(11, 19).replace(/:/g, '')}Z` : iso.slice(0, 10);
  const words = filterWords(reportQuery);
  const build = (clean: (s: string) => string): string => {
    const filters = words.map(clean).filter(Boolean).join('_').slice(0, MAX_FILTER_PART).replace(/[-_]+$/, '');
    return ['cloudtally', clean(report) || 'report', filters, date, options.partial ? 'partial' : ''].filter(Boolean).join('-') + '.csv';
  };
  return { ascii: build(asciiPart), unicode: build(unicodePart) };
}

function encodeRfc5987(text: string): string {
  return encodeURIComponent(text).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function contentDisposition(name: CsvFilename): string {
  return `attachment; filename="${name.ascii}"; filename*=UTF-8''${encodeRfc5987(name.unicode)}`;
}

/**
 * Fast bulk writes of snapshot rows, on Postgres and PGlite alike, in two forms:
 *
 * - `COPY t (c1, c2, c3) FROM STDIN` (bulkCopy): rows as COPY text, the fastest way into
 *   Postgres. Measured on 100,000 instance rows: about half the server time of the INSERT below,
 *   which has to parse one big array literal per column and unnest it. It cannot skip colliding
 *   rows, so callers that may repeat a key remove the repeats first.
 * - `INSERT INTO t (c1, c2, c3) SELECT u.c1::int, u.c2, u.c3
 *      FROM ROWS FROM (unnest($1::text[]), unnest($2::text[]), json_array_elements($3::json)) AS u(c1, c2, c3)`
 *   (bulkInsert): one parameter per column, whatever the row count, so the statement is tiny to
 *   build and parse (drizzle's insert().values() builds SQL text per row), and it can
 *   skip colliding rows (ON CONFLICT DO NOTHING). Scalar columns travel as text[] and are cast by
 *   Postgres: numeric stays exact, timestamps are ISO strings, array columns are array literals
 *   (unnest would flatten a 2-D array). json(b) columns travel as one JSON array each: measured
 *   here, that halves the time of rows with large raw documents compared with a text[] of JSON
 *   strings (which Postgres must first unescape as an array literal, then parse as JSON).
 *
 * Both give a NOT NULL column its default where a row has no value, and NULL elsewhere.
 */
import { getTableColumns, is, SQL, type InferInsertModel } from 'drizzle-orm';
import { getTableConfig, PgDialect, type PgColumn, type PgTable } from 'drizzle-orm/pg-core';
import type { Queryable } from './connection.js';
import { quoteIdent } from './sql-literal.js';

export interface BulkInsertOptions<T extends PgTable> {
  /** Columns to insert (TS keys). Default: every key present (not undefined) in any row. */
  columns?: readonly (keyof InferInsertModel<T> & string)[];
  /** Rows per statement (default 5,000). */
  chunkSize?: number;
  /** Skip rows that collide with an existing key instead of failing. */
  onConflictDoNothing?: boolean;
}

export const DEFAULT_CHUNK_SIZE = 5_000;

/**
 * Inserts rows (keyed by the schema's TS names) into table through `target` (a Database, or the
 * handle of a transaction to make the insert part of it; chunks outside a transaction commit one
 * by one). A missing (undefined or null) value gets the column's default when the column is NOT
 * NULL and has one (SQL default such as now(), static value, or $defaultFn called per row);
 * otherwise NULL. For jsonb columns a JSON null is stored as SQL NULL. Returns the rows inserted.
 */
export async function bulkInsert<T extends PgTable>(
  target: Queryable,
  table: T,
  rows: readonly InferInsertModel<T>[],
  options: BulkInsertOptions<T> = {},
): Promise<number> {
  return runBulkInsert(target, prepareBulkInsert(table, rows, options));
}

/**
 * A bulk insert turned into its statements: only text, no reference to the rows it came from.
 * A caller that prepares a page of rows and lets go of them before awaiting the database lets
 * the garbage collector reclaim the page's objects (API records, raw JSON, rows) at once instead
 * of promoting them to the old generation while the statement runs (V8 keeps an async
 * function's locals alive across await, dead or not).
 */
export interface PreparedBulkInsert {
  readonly method: 'insert';
  readonly tableName: string;
  readonly text: string;
  readonly rowCount: number;
  /** One parameter list per chunk, with the index of the chunk's first row. */
  readonly chunks: ReadonlyArray<{ start: number; rows: number; params: readonly string[] }>;
}

/** Builds the statements of a bulk insert (see bulkInsert); throws, naming the row and column, on a value it cannot store. */
export function prepareBulkInsert<T extends PgTable>(
  table: T,
  rows: readonly InferInsertModel<T>[],
  options: BulkInsertOptions<T> = {},
): PreparedBulkInsert {
  const tableName = labelOf(table);
  if (rows.length === 0) return { method: 'insert', tableName, text: '', rowCount: 0, chunks: [] };
  const columns = insertColumns(table, tableName, rows, options.columns);
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  if (!Number.isInteger(chunkSize) || chunkSize < 1) {
    throw new Error(`bulk insert into ${tableName}: chunkSize must be a positive integer`);
  }
  const chunks: { start: number; rows: number; params: string[] }[] = [];
  for (let start = 0; start < rows.length; start += chunkSize) {
    const chunk = rows.slice(start, start + chunkSize) as readonly Record<string, unknown>[];
    chunks.push({ start, rows: chunk.length, params: columns.map((col) => columnParam(col, chunk, tableName, start)) });
  }
  return { method: 'insert', tableName, text: insertStatement(qualifiedName(table), columns, options.onConflictDoNothing ?? false), rowCount: rows.length, chunks };
}

/** Runs a prepared bulk insert, chunk after chunk; returns the rows inserted. */
export async function runBulkInsert(target: Queryable, prepared: PreparedBulkInsert): Promise<number> {
  let inserted = 0;
  for (const chunk of prepared.chunks) {
    try {
      inserted += (await target.execute(prepared.text, chunk.params)).rowCount;
    } catch (err) {
      throw new Error(
        `bulk insert into ${prepared.tableName} (rows ${chunk.start}..${chunk.start + chunk.rows - 1} of ${prepared.rowCount}) failed: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }
  return inserted;
}

export type BulkCopyOptions<T extends PgTable> = Pick<BulkInsertOptions<T>, 'columns'>;

/** Rows per string of COPY text handed to the driver (the text of a page is streamed in these). */
const COPY_CHUNK_ROWS = 1_000;

/**
 * Copies rows (keyed by the schema's TS names) into table with COPY FROM STDIN, through
 * `target` (a Database, or a transaction's handle). Same values and defaults as bulkInsert; a
 * row whose key is already stored fails the whole copy (COPY has no ON CONFLICT). Returns the
 * rows copied.
 */
export async function bulkCopy<T extends PgTable>(
  target: Queryable,
  table: T,
  rows: readonly InferInsertModel<T>[],
  options: BulkCopyOptions<T> = {},
): Promise<number> {
  return runBulkCopy(target, prepareBulkCopy(table, rows, options));
}

/** A bulk copy turned into its COPY text: like PreparedBulkInsert, no reference to the rows. */
export interface PreparedBulkCopy {
  readonly method: 'copy';
  readonly tableName: string;
  readonly rowCount: number;
  /**
   * One COPY per set of columns: rows without a value for a NOT NULL column that has a default
   * leave that column out of their COPY, so Postgres applies the default (normally one part).
   */
  readonly parts: ReadonlyArray<CopyPart>;
}

interface CopyPart {
  /** `"table" ("col", ...)`: what the driver copies into. */
  readonly into: string;
  /** The COPY text (text format), in strings of COPY_CHUNK_ROWS rows. */
  readonly data: readonly string[];
  /** The index in the given rows of each row of this part (for error messages). */
  readonly rowIndexes: readonly number[];
}

/** Builds the COPY text of a bulk copy (see bulkCopy); throws, naming the row and column, on a value it cannot store. */
export function prepareBulkCopy<T extends PgTable>(
  table: T,
  rows: readonly InferInsertModel<T>[],
  options: BulkCopyOptions<T> = {},
): PreparedBulkCopy {
  const tableName = labelOf(table);
  if (rows.length === 0) return { method: 'copy', tableName, rowCount: 0, parts: [] };
  const columns = insertColumns(table, tableName, rows, options.columns);
  const records = rows as readonly Record<string, unknown>[];
  const parts: CopyPart[] = [];
  for (const { missing, rowIndexes } of rowsByMissingDefaults(columns, records)) {
    const present = columns.filter((_, c) => !missing.has(c));
    const data: string[] = [];
    for (let start = 0; start < rowIndexes.length; start += COPY_CHUNK_ROWS) {
      data.push(copyText(present, records, rowIndexes, start, Math.min(start + COPY_CHUNK_ROWS, rowIndexes.length), tableName));
    }
    parts.push({ into: `${qualifiedName(table)} (${present.map((c) => quoteIdent(c.name)).join(', ')})`, data, rowIndexes });
  }
  return { method: 'copy', tableName, rowCount: rows.length, parts };
}

/** Runs a prepared bulk copy; returns the rows copied. */
export async function runBulkCopy(target: Queryable, prepared: PreparedBulkCopy): Promise<number> {
  let copied = 0;
  for (const part of prepared.parts) {
    try {
      copied += await target.copyFrom(part.into, part.data);
    } catch (err) {
      throw new Error(`bulk copy into ${prepared.tableName} (${prepared.rowCount} rows) failed${copyErrorPlace(err, part)}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return copied;
}

export type PreparedBulkWrite = PreparedBulkInsert | PreparedBulkCopy;

export function runBulkWrite(target: Queryable, prepared: PreparedBulkWrite): Promise<number> {
  return prepared.method === 'copy' ? runBulkCopy(target, prepared) : runBulkInsert(target, prepared);
}

/**
 * The rows grouped by which defaulted NOT NULL columns they have no value for (by column index);
 * in the usual case one group, with no column missing, holding every row in order.
 */
function rowsByMissingDefaults(
  columns: readonly ColumnInfo[],
  rows: readonly Record<string, unknown>[],
): Array<{ missing: ReadonlySet<number>; rowIndexes: number[] }> {
  const defaulted = columns.flatMap((c, i) => (c.defaultSql === null ? [] : [i]));
  const byKey = new Map<string, { missing: Set<number>; rowIndexes: number[] }>();
  for (let r = 0; r < rows.length; r++) {
    // Runs for every row written: an array only for a row that lacks a value.
    let missing: number[] | null = null;
    for (const c of defaulted) {
      const value = rows[r]![columns[c]!.key];
      if (value === undefined || value === null) (missing ??= []).push(c);
    }
    const key = missing === null ? '' : missing.join(',');
    let group = byKey.get(key);
    if (!group) {
      group = { missing: new Set(missing), rowIndexes: [] };
      byKey.set(key, group);
    }
    group.rowIndexes.push(r);
  }
  return [...byKey.values()];
}

/** Rows rowIndexes[start..end) as COPY text: tab-separated, \N for NULL, one line each. */
function copyText(
  columns: readonly ColumnInfo[],
  rows: readonly Record<string, unknown>[],
  rowIndexes: readonly number[],
  start: number,
  end: number,
  tableName: string,
): string {
  let text = '';
  for (let i = start; i < end; i++) {
    const rowIndex = rowIndexes[i]!;
    const row = rows[rowIndex]!;
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      let value = row[column.key];
      if (c > 0) text += '\t';
      try {
        if ((value === undefined || value === null) && column.defaultFn) value = column.defaultFn();
        text += value === undefined || value === null ? '\\N' : column.copy(value);
      } catch (err) {
        throw columnError('copy', tableName, rowIndex, column, (err as Error).message);
      }
    }
    text += '\n';
  }
  return text;
}

/** " at row N, column "c"" from the COPY context of a server error (`where`: "COPY t, line N, column c: ..."). */
function copyErrorPlace(err: unknown, part: CopyPart): string {
  const where = (err as { where?: unknown }).where;
  const match = typeof where === 'string' ? /COPY [^,]+, line (\d+)(?:, column ([^:\s]+))?/.exec(where) : null;
  if (!match) return '';
  const row = part.rowIndexes[Number(match[1]) - 1];
  if (row === undefined) return '';
  return ` at row ${row}${match[2] ? `, column "${match[2]}"` : ''}`;
}

interface ColumnInfo {
  key: string;
  name: string;
  sqlType: string;
  json: boolean;
  /** SQL used in place of NULL for a NOT NULL column with a static or SQL default. */
  defaultSql: string | null;
  /** Called per row in place of a missing value ($defaultFn of a NOT NULL column). */
  defaultFn: (() => unknown) | null;
  /** A present value as its element of the column's text[] literal (scalar columns only). */
  element: (value: unknown) => string;
  /** A present value as its field of a line of COPY text. */
  copy: (value: unknown) => string;
}

const dialect = new PgDialect();

/**
 * The table as messages name it: a resource kind's staging or kept table (`instances_staged`,
 * `instances_kept`, see db/versions.ts) by the name readers know it by (`instances`, the view of
 * every snapshot's rows).
 */
function labelOf(table: PgTable): string {
  const { name, schema } = getTableConfig(table);
  const label = name.replace(/_(staged|kept)$/, '');
  return schema ? `${quoteIdent(schema)}.${quoteIdent(label)}` : quoteIdent(label);
}

function qualifiedName(table: PgTable): string {
  const { name, schema } = getTableConfig(table);
  return schema ? `${quoteIdent(schema)}.${quoteIdent(name)}` : quoteIdent(name);
}

function insertColumns(
  table: PgTable,
  tableName: string,
  rows: readonly object[],
  requested: readonly string[] | undefined,
): ColumnInfo[] {
  const all = getTableColumns(table) as Record<string, PgColumn>;
  let keys: string[];
  if (requested) {
    keys = [...requested];
  } else {
    // for-in without Object.entries: this runs over every row of every page collected.
    const present = new Set<string>();
    for (const row of rows as readonly Record<string, unknown>[]) {
      for (const key in row) if (row[key] !== undefined && !present.has(key)) present.add(key);
    }
    for (const key of present) {
      if (!(key in all)) throw new Error(`bulk insert into ${tableName}: unknown column key "${key}"`);
    }
    keys = Object.keys(all).filter((key) => present.has(key));
  }
  if (keys.length === 0) throw new Error(`bulk insert into ${tableName}: no columns to insert`);

  return keys.map((key) => {
    const column = all[key];
    if (!column) throw new Error(`bulk insert into ${tableName}: unknown column key "${key}"`);
    if (column.generatedIdentity?.type === 'always' || column.generated) {
      throw new Error(`bulk insert into ${tableName}: column "${column.name}" is generated and cannot be inserted`);
    }
    const sqlType = column.getSQLType();
    const info: ColumnInfo = {
      key,
      name: column.name,
      sqlType,
      json: sqlType === 'jsonb' || sqlType === 'json',
      defaultSql: null,
      defaultFn: null,
      element: elementFormatter(sqlType),
      copy: copyFormatter(sqlType),
    };
    if (column.notNull && column.defaultFn) {
      const fn = column.defaultFn;
      info.defaultFn = () => {
        const value = fn();
        if (is(value, SQL)) throw new Error(`bulk insert into ${tableName}: a $defaultFn returning SQL is not supported`);
        return value;
      };
    } else if (column.notNull && column.default !== undefined) {
      info.defaultSql = defaultSql(info, column.default, tableName);
    }
    return info;
  });
}

function defaultSql(column: ColumnInfo, value: unknown, tableName: string): string {
  if (is(value, SQL)) {
    const query = dialect.sqlToQuery(value);
    if (query.params.length > 0) throw new Error(`bulk insert into ${tableName}: default of "${column.name}" has parameters`);
    return `(${query.sql})`;
  }
  let text: string | null;
  try {
    text = column.json ? JSON.stringify(value) : value === null || value === undefined ? null : valueText(column.sqlType, value);
  } catch (err) {
    throw columnError('insert', tableName, -1, column, (err as Error).message);
  }
  return text === null ? 'NULL' : `'${text.replace(/'/g, "''")}'::${column.sqlType}`;
}

function insertStatement(tableName: string, columns: ColumnInfo[], onConflictDoNothing: boolean): string {
  const names = columns.map((c) => quoteIdent(c.name));
  const aliases = columns.map((_, i) => `c${i}`);
  const sources = columns.map((c, i) =>
    c.json ? `${c.sqlType}_array_elements($${i + 1}::${c.sqlType})` : `unnest($${i + 1}::text[])`,
  );
  const select = columns.map((c, i) => {
    const alias = aliases[i]!;
    // json has no equality operator (NULLIF needs one): test its type instead.
    const value = c.json
      ? `CASE WHEN ${c.sqlType}_typeof(${alias}) = 'null' THEN NULL ELSE ${alias} END`
      : c.sqlType === 'text'
        ? alias
        : `${alias}::${c.sqlType}`;
    return c.defaultSql === null ? value : `COALESCE(${value}, ${c.defaultSql})`;
  });
  return (
    `INSERT INTO ${tableName} (${names.join(', ')}) ` +
    `SELECT ${select.join(', ')} FROM ROWS FROM (${sources.join(', ')}) AS u(${aliases.join(', ')})` +
    (onConflictDoNothing ? ' ON CONFLICT DO NOTHING' : '')
  );
}

/** The parameter of one column for a chunk: text[] for scalars, a JSON array text for json(b). */
function columnParam(
  column: ColumnInfo,
  chunk: readonly Record<string, unknown>[],
  tableName: string,
  offset: number,
): string {
  const { key, defaultFn } = column;
  if (!column.json) {
    // The text[] literal is built here in one pass (rather than handing pg a JS array to convert),
    // with a formatter chosen once per column: this runs for every cell of every row collected.
    const element = column.element;
    let literal = '{';
    let i = 0;
    try {
      for (; i < chunk.length; i++) {
        let value = chunk[i]![key];
        if ((value === undefined || value === null) && defaultFn) value = defaultFn();
        if (i > 0) literal += ',';
        literal += value === undefined || value === null ? 'NULL' : element(value);
      }
    } catch (err) {
      throw columnError('insert', tableName, offset + i, column, (err as Error).message);
    }
    return `${literal}}`;
  }
  const values = new Array<unknown>(chunk.length);
  for (let i = 0; i < chunk.length; i++) {
    let value = chunk[i]![key];
    if ((value === undefined || value === null) && defaultFn) value = defaultFn();
    values[i] = value === undefined ? null : value;
  }
  try {
    return JSON.stringify(values);
  } catch {
    // Find the row to name; only on this failure path is it worth stringifying row by row.
    values.forEach((value, i) => {
      try {
        JSON.stringify(value);
      } catch (err) {
        throw columnError('insert', tableName, offset + i, column, (err as Error).message);
      }
    });
    throw columnError('insert', tableName, offset, column, 'cannot be stored as JSON');
  }
}

const NUMBER_TYPES = new Set(['integer', 'bigint', 'smallint', 'double precision', 'real']);

/**
 * How a present value of a column of this SQL type becomes an element of a text[] literal. The
 * common case of each type (a string for text, a finite number for numbers, a Date for
 * timestamps) takes a short path; anything else goes through scalarText / arrayLiteral, which
 * convert or throw.
 */
function elementFormatter(sqlType: string): (value: unknown) => string {
  const generic = (value: unknown) => quoteElement(valueText(sqlType, value));
  if (sqlType === 'text') return (value) => (typeof value === 'string' ? quoteElement(value) : generic(value));
  // Digits, sign, point and exponent need no quotes in an array literal.
  if (NUMBER_TYPES.has(sqlType)) return (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : generic(value));
  if (sqlType.startsWith('timestamp')) {
    return (value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? `"${value.toISOString()}"` : generic(value));
  }
  return generic;
}

/**
 * How a present value of a column of this SQL type becomes its field in COPY text: the text
 * Postgres reads for the type, with backslash, newline, carriage return and tab escaped.
 */
function copyFormatter(sqlType: string): (value: unknown) => string {
  const generic = (value: unknown) => escapeCopy(valueText(sqlType, value));
  if (sqlType === 'json' || sqlType === 'jsonb') {
    return (value) => {
      const text = JSON.stringify(value) as string | undefined;
      if (text === undefined) throw new Error('cannot be stored as JSON');
      // JSON text has no raw newline, carriage return or tab (JSON.stringify escapes them): only
      // backslashes need escaping, and indexOf finds one much faster than a regular expression.
      return text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;
    };
  }
  if (sqlType === 'text') return (value) => (typeof value === 'string' ? escapeCopy(value) : generic(value));
  if (NUMBER_TYPES.has(sqlType)) return (value) => (typeof value === 'number' && Number.isFinite(value) ? String(value) : generic(value));
  if (sqlType.startsWith('timestamp')) {
    return (value) => (value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : generic(value));
  }
  return generic;
}

const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_SPECIALS = /[\\\n\r\t]/g;
const COPY_ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A field of COPY text: only scanned twice when it has a character to escape. */
function escapeCopy(text: string): string {
  return COPY_SPECIAL.test(text) ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : text;
}

/** A present scalar or array value as the text Postgres will cast to the column's type. */
function valueText(type: string, value: unknown): string {
  if (type.endsWith('[]')) {
    if (!Array.isArray(value)) throw new Error('expected an array');
    const elementType = type.slice(0, -2);
    return arrayLiteral(value.map((element) => (element === null || element === undefined ? null : scalarText(elementType, element))));
  }
  return scalarText(type, value);
}

function columnError(method: 'insert' | 'copy', tableName: string, rowIndex: number, column: ColumnInfo, message: string): Error {
  return new Error(`bulk ${method} into ${tableName}: row ${rowIndex}, column "${column.name}" (${column.sqlType}): ${message}`);
}

function scalarText(type: string, value: unknown): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new Error('invalid Date');
    return type === 'date' ? value.toISOString().slice(0, 10) : value.toISOString();
  }
  switch (typeof value) {
    case 'string':
      return value;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'number':
      if (!Number.isFinite(value)) throw new Error(`not a finite number (${value})`);
      return String(value);
    default:
      throw new Error(`cannot store a value of type ${typeof value}`);
  }
}

const NEEDS_ESCAPE = /[\\"]/;

/** One array element double-quoted, with " and \ escaped (only scanned twice when it has them). */
function quoteElement(text: string): string {
  return NEEDS_ESCAPE.test(text) ? `"${text.replace(/[\\"]/g, '\\$&')}"` : `"${text}"`;
}

/** Postgres array literal: every element double-quoted with " and \ escaped; NULL unquoted. */
export function arrayLiteral(elements: readonly (string | null)[]): string {
  const parts = elements.map((e) => (e === null ? 'NULL' : quoteElement(e)));
  return `{${parts.join(',')}}`;
}


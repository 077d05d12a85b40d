/*
 * The CSV cells of csv.ts written as SQL, so that Postgres writes an export itself
 * (`COPY (query) TO STDOUT WITH (FORMAT csv)`) and Node only passes the bytes on: a 100,000-row
 * export then costs about what `psql \copy` of the query costs, instead of parsing every row into
 * JavaScript and formatting it again.
 *
 * Every rule is csv.ts's, cell for cell (a test compares both writers' files byte for byte):
 * - formula injection: a text cell starting with = + - @ TAB or CR, or a full-width ＝ ＋ － ＠,
 *   gets a leading apostrophe; numeric cells are left alone only when they are a plain number (of
 *   an SQL number's texts, only -Infinity is not);
 * - money rounded half away from zero to the currency's minor unit (hourly: two digits more),
 *   decimals to their digits, with the digits padded; Postgres's numeric round() is that rule,
 *   exactly (rows the database writes are not footed: footing.ts needs every row first);
 * - timestamps as ISO 8601 UTC with milliseconds (JavaScript's toISOString), booleans as
 *   true/false, tags as jsonb's own text (csv.ts writes them so too), null and empty text as an empty
 *   cell (COPY would quote an empty string to tell it from NULL: it is made NULL first).
 * COPY quotes exactly the cells csv-stringify quotes (comma, quote, CR, LF); it ends records with
 * LF, which withCrlf turns into the CRLF of RFC 4180.
 */
import { DEFAULT_MINOR_UNIT, MINOR_UNITS } from './minor-units.js';
import type { CsvColumn, CsvOptions } from './csv.js';
import { FORMULA_START_CODES } from './formula.js';
import { DECIMAL_DIGITS, HOURLY_EXTRA_DIGITS } from './money.js';

/** A report's rows as SQL, for the database to write the CSV (see ReportExport.sql). */
export interface ExportSql {
  /** Statements whose results, one after the other, are the rows in order (each may start while the one before streams: csv.ts). */
  queries(select: (value: (key: string) => string) => string[]): Array<{ text: string; values: unknown[] }>;
  /** The query's result as CSV written by the database, in pieces (a record may span two). */
  csvCopy(text: string, values: readonly unknown[]): AsyncIterable<Buffer>;
}

/** SQL text of a JavaScript string (trusted constants only). */
const sqlString = (text: string) => `'${text.replace(/'/g, "''")}'`;

const FORMULA_STARTS = FORMULA_START_CODES.join(', ');

function neutralised(text: string): string {
  return `case when ascii(${text}) in (${FORMULA_STARTS}) then '''' || ${text} else ${text} end`;
}

/**
 * A number's cell. The text of an SQL number is a plain number, or NaN, Infinity or -Infinity:
 * of these csvCell neutralises only -Infinity (it starts with a minus and is not a plain number).
 */
function numberCell(value: string, text: string): string {
  return `case when ${value} = '-Infinity'::numeric then '''-Infinity' else ${text} end`;
}

/** The digits an amount of the currency in `currency` is shown with (money.ts's moneyDigits). */
function moneyDigitsSql(currency: string, hourly: boolean): string {
  const extra = hourly ? HOURLY_EXTRA_DIGITS : 0;
  const special = Object.entries(MINOR_UNITS).filter(([, digits]) => digits !== DEFAULT_MINOR_UNIT);
  const cases = special.map(([code, digits]) => `when ${sqlString(code)} then ${digits + extra}`).join(' ');
  return `case upper(trim(${currency})) ${cases} else ${DEFAULT_MINOR_UNIT + extra} end`;
}

/**
 * Text from the data (a region's name from the cloud API) as an E'' literal, as pg's
 * escapeLiteral writes it: backslashes and quotes doubled, so it cannot end its literal whatever
 * standard_conforming_strings says.
 */
const dataString = (text: string) => `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The name of the id in `id` (SQL), from a small map of names read before the export; csv.ts's text cell of it. */
function nameCellSql(id: string, byId: Readonly<Record<string, string>>): string {
  const entries = Object.entries(byId);
  if (entries.length === 0) return 'null::text';
  const name = `(case (${id})::text ${entries.map(([key, text]) => `when ${dataString(key)} then ${dataString(text)}`).join(' ')} else null end)`;
  return `nullif(${neutralised(name)}, '')`;
}

/**
 * The SQL of one CSV cell of `column`, `value(key)` being the SQL of a row field; null for a kind
 * without an SQL writer (date, json, lines, diff: those exports are written in Node). Numeric
 * columns (int, decimal, percent, money) must be SQL numbers (integer types for int), timestamps
 * timestamptz, tags jsonb.
 */
export function csvCellSql(column: CsvColumn, value: (key: string) => string, options: CsvOptions = {}): string | null {
  if (column.names) return nameCellSql(value(column.names.from), column.names.byId);
  const v = value(column.key);
  switch (column.kind) {
    case 'text':
      return `nullif(${neutralised(`${v}::text`)}, '')`;
    case 'int':
      return `${v}::text`;
    case 'decimal':
      if (options.exact) return numberCell(v, `${v}::text`);
      return numberCell(v, `round(${v}::numeric, ${column.digits ?? DECIMAL_DIGITS})::text`);
    case 'percent':
      return numberCell(v, `${v}::text`);
    case 'money': {
      if (options.exact) return numberCell(v, `${v}::text`);
      const currency = column.currencyKey ? `${value(column.currencyKey)}::text` : 'null::text';
      return numberCell(v, `round(${v}::numeric, ${moneyDigitsSql(currency, column.hourly ?? false)})::text`);
    }
    case 'bool':
      return `case when ${v} then 'true' when not ${v} then 'false' end`;
    case 'timestamp':
      return `to_char(${v} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
    case 'tags':
      return `${v}::text`;
    default:
      return null;
  }
}

const LF = 0x0a;
const QUOTE = 0x22;
const CRLF = Buffer.from('\r\n');

/** How far an export got: records written whole (a caller reads it when the export fails). */
export interface CsvProgress {
  rows: number;
}

/**
 * COPY's records end with LF; RFC 4180's (and csv.ts's) with CRLF. Every LF outside a quoted
 * cell becomes CRLF; inside quotes (a cell holding a line break) it stays as it is. The quote
 * state carries over between pieces, since a record may span two. Only whole records are passed
 * on: a piece's unfinished last record waits for the next piece, so an export cut half-way ends
 * after its last whole record, and `progress.rows` counts the records passed on.
 */
export async function* withCrlf(pieces: AsyncIterable<Buffer>, progress: CsvProgress = { rows: 0 }): AsyncGenerator<Buffer> {
  let quoted = false;
  /** The unfinished record carried over from earlier pieces (copied: pieces are not kept). */
  let carried: Buffer[] = [];
  for await (const piece of pieces) {
    const parts: Buffer[] = carried;
    let records = 0;
    let start = 0;
    let pos = 0;
    let nextQuote = piece.indexOf(QUOTE, 0);
    let nextLf = piece.indexOf(LF, 0);
    while (pos < piece.length) {
      if (quoted) {
        if (nextQuote < 0) break;
        pos = nextQuote + 1;
        quoted = false;
        nextQuote = piece.indexOf(QUOTE, pos);
        continue;
      }
      if (nextLf < pos && nextLf >= 0) nextLf = piece.indexOf(LF, pos);
      if (nextQuote >= 0 && (nextLf < 0 || nextQuote < nextLf)) {
        pos = nextQuote + 1;
        quoted = true;
        nextQuote = piece.indexOf(QUOTE, pos);
        continue;
      }
      if (nextLf < 0) break;
      parts.push(piece.subarray(start, nextLf), CRLF);
      records++;
      start = pos = nextLf + 1;
      nextLf = piece.indexOf(LF, pos);
    }
    if (records === 0) {
      carried.push(Buffer.from(piece));
      continue;
    }
    carried = start < piece.length ? [Buffer.from(piece.subarray(start))] : [];
    progress.rows += records;
    yield Buffer.concat(parts);
  }
  // COPY ends every record with LF: anything left is a last record without one, passed on as it is.
  if (carried.length > 0) {
    progress.rows++;
    yield Buffer.concat(carried);
  }
}

import { diffText, diffView, isDiff, NONE, type DiffView } from '../present/diff.js';
import { footedAmount } from '../present/footing.js';
import { DECIMAL_DIGITS, decimalText } from '../present/money.js';
import { formatDecimalText, formatMoney, formatNumber, formatPercent, formatTimestamp, isoOf } from '../present/format.js';
import type { Column, ColumnKind, Row } from '../reports/report.js';
import { isRegionColumn } from '../present/regions.js';

/*
 * Table cells for HTML: the text of each value formatted for people (present/format.ts), and
 * where that text is rounded or shortened, the exact value as the cell's title.
 */

/** Everything a template needs to draw one table cell. */
export interface CellView {
  text: string;
  /** Exact value, when the text is rounded. */
  title?: string;
  href?: string;
  className: string;
  /** For tags: the pairs, drawn as chips. */
  tags?: Array<[string, string]>;
  /** For timestamps: the machine-readable instant. */
  datetime?: string;
  /** For lists of lines: each line, drawn as a list. */
  lines?: string[];
  /** For a shortened ID: the full value, which the cell's copy button copies. */
  copy?: string;
  /** Long text cut with an ellipsis (the full text is the title). */
  clip?: boolean;
  /** For tags beyond the first few: how many more, and all of them as text for the title. */
  moreTags?: { count: number; title: string };
  /** For a `diff` column: the changed fields and tags. */
  diff?: DiffView;
}

/** Options of one column's cells on a page. */
export interface CellOptions {
  /** Write the currency after each amount (false when the header or a currency column says it). */
  showCurrency?: boolean;
  /** Region names by id, for region columns. */
  regionNames?: Record<string, string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Text longer than this is cut with an ellipsis in a cell (the title keeps all of it). */
export const CLIP_AFTER = 32;
/** Tag chips shown in a cell; the rest are counted in a "+n" chip. */
export const TAGS_SHOWN = 3;

/** A UUID as its first 8 characters and an ellipsis: "3f2a9c1d…" (the title and copy button hold all of it). */
export function shortId(value: string): string {
  return UUID.test(value) ? `${value.slice(0, 8)}…` : value;
}

function textCell(text: string, className: string): CellView {
  if (UUID.test(text)) return { text: shortId(text), title: text, copy: text, className: `${className} uuid` };
  if (text.length > CLIP_AFTER) return { text, title: text, clip: true, className };
  return { text, className };
}

const NUMERIC: ReadonlySet<ColumnKind> = new Set(['int', 'money', 'decimal', 'percent']);

/**
 * Links in report rows are app-relative paths ("/reports/x?..."); anything with a scheme or a
 * protocol-relative "//host" is not turned into a link, so row data can never inject one.
 */
export function safeAppHref(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return undefined;
  return value;
}

function jsonText(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? '';
}

/**
 * `digits`: for decimals, the fraction digits shown (default DECIMAL_DIGITS); `footed`: for money,
 * the amount already rounded by the report's footing (present/footing.ts), shown instead of
 * rounding the value on its own.
 */
export function formatValue(value: unknown, kind: ColumnKind, currency?: string, hourly = false, showCurrency = true, shown: { digits?: number; footed?: string } = {}): CellView {
  const className = NUMERIC.has(kind) ? `num ${kind}` : kind;
  if (value === null || value === undefined || value === '') return { text: kind === 'money' ? 'n/a' : '', className: `${className} empty` };
  switch (kind) {
    case 'money': {
      const withCode = formatMoney(shown.footed ?? value, currency, hourly);
      const text = !showCurrency && currency && withCode.endsWith(` ${currency}`) ? withCode.slice(0, -currency.length - 1) : withCode;
      return { text, title: `${String(value)}${currency ? ` ${currency}` : ''}`, className: String(value).startsWith('-') ? `${className} negative` : className };
    }
    case 'int':
      return { text: formatNumber(value, 0), className };
    case 'decimal': {
      const digits = shown.digits ?? DECIMAL_DIGITS;
      const text = decimalText(value);
      return { text: text === null ? String(value) : formatDecimalText(text, digits, digits), title: String(value), className };
    }
    case 'percent':
      return { text: formatPercent(value), title: String(value), className };
    case 'timestamp':
      return { text: formatTimestamp(value), datetime: isoOf(value), className };
    case 'date':
      return { text: value instanceof Date ? value.toISOString().slice(0, 10) : String(value), className };
    case 'bool':
      return { text: value === true || value === 'true' ? 'yes' : 'no', className };
    case 'tags': {
      const tags = typeof value === 'object' && value !== null ? Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [k, v === null || v === undefined ? '' : String(v)]) : [];
      const text = tags.length === 0 ? '' : tags.map(([k, v]) => `${k}=${v}`).join(', ');
      if (tags.length <= TAGS_SHOWN + 1) return { text, tags, className };
      return { text, tags: tags.slice(0, TAGS_SHOWN), moreTags: { count: tags.length - TAGS_SHOWN, title: text }, className };
    }
    case 'json': {
      // Nothing (an empty list or object) reads as a dash, not as `[]`.
      if (Array.isArray(value) && value.length === 0) return { text: NONE, className: `${className} empty` };
      if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0) return { text: NONE, className: `${className} empty` };
      // A list of IDs or words: the words, with a single ID shortened.
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
        if (value.length === 1) return textCell(value[0] as string, className);
        const full = value.join(', ');
        return { text: value.map((v) => shortId(v as string)).join(', '), title: full, clip: full.length > CLIP_AFTER, className };
      }
      return textCell(typeof value === 'string' ? value : jsonText(value), className);
    }
    case 'lines': {
      const lines = Array.isArray(value) ? value.map(String) : [String(value)];
      return { text: lines.join('\n'), lines, className };
    }
    case 'diff': {
      if (!isDiff(value)) return { text: jsonText(value), className };
      if (value.fields.length === 0 && value.tags.length === 0) return { text: NONE, className: `${className} empty` };
      return { text: diffText(value), diff: diffView(value), className };
    }
    case 'text':
      return textCell(typeof value === 'object' ? jsonText(value) : String(value), className);
    default:
      return { text: typeof value === 'object' ? jsonText(value) : String(value), className };
  }
}

/** Integer columns that name something (project 380101, region 38) rather than count it. */
function isIdentifier(column: Column): boolean {
  return column.kind === 'int' && (column.key.endsWith('_id') || column.key === 'id' || column.key === 'project' || column.key === 'region');
}

/** The whole text, wrapping: no ellipsis, and no title repeating what the cell shows. */
function wrapped(cell: CellView): CellView {
  const { title: _title, clip: _clip, ...rest } = cell;
  return { ...rest, className: `${cell.className} wrap` };
}

export function formatCell(row: Row, column: Column, options: CellOptions = {}): CellView {
  if (isIdentifier(column)) {
    const value = row[column.key];
    if (value !== null && value !== undefined && value !== '') {
      // A region by its name, with its number (what the region filter takes).
      const name = isRegionColumn(column) ? options.regionNames?.[String(value)] : undefined;
      if (name) return { text: name, title: `Region ${String(value)} (${name})`, className: 'region' };
      // No thousands separators: "380101" is looked up, not read as a quantity.
      return { text: String(value), className: 'num int id' };
    }
  }
  const empty = row[column.key];
  if (column.emptyText !== undefined && (empty === null || empty === undefined || empty === '')) return { text: column.emptyText, className: `${NUMERIC.has(column.kind) ? `num ${column.kind}` : column.kind} empty` };
  const currency = column.currencyKey ? (row[column.currencyKey] as string | undefined) ?? undefined : undefined;
  const cell = formatValue(row[column.key], column.kind, typeof currency === 'string' ? currency : undefined, column.hourly ?? false, options.showCurrency ?? true, {
    digits: column.digits,
    footed: footedAmount(row, column.key),
  });
  const href = column.hrefKey ? safeAppHref(row[column.hrefKey]) : undefined;
  const whole = column.wraps ? wrapped(cell) : cell;
  return href ? { ...whole, href } : whole;
}

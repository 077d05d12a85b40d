import type { Column, ColumnKind, Row } from '../reports/report.js';
import { decimalText, roundMoney } from './money.js';

/*
 * Display formatting for HTML. Money and decimals arrive as exact decimal text; they are rounded
 * here, for display only, with decimal-string arithmetic (no binary floats), and the exact value
 * stays available as the cell's title. Money follows the one rounding rule of money.ts (the
 * currency's minor unit, half away from zero) and is then grouped in thousands for reading.
 */

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * Rounds decimal text half away from zero to `maxDigits` fraction digits, keeping at least
 * `minDigits`, and groups thousands: ("-1234.5678", 2, 2) -> "-1,234.57".
 */
export function formatDecimalText(text: string, minDigits: number, maxDigits: number): string {
  const match = DECIMAL.exec(text);
  if (!match) return text;
  const [, sign = '', intPart = '', fracPart = ''] = match;
  const scaled = BigInt((intPart || '0') + fracPart.padEnd(maxDigits, '0').slice(0, maxDigits));
  const roundUp = (fracPart[maxDigits] ?? '0') >= '5';
  const rounded = (scaled + (roundUp ? 1n : 0n)).toString().padStart(maxDigits + 1, '0');
  const whole = rounded.slice(0, rounded.length - maxDigits);
  let fraction = rounded.slice(rounded.length - maxDigits);
  while (fraction.length > minDigits && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  const isZero = /^0*$/.test(whole + fraction);
  const out = groupThousands(whole) + (fraction ? `.${fraction}` : '');
  return sign === '-' && !isZero ? `-${out}` : out;
}

/** Money for display: rounded as in money.ts (the currency's minor unit), thousands grouped. */
export function formatMoney(value: unknown, currency: string | undefined, hourly = false): string {
  const rounded = roundMoney(value, currency, hourly);
  if (rounded === null) return value === null || value === undefined ? 'n/a' : String(value);
  const negative = rounded.startsWith('-');
  const [whole = '', fraction] = (negative ? rounded.slice(1) : rounded).split('.');
  const amount = `${negative ? '-' : ''}${groupThousands(whole)}${fraction !== undefined ? `.${fraction}` : ''}`;
  return currency ? `${amount} ${currency}` : amount;
}

export function formatNumber(value: unknown, maxDigits = 4): string {
  const text = decimalText(value);
  return text === null ? String(value) : formatDecimalText(text, 0, maxDigits);
}

/** A percentage (67.31 means 67.31 %, see the `percent` column kind) with two decimals. */
export function formatPercent(value: unknown): string {
  const text = decimalText(value);
  if (text === null) return String(value);
  return `${formatDecimalText(text, 2, 2)}%`;
}

export function formatTimestamp(value: unknown): string {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
  if (!date || Number.isNaN(date.getTime())) return String(value);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function isoOf(value: unknown): string | undefined {
  const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
  return date && !Number.isNaN(date.getTime()) ? date.toISOString() : undefined;
}

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

export function formatValue(value: unknown, kind: ColumnKind, currency?: string, hourly = false): CellView {
  const className = NUMERIC.has(kind) ? `num ${kind}` : kind;
  if (value === null || value === undefined || value === '') return { text: kind === 'money' ? 'n/a' : '', className: `${className} empty` };
  switch (kind) {
    case 'money': {
      const text = formatMoney(value, currency, hourly);
      return { text, title: `${String(value)}${currency ? ` ${currency}` : ''}`, className: String(value).startsWith('-') ? `${className} negative` : className };
    }
    case 'int':
      return { text: formatNumber(value, 0), className };
    case 'decimal':
      return { text: formatNumber(value), title: String(value), className };
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
      return { text: tags.length === 0 ? '' : tags.map(([k, v]) => `${k}=${v}`).join(', '), tags, className };
    }
    case 'json':
      return { text: typeof value === 'string' ? value : jsonText(value), className };
    default:
      return { text: typeof value === 'object' ? jsonText(value) : String(value), className };
  }
}

/** Integer columns that name something (project 380101, region 38) rather than count it. */
function isIdentifier(column: Column): boolean {
  return column.kind === 'int' && (column.key.endsWith('_id') || column.key === 'id' || column.key === 'project' || column.key === 'region');
}

export function formatCell(row: Row, column: Column): CellView {
  if (isIdentifier(column)) {
    const value = row[column.key];
    // No thousands separators: "380101" is looked up, not read as a quantity.
    if (value !== null && value !== undefined && value !== '') return { text: String(value), className: 'num int id' };
  }
  const currency = column.currencyKey ? (row[column.currencyKey] as string | undefined) ?? undefined : undefined;
  const cell = formatValue(row[column.key], column.kind, typeof currency === 'string' ? currency : undefined, column.hourly ?? false);
  const href = column.hrefKey ? safeAppHref(row[column.hrefKey]) : undefined;
  return href ? { ...cell, href } : cell;
}

import type { Column, ColumnKind, Row } from '../reports/report.js';

/*
 * Display formatting for HTML. Money and decimals arrive as exact decimal text; they are rounded
 * here, for display only, with decimal-string arithmetic (no binary floats), and the exact value
 * stays available as the cell's title.
 */

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Decimal text or a number as text in plain notation, or null when it is not a number. */
function decimalText(value: unknown): string | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    const text = String(value);
    if (!/e/i.test(text)) return text;
    // Plain notation for tiny floats (String() gives 1e-7); display rounds them anyway.
    return Math.abs(value) < 1e21 ? value.toFixed(20).replace(/\.?0+$/, '') : null;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' && DECIMAL.test(value.trim()) && /\d/.test(value)) return value.trim();
  return null;
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

/**
 * Money for display: 2 decimals, or up to 4 for amounts under 1 (hourly prices of small
 * resources would otherwise all show as 0.00).
 */
export function formatMoney(value: unknown, currency: string | undefined): string {
  const text = decimalText(value);
  if (text === null) return value === null || value === undefined ? 'n/a' : String(value);
  const small = /^[+-]?0*(\.|$)/.test(text);
  const amount = formatDecimalText(text, 2, small ? 4 : 2);
  return currency ? `${amount} ${currency}` : amount;
}

export function formatNumber(value: unknown, maxDigits = 4): string {
  const text = decimalText(value);
  return text === null ? String(value) : formatDecimalText(text, 0, maxDigits);
}

export function formatPercent(value: unknown): string {
  const text = decimalText(value);
  if (text === null) return String(value);
  // Shift the decimal point two places in text, so 0.125 shows as 12.5% exactly.
  const match = DECIMAL.exec(text)!;
  const [, sign = '', intPart = '', fracPart = ''] = match;
  const digits = (intPart || '0') + fracPart.padEnd(2, '0');
  const shifted = `${sign}${digits.slice(0, (intPart || '0').length + 2)}.${digits.slice((intPart || '0').length + 2)}`;
  // Always one decimal, so shares line up in a column (6.0% beside 81.6%).
  return `${formatDecimalText(shifted.replace(/\.$/, ''), 1, 1)}%`;
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

export function formatValue(value: unknown, kind: ColumnKind, currency?: string): CellView {
  const className = NUMERIC.has(kind) ? `num ${kind}` : kind;
  if (value === null || value === undefined || value === '') return { text: kind === 'money' ? 'n/a' : '', className: `${className} empty` };
  switch (kind) {
    case 'money': {
      const text = formatMoney(value, currency);
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
  const cell = formatValue(row[column.key], column.kind, typeof currency === 'string' ? currency : undefined);
  const href = column.hrefKey ? safeAppHref(row[column.hrefKey]) : undefined;
  return href ? { ...cell, href } : cell;
}

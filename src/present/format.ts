import { decimalText, roundMoney } from './money.js';

/*
 * Display formatting for people (pages, alert texts). Money and decimals arrive as exact decimal
 * text; they are rounded here, for display only, with decimal-string arithmetic (no binary
 * floats). Money follows the one rounding rule of money.ts (the currency's minor unit, half away
 * from zero) and is then grouped in thousands for reading.
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

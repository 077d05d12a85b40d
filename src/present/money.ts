/*
 * Money for people (HTML, CSV): exact decimal text rounded to the currency's minor unit, with
 * decimal-string and BigInt arithmetic only (no binary floats), by one rule:
 *
 *   round half away from zero: 2.345 -> 2.35, -2.345 -> -2.35, 2.3449 -> 2.34.
 *
 * Why this rule: it is what spreadsheets do (Excel's and Google Sheets' ROUND, LibreOffice's
 * ROUND), so a finance user who re-rounds our exact export in a sheet gets the same figures as
 * the page. Half-even ("banker's rounding") removes a bias over millions of roundings, but we
 * never add rounded values: totals are summed from exact values and rounded once.
 *
 * Hourly prices and rates (columns marked `hourly`) keep two more digits than the minor unit
 * (EUR: 4, JPY: 2): a GPU at 0.004 EUR/h would show 0.00, and an hourly price rounded to cents
 * multiplied by 730 hours in a sheet would be off by up to 3.65 EUR a month.
 *
 * JSON is never rounded; `?exact=1` keeps the exact decimals in CSV too.
 */

import { minorUnit } from './minor-units.js';

export { DEFAULT_MINOR_UNIT, MINOR_UNITS, minorUnit } from './minor-units.js';

/** Extra digits for hourly prices and rates beyond the minor unit. */
export const HOURLY_EXTRA_DIGITS = 2;

/** Fraction digits of a decimal (hours, GPU-hours, a change in %) in rounded outputs, unless its column says. */
export const DECIMAL_DIGITS = 2;

/** Fraction digits shown for an amount of `currency`: the minor unit, plus 2 for hourly amounts. */
export function moneyDigits(currency: string | null | undefined, hourly = false): number {
  return minorUnit(currency) + (hourly ? HOURLY_EXTRA_DIGITS : 0);
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;
/** A whole part written as BigInt would write it: no leading zeros, not empty. */
const PLAIN_WHOLE = /^(?:0|[1-9]\d*)$/;

/** Decimal text in plain notation, or null when the value is not a number. */
export function decimalText(value: unknown): string | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    const text = String(value);
    if (!/e/i.test(text)) return text;
    // Plain notation for tiny floats (String() gives 1e-7); they are rounded anyway.
    return Math.abs(value) < 1e21 ? value.toFixed(20).replace(/\.?0+$/, '') : null;
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    const trimmed = value.trim();
    if (DECIMAL.test(trimmed) && /\d/.test(trimmed)) return trimmed;
  }
  return null;
}

/**
 * Rounds decimal text half away from zero to exactly `digits` fraction digits, in plain
 * notation without grouping: ("2.345", 2) -> "2.35", ("-0.004", 2) -> "0.00", ("1234.5", 0)
 * -> "1235". Text that is not a decimal number is returned unchanged.
 */
export function roundDecimal(text: string, digits: number): string {
  const match = DECIMAL.exec(text.trim());
  if (!match || !/\d/.test(text)) return text;
  const [, sign = '', intPart = '', fracPart = ''] = match;
  // Nothing to round (most prices): the same digits, the fraction padded; no BigInt needed.
  if (fracPart.length <= digits && PLAIN_WHOLE.test(intPart)) return signed(sign, digits > 0 ? `${intPart}.${fracPart.padEnd(digits, '0')}` : intPart);
  const scaled = BigInt((intPart || '0') + fracPart.padEnd(digits, '0').slice(0, digits));
  const roundUp = (fracPart[digits] ?? '0') >= '5';
  const magnitude = (scaled + (roundUp ? 1n : 0n)).toString().padStart(digits + 1, '0');
  const whole = magnitude.slice(0, magnitude.length - digits);
  const fraction = magnitude.slice(magnitude.length - digits);
  return signed(sign, fraction ? `${whole}.${fraction}` : whole);
}

/** No "-0.00": a negative amount that rounds to zero is zero. */
function signed(sign: string, magnitude: string): string {
  return sign === '-' && /[1-9]/.test(magnitude) ? `-${magnitude}` : magnitude;
}

/** An amount of `currency` rounded for people, plain ("1234.57"); null when it is not a number. */
export function roundMoney(value: unknown, currency: string | null | undefined, hourly = false): string | null {
  const text = decimalText(value);
  return text === null ? null : roundDecimal(text, moneyDigits(currency, hourly));
}

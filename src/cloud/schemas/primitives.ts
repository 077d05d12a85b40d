import { z } from 'zod';

/**
 * Tolerant primitives for parsing API responses. Real responses are messier than the spec:
 * documented strings come back null, numbers and booleans come back as strings.
 * Request schemas (requests.ts) are strict instead.
 */

/** A documented string that may arrive as null, be missing, or (rarely) be a number or boolean. */
export const looseString = z
  .union([z.string(), z.number(), z.boolean()])
  .transform((v) => String(v))
  .nullish()
  .transform((v) => v ?? null);

const NUMERIC_TEXT = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/** An integer that may arrive as a JSON number or a numeric string; null when absent. */
export const looseInt = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^-?\d+$/, 'expected an integer')
      .transform((s) => Number(s)),
  ])
  .refine((n) => Number.isSafeInteger(n), 'expected a safe integer')
  .nullish()
  .transform((v) => v ?? null);

/** A boolean that may arrive as a string ("true"/"false"/"1"/"0"); null when absent. */
export const looseBool = z
  .union([
    z.boolean(),
    z
      .string()
      .trim()
      .toLowerCase()
      .refine((s) => ['true', 'false', '1', '0'].includes(s), 'expected a boolean')
      .transform((s) => s === 'true' || s === '1'),
    z.number().refine((n) => n === 0 || n === 1, 'expected a boolean').transform((n) => n === 1),
  ])
  .nullish()
  .transform((v) => v ?? null);

/**
 * Converts a JSON number to the decimal text it was written as. For numbers that JSON.parse
 * produced from a literal of up to 17 significant digits, String(n) gives back the shortest
 * text that round-trips, i.e. the literal itself ("0.1" stays "0.1"), so no binary-float
 * error reaches the database, where money is numeric.
 */
export function numberToDecimalText(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  const text = String(n);
  if (!/e/i.test(text)) return text;
  // Exponent form (1e-7, 1.5e+21): expand without going through binary arithmetic.
  const [mantissa, exponentText] = text.toLowerCase().split('e') as [string, string];
  const negative = mantissa.startsWith('-');
  const [intPart, fracPart = ''] = mantissa.replace('-', '').split('.') as [string, string?];
  const digits = intPart + fracPart;
  const pointAt = intPart.length + Number(exponentText);
  let out: string;
  if (pointAt <= 0) out = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length);
  else out = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return (negative ? '-' : '') + out;
}

/**
 * Money or another exact decimal: a JSON number or a numeric string, kept as decimal text
 * (e.g. "720", "12.345") so it is stored as numeric without float rounding. Null when absent.
 */
export const decimalText = z
  .union([
    z.number().transform(numberToDecimalText),
    z
      .string()
      .trim()
      .regex(NUMERIC_TEXT, 'expected a decimal number')
      .transform((s) => (/e/i.test(s) ? numberToDecimalText(Number(s)) : s)),
  ])
  .nullish()
  .transform((v) => v ?? null);

/** Anything, kept as received (contents the spec leaves open). */
export const opaque = z.unknown().transform((v) => (v === undefined ? null : v));

const TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * Parses the API's timestamps: `2023-09-28 15:25:06.115000`, `2019-06-25T08:42:42`,
 * `2023-09-28T15:24:34+0000` and `...Z`. Zone-less ones are UTC (Date would read them as local
 * time). `0001-01-01T00:00:00Z` means "not set" and gives null, like null or an empty string.
 * Throws on text that is not a timestamp.
 */
export function parseApiTimestamp(text: string | null | undefined): Date | null {
  if (text === null || text === undefined || text.trim() === '') return null;
  const m = TIMESTAMP.exec(text.trim());
  if (!m) throw new Error(`not a timestamp: ${JSON.stringify(text)}`);
  const [, y, mo, d, h, mi, s = '0', frac = '', zone] = m;
  if (Number(y) <= 1) return null;
  const ms = Number((frac + '000').slice(0, 3));
  const local = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const check = new Date(local);
  if (
    Number.isNaN(local) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    throw new Error(`not a valid date: ${JSON.stringify(text)}`);
  }
  let epoch = local;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMinutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4));
    epoch -= sign * offsetMinutes * 60_000;
  }
  const date = new Date(epoch);
  return date;
}

/** A timestamp field: kept as the text received (for raw storage), validated to be parseable. */
export const looseTimestamp = looseString.refine((v) => {
  if (v === null) return true;
  try {
    parseApiTimestamp(v);
    return true;
  } catch {
    return false;
  }
}, 'expected a timestamp');

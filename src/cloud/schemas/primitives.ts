import { z } from 'zod';

/**
 * Tolerant primitives for parsing API responses. Real responses are messier than the spec:
 * documented strings come back null, numbers and booleans come back as strings.
 * Request schemas (requests.ts) are strict instead.
 */

/*
 * Each tolerant primitive is ONE function that converts and validates at once (z.unknown +
 * transform that reports an issue), not a union of pipes nor a check plus a conversion: an
 * instance record has ~100 of them, and at 100,000 instances per collection every wrapper layer
 * costs in parsing and garbage (nested unions were an order of magnitude slower per record than
 * this form; npm run bench collect measures collection). `.optional()` keeps the field optional in the
 * input type the simulator serves.
 */
type Scalar = string | number | boolean;

/**
 * One conversion that also validates: `convert` returns undefined for a value it refuses. The
 * input type is what the simulator may serve for the field (optional), the output what it becomes.
 */
function tolerant<Out, In>(message: string, convert: (v: unknown) => Out | undefined) {
  const schema = z.unknown().optional().transform((v, ctx) => {
    const out = convert(v);
    if (out !== undefined) return out;
    ctx.issues.push({ code: 'custom', message, input: v });
    return z.NEVER;
  });
  return schema as unknown as z.ZodPipe<z.ZodOptional<z.ZodType<In, In>>, z.ZodTransform<Out, In | undefined>>;
}

/** A documented string that may arrive as null, be missing, or (rarely) be a number or boolean. */
export const looseString = tolerant<string | null, Scalar | null>('expected a string', (v) =>
  v === null || v === undefined ? null : typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined,
);

const INTEGER_TEXT = /^\s*-?\d+\s*$/;
const NUMERIC_TEXT = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

function toLooseInt(v: unknown): number | null | undefined {
  if (v === null || v === undefined) return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && INTEGER_TEXT.test(v) ? Number(v) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

/** An integer that may arrive as a JSON number or a numeric string; null when absent. */
export const looseInt = tolerant<number | null, number | string | null>('expected a safe integer', toLooseInt);

function toLooseBool(v: unknown): boolean | null | undefined {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    return s === 'true' || s === '1' ? true : s === 'false' || s === '0' ? false : undefined;
  }
  return undefined;
}

/** A boolean that may arrive as a string ("true"/"false"/"1"/"0") or 0/1; null when absent. */
export const looseBool = tolerant<boolean | null, boolean | string | number | null>('expected a boolean', toLooseBool);

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

function toDecimalText(v: unknown): string | null | undefined {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? numberToDecimalText(v) : undefined;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  if (!NUMERIC_TEXT.test(s)) return undefined;
  return /e/i.test(s) ? numberToDecimalText(Number(s)) : s;
}

/**
 * Money or another exact decimal: a JSON number or a numeric string, kept as decimal text
 * (e.g. "720", "12.345") so it is stored as numeric without float rounding. Null when absent.
 */
export const decimalText = tolerant<string | null, number | string | null>('expected a decimal number', toDecimalText);

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
  if (text === null || text === undefined) return null;
  const trimmed = text.trim();
  if (trimmed === '') return null;
  const m = TIMESTAMP.exec(trimmed);
  if (!m) throw new Error(`not a timestamp: ${JSON.stringify(text)}`);
  // Checked field by field (no Date built to compare): this runs for every timestamp of every record collected.
  const year = Number(m[1]);
  if (year <= 1) return null;
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    throw new Error(`not a valid date: ${JSON.stringify(text)}`);
  }
  const fraction = m[7];
  const ms = fraction === undefined ? 0 : Number(fraction.length >= 3 ? fraction.slice(0, 3) : (fraction + '00').slice(0, 3));
  let epoch = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const sign = zone.charCodeAt(0) === 45 /* - */ ? -1 : 1;
    const digits = zone.length === 6 ? zone.slice(1, 3) + zone.slice(4) : zone.slice(1);
    epoch -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4))) * 60_000;
  }
  return new Date(epoch);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
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

/**
 * Exact sums of money given as decimal text (numeric columns), so totals never pass through
 * binary floats: addDecimal('0.1', '0.2') === '0.3'.
 */
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

function parse(text: string): { units: bigint; scale: number } {
  const match = DECIMAL.exec(text.trim());
  if (!match || !/\d/.test(text)) throw new Error(`not a decimal number: ${JSON.stringify(text)}`);
  const [, sign = '', int = '', frac = ''] = match;
  const units = BigInt((int || '0') + frac);
  return { units: sign === '-' ? -units : units, scale: frac.length };
}

/** An integer count of 10^-scale as decimal text, trailing zeros dropped (1250n, 3 -> "1.25"). */
export function formatDecimal(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const int = scale > 0 ? digits.slice(0, -scale) : digits;
  const frac = scale > 0 ? digits.slice(-scale).replace(/0+$/, '') : '';
  const out = frac ? `${int}.${frac}` : int;
  return negative && /[1-9]/.test(out) ? `-${out}` : out;
}

export function addDecimal(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const sum = x.units * 10n ** BigInt(scale - x.scale) + y.units * 10n ** BigInt(scale - y.scale);
  return formatDecimal(sum, scale);
}

export function compareDecimal(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const diff = x.units * 10n ** BigInt(scale - x.scale) - y.units * 10n ** BigInt(scale - y.scale);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
}

export function subtractDecimal(a: string, b: string): string {
  const y = parse(b);
  return addDecimal(a, formatDecimal(-y.units, y.scale));
}

/** The exact product of two decimals. */
export function multiplyDecimal(a: string, b: string): string {
  const x = parse(a);
  const y = parse(b);
  return formatDecimal(x.units * y.units, x.scale + y.scale);
}

/** a / b rounded half away from zero to `places` decimals (b must not be 0). */
export function divideDecimal(a: string, b: string, places: number): string {
  const x = parse(a);
  const y = parse(b);
  if (y.units === 0n) throw new Error('divideDecimal: division by zero');
  // a / b = (xu / 10^xs) / (yu / 10^ys); scaled by 10^places and doubled to round half away from zero.
  const num = x.units * 10n ** BigInt(places + y.scale) * 2n;
  const den = y.units * 10n ** BigInt(x.scale);
  let q = num / den;
  q = q + (q < 0n ? -1n : 1n) * (q % 2n === 0n ? 0n : 1n);
  return fixed(formatDecimal(q / 2n, places), places);
}

/** Decimal text with exactly `places` decimals (trailing zeros kept: '-100.00'). */
function fixed(text: string, places: number): string {
  if (places === 0) return text;
  const [int, frac = ''] = text.split('.');
  return `${int}.${frac.padEnd(places, '0')}`;
}

export function absDecimal(a: string): string {
  return a.trim().startsWith('-') ? a.trim().slice(1) : a.trim();
}

/** Per-currency totals of hourly and monthly amounts; rows without a price are counted apart. */
export interface MoneyTotal {
  currency: string;
  perHour: string;
  perMonth: string;
  count: number;
}

export function totalsByCurrency(items: Iterable<{ pricePerHour: string | null; pricePerMonth: string | null; currency: string | null }>): {
  totals: MoneyTotal[];
  unpriced: number;
} {
  const byCurrency = new Map<string, MoneyTotal>();
  let unpriced = 0;
  for (const item of items) {
    if (item.pricePerHour === null || item.currency === null) {
      unpriced++;
      continue;
    }
    const total = byCurrency.get(item.currency) ?? { currency: item.currency, perHour: '0', perMonth: '0', count: 0 };
    total.perHour = addDecimal(total.perHour, item.pricePerHour);
    total.perMonth = addDecimal(total.perMonth, item.pricePerMonth ?? '0');
    total.count++;
    byCurrency.set(item.currency, total);
  }
  return { totals: [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency)), unpriced };
}

/** Digits after the decimal point of decimal text ("1.250" -> 3). */
export function decimalScale(text: string): number {
  return parse(text).scale;
}

/** Decimal text as an integer count of 10^-scale ("1.25", 3 -> 1250n); scale must hold every digit. */
export function decimalToUnits(text: string, scale: number): bigint {
  const x = parse(text);
  if (x.scale > scale) throw new Error(`decimalToUnits: ${JSON.stringify(text)} has more than ${scale} decimals`);
  return x.units * 10n ** BigInt(scale - x.scale);
}

/** An integer count of 10^-scale as decimal text with exactly `scale` decimals (1250n, 2 -> "12.50"). */
export function unitsToDecimal(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const out = scale > 0 ? `${digits.slice(0, -scale)}.${digits.slice(-scale)}` : digits;
  return negative ? `-${out}` : out;
}

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

function format(units: bigint, scale: number): string {
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
  return format(sum, scale);
}

export function compareDecimal(a: string, b: string): number {
  const x = parse(a);
  const y = parse(b);
  const scale = Math.max(x.scale, y.scale);
  const diff = x.units * 10n ** BigInt(scale - x.scale) - y.units * 10n ** BigInt(scale - y.scale);
  return diff < 0n ? -1 : diff > 0n ? 1 : 0;
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

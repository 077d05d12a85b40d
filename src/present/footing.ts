/*
 * Rounded rows that foot: when amounts are rounded for people (HTML, rounded CSV), the rows of a
 * table must add up to the table's rounded total, or a spreadsheet's SUM disagrees with the
 * file's own Total row. Rounding each row on its own (half away from zero) cannot promise that.
 *
 * The rule, largest remainder over the exact values: every amount is cut down to the unit it is
 * shown in (the currency's minor unit; hourly amounts two digits more), and the units missing to
 * the rounded total go one each to the amounts with the largest cut-off remainders (ties: the
 * first in the table's order). An amount thus moves by less than one unit from its exact value,
 * and never by more than one unit from its own rounding. Exact outputs (JSON, `?exact=1`) are not
 * touched.
 *
 * Footed figures travel with the row under a symbol key, so JSON (which never rounds) does not
 * see them, and a cached row keeps them.
 */
import type { PresentedColumn, Row } from './column.js';
import { decimalText, moneyDigits, roundDecimal } from './money.js';

/** Per row: the footed text of each money column, by column key (see footedAmount). */
const FOOTED = Symbol('footed amounts');

type FootedRow = Row & { [FOOTED]?: Record<string, string> };

/** The footed text of `key` in `row` ("12.35"), when the row was footed (footRows). */
export function footedAmount(row: Row, key: string): string | undefined {
  return (row as FootedRow)[FOOTED]?.[key];
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;

function toUnits(text: string, scale: number): bigint {
  const [, sign = '', whole = '', fraction = ''] = DECIMAL.exec(text)!;
  const units = BigInt((whole || '0') + fraction.padEnd(scale, '0'));
  return sign === '-' ? -units : units;
}

function scaleOf(text: string): number {
  return (DECIMAL.exec(text)?.[3] ?? '').length;
}

function fromUnits(units: bigint, digits: number): string {
  const negative = units < 0n;
  const text = (negative ? -units : units).toString().padStart(digits + 1, '0');
  const out = digits > 0 ? `${text.slice(0, -digits)}.${text.slice(-digits)}` : text;
  return negative && /[1-9]/.test(out) ? `-${out}` : out;
}

/** Floor division (toward minus infinity), so that every remainder is non-negative. */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/**
 * `values` (exact decimal text) rounded to `digits` decimals so that they add up to `total`
 * rounded half away from zero (default: their exact sum, rounded): largest remainder, ties to
 * the earlier value. Null when no such rounding exists, i.e. `total` is not their sum to within
 * the cut-off remainders (then each value is to be rounded on its own).
 */
export function footDecimals(values: readonly string[], digits: number, total?: string): string[] | null {
  if (values.length === 0) return [];
  const scale = Math.max(digits, ...values.map(scaleOf), total === undefined ? 0 : scaleOf(total));
  const factor = 10n ** BigInt(scale - digits);
  const exact = values.map((v) => toUnits(v, scale));
  const target = toUnits(roundDecimal(total ?? fromUnits(exact.reduce((a, b) => a + b, 0n), scale), digits), digits);
  return footUnits(exact, factor, target)?.map((u) => fromUnits(u, digits)) ?? null;
}

/**
 * The rule of footDecimals on whole units: exact values `numerators[i] / denominator` (in the
 * units shown) cut down to whole units, and the units missing to `target` given one each to the
 * largest cut-off remainders (ties: the earlier value). A value whose remainder is 0 is never
 * moved. Null when `target` is not their sum to within the remainders. Also for exact values that
 * are no decimals at all (an amount in seconds divided by 3600: the FOCUS rows).
 */
export function footUnits(numerators: readonly bigint[], denominator: bigint, target: bigint): bigint[] | null {
  const cut = numerators.map((u) => floorDiv(u, denominator));
  const remainders = numerators.map((u, i) => u - cut[i]! * denominator);
  let left = target - cut.reduce((a, b) => a + b, 0n);
  const order = numerators.map((_, i) => i).filter((i) => remainders[i]! > 0n);
  if (left < 0n || left > BigInt(order.length)) return null;
  order.sort((a, b) => (remainders[b]! > remainders[a]! ? 1 : remainders[b]! < remainders[a]! ? -1 : a - b));
  for (let k = 0; left > 0n; k++, left--) cut[order[k]!]! += 1n;
  return cut;
}

/** `numerator / denominator` (denominator > 0) rounded half away from zero to whole units. */
export function roundedUnits(numerator: bigint, denominator: bigint): bigint {
  const up = floorDiv(2n * (numerator < 0n ? -numerator : numerator) + denominator, 2n * denominator);
  return numerator < 0n ? -up : up;
}

/**
 * Copies of `rows` (every row of the table, not a page: the footing needs them all) carrying,
 * per currency and money column, amounts rounded by footDecimals to the rounded amount of that
 * currency's totals row (or, without one, to the rows' own rounded sum). Rows without a value
 * (null: unknown) take no part. Quotients (cost per GPU-hour) are not amounts that add up: left
 * to be rounded on their own.
 */
export function footRows(rows: readonly Row[], columns: readonly PresentedColumn[], totals: readonly Row[] = []): Row[] {
  const out: FootedRow[] = rows.map((row) => ({ ...row }));
  for (const column of columns) {
    if (column.kind !== 'money' || !column.currencyKey || column.quotient) continue;
    const currencyKey = column.currencyKey;
    const byCurrency = new Map<string, number[]>();
    out.forEach((row, i) => {
      const currency = row[currencyKey];
      if (typeof currency !== 'string' || decimalText(row[column.key]) === null) return;
      const list = byCurrency.get(currency) ?? [];
      list.push(i);
      byCurrency.set(currency, list);
    });
    for (const [currency, indexes] of byCurrency) {
      const totalValue = decimalText(totals.find((t) => t[currencyKey] === currency)?.[column.key]);
      const footed = footDecimals(
        indexes.map((i) => decimalText(out[i]![column.key])!),
        moneyDigits(currency, column.hourly ?? false),
        totalValue ?? undefined,
      );
      if (!footed) continue;
      indexes.forEach((i, n) => {
        const row = out[i]!;
        row[FOOTED] = { ...row[FOOTED], [column.key]: footed[n]! };
      });
    }
  }
  return out;
}

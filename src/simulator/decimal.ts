/**
 * Exact decimal arithmetic on price text, so the simulator's prices are what a finance user
 * would compute by hand (month = hour x 730) without binary-float artefacts.
 */

export const HOURS_PER_MONTH = 730;

const DECIMAL = /^\d+(\.\d+)?$/;

export function isDecimalText(text: string): boolean {
  return DECIMAL.test(text);
}

/** Multiplies a non-negative decimal text by an integer: ("1.72", 730) -> "1255.6". */
export function multiplyDecimal(text: string, factor: number): string {
  if (!DECIMAL.test(text)) throw new Error(`not a non-negative decimal: ${JSON.stringify(text)}`);
  if (!Number.isSafeInteger(factor) || factor < 0) throw new Error(`factor must be a non-negative integer: ${factor}`);
  const [intPart, fracPart = ''] = text.split('.') as [string, string?];
  const scaled = (BigInt(intPart + fracPart) * BigInt(factor)).toString();
  return withPoint(scaled, fracPart.length);
}

/** Integer hundredths (cents) to decimal text: 2560 -> "25.6", 1200 -> "12". */
export function centsToText(cents: number): string {
  return scaledToText(cents, 2);
}

/** An integer count of 10^-decimals units to decimal text: (17200, 4) -> "1.72". */
export function scaledToText(units: number, decimals: number): string {
  if (!Number.isSafeInteger(units) || units < 0) throw new Error(`units must be a non-negative integer: ${units}`);
  return withPoint(String(units), decimals);
}

/** Places a decimal point `decimals` digits from the right and trims trailing zeros. */
function withPoint(digits: string, decimals: number): string {
  if (decimals === 0) return digits.replace(/^0+(?=\d)/, '');
  const padded = digits.padStart(decimals + 1, '0');
  const intPart = padded.slice(0, padded.length - decimals).replace(/^0+(?=\d)/, '');
  const fracPart = padded.slice(padded.length - decimals).replace(/0+$/, '');
  return fracPart === '' ? intPart : `${intPart}.${fracPart}`;
}

/** A decimal text as a JSON number (exact for the short decimals prices use). */
export function decimalToNumber(text: string): number {
  return Number(text);
}

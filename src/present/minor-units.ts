/** The minor unit (decimal places) of each currency: shared by the rounding for people (present/money.ts) and the reports' allocation. */

/** ISO 4217 minor units of the currencies that matter here; any other code has 2. */
export const MINOR_UNITS: Readonly<Record<string, number>> = Object.freeze({
  EUR: 2,
  USD: 2,
  GBP: 2,
  CHF: 2,
  JPY: 0,
  KRW: 0,
  SEK: 2,
  NOK: 2,
  DKK: 2,
  PLN: 2,
  CZK: 2,
  HUF: 2,
  CNY: 2,
  INR: 2,
  AUD: 2,
  CAD: 2,
  NZD: 2,
  SGD: 2,
  HKD: 2,
  ISK: 0,
  CLP: 0,
  VND: 0,
  BHD: 3,
  KWD: 3,
  OMR: 3,
  JOD: 3,
  TND: 3,
});

export const DEFAULT_MINOR_UNIT = 2;

export function minorUnit(currency: string | null | undefined): number {
  if (!currency) return DEFAULT_MINOR_UNIT;
  return MINOR_UNITS[currency.trim().toUpperCase()] ?? DEFAULT_MINOR_UNIT;
}

import { describe, expect, it } from 'vitest';
import { percentOf } from '../../src/reports/shared/format.js';
import { csvColumns, csvRecord } from '../../src/present/csv.js';
import { MINOR_UNITS, minorUnit, moneyDigits, roundDecimal, roundMoney } from '../../src/present/money.js';

describe('rounding money to the currency (half away from zero, decimal text only)', () => {
  it('rounds x.xx5 away from zero, on both sides of zero', () => {
    expect(roundDecimal('2.345', 2)).toBe('2.35');
    expect(roundDecimal('-2.345', 2)).toBe('-2.35');
    expect(roundDecimal('2.3449999', 2)).toBe('2.34');
    expect(roundDecimal('-2.3449999', 2)).toBe('-2.34');
    expect(roundDecimal('0.005', 2)).toBe('0.01');
    expect(roundDecimal('-0.005', 2)).toBe('-0.01');
    // 1.005 is 1.00499999999999989... as a binary float; as text it is exactly 1.005.
    expect(roundDecimal('1.005', 2)).toBe('1.01');
    expect(roundDecimal('0.125', 2)).toBe('0.13');
  });

  it('writes exactly the minor unit, no "-0.00", no exponent, no grouping', () => {
    expect(roundDecimal('720', 2)).toBe('720.00');
    expect(roundDecimal('2.5', 2)).toBe('2.50');
    expect(roundDecimal('-0.004', 2)).toBe('0.00');
    expect(roundDecimal('-0', 2)).toBe('0.00');
    expect(roundDecimal('.5', 0)).toBe('1');
    expect(roundDecimal('+3.14159', 3)).toBe('3.142');
    expect(roundDecimal('1234567.891', 2)).toBe('1234567.89');
    expect(roundMoney(1e-7, 'EUR', true)).toBe('0.0000');
  });

  it('pads what has no more digits than kept, written as the rounding would write it', () => {
    expect(['0.1', '73.0', '5.', '.5', '007.5', '-0.0', '-0', '+12', '-3.5'].map((t) => roundDecimal(t, 2))).toEqual(['0.10', '73.00', '5.00', '0.50', '7.50', '0.00', '0.00', '12.00', '-3.50']);
    expect(['12', '-0', '7.'].map((t) => roundDecimal(t, 0))).toEqual(['12', '0', '7']);
    expect(roundDecimal('0.1', 4)).toBe('0.1000');
  });

  it('rounds JPY and KRW to whole units, EUR and USD to cents', () => {
    expect(roundMoney('1234.5', 'JPY')).toBe('1235');
    expect(roundMoney('-1234.5', 'JPY')).toBe('-1235');
    expect(roundMoney('1234.49', 'KRW')).toBe('1234');
    expect(roundMoney('1234.565', 'EUR')).toBe('1234.57');
    expect(roundMoney('1234.564', 'usd')).toBe('1234.56');
    expect(roundMoney('1.2345', 'KWD')).toBe('1.235');
  });

  it('keeps huge values and 22-decimal inputs exact up to the rounding digit', () => {
    expect(roundMoney('99999999999999999999999.995', 'EUR')).toBe('100000000000000000000000.00');
    expect(roundMoney('123456789012345678901234567890.125', 'USD')).toBe('123456789012345678901234567890.13');
    expect(roundMoney('0.6731228592406055753600', 'EUR')).toBe('0.67');
    expect(roundMoney('3.7123456789012345678901', 'EUR')).toBe('3.71');
    expect(roundMoney('3.7123456789012345678901', 'EUR', true)).toBe('3.7123');
    expect(roundMoney('0.0049999999999999999999', 'EUR')).toBe('0.00');
    expect(roundMoney('0.0050000000000000000001', 'EUR')).toBe('0.01');
  });

  it('gives hourly amounts two digits more than the minor unit', () => {
    expect(moneyDigits('EUR', true)).toBe(4);
    expect(moneyDigits('JPY', true)).toBe(2);
    expect(roundMoney('0.004', 'EUR')).toBe('0.00');
    expect(roundMoney('0.004', 'EUR', true)).toBe('0.0040');
    expect(roundMoney('0.00415', 'EUR', true)).toBe('0.0042');
  });

  it('knows the ISO 4217 minor units that matter, and uses 2 for any other code', () => {
    const expected: Record<string, number> = { EUR: 2, USD: 2, GBP: 2, CHF: 2, JPY: 0, KRW: 0, SEK: 2, NOK: 2, DKK: 2, PLN: 2, CZK: 2, HUF: 2, CNY: 2, INR: 2, AUD: 2, CAD: 2 };
    for (const [code, digits] of Object.entries(expected)) expect([code, MINOR_UNITS[code]]).toEqual([code, digits]);
    expect(minorUnit('XYZ')).toBe(2);
    expect(minorUnit(null)).toBe(2);
  });

  it('leaves what is not a number alone', () => {
    expect(roundMoney('n/a', 'EUR')).toBeNull();
    expect(roundMoney(null, 'EUR')).toBeNull();
    expect(roundMoney('1e5', 'EUR')).toBeNull();
    expect(roundDecimal('abc', 2)).toBe('abc');
  });
});

describe('CSV records', () => {
  const columns = csvColumns([
    { key: 'name', label: 'Name', kind: 'text' },
    { key: 'per_hour', label: 'Per hour', kind: 'money', currencyKey: 'currency', hourly: true },
    { key: 'per_month', label: 'Per month', kind: 'money', currencyKey: 'currency' },
    { key: 'currency', label: 'Currency', kind: 'text' },
    { key: 'share', label: 'Share', kind: 'percent' },
  ]);

  it('rounds each row to its own currency, or keeps the exact text with exact', () => {
    expect(csvRecord({ name: 'a', per_hour: '0.00415', per_month: '3.0295', currency: 'EUR', share: '67.31' }, columns)).toEqual(['a', '0.0042', '3.03', 'EUR', '67.31']);
    expect(csvRecord({ name: 'b', per_hour: '12.5', per_month: '9125.5', currency: 'JPY', share: '32.69' }, columns)).toEqual(['b', '12.50', '9126', 'JPY', '32.69']);
    expect(csvRecord({ name: 'c', per_hour: '-0.00415', per_month: '-3.0295', currency: 'EUR', share: null }, columns)).toEqual(['c', '-0.0042', '-3.03', 'EUR', '']);
    expect(csvRecord({ name: 'a', per_hour: '0.00415', per_month: '3.0295', currency: 'EUR', share: '67.31' }, columns, { exact: true })).toEqual(['a', '0.00415', '3.0295', 'EUR', '67.31']);
    expect(csvRecord({ name: '=x', per_hour: null, per_month: '=1+1', currency: null, share: null }, columns)).toEqual(["'=x", '', "'=1+1", '', '']);
  });
});

describe('percentOf', () => {
  it('gives a count share as a percentage with two decimals, rounded half away from zero', () => {
    expect(percentOf(4, 10)).toBe('40.00');
    expect(percentOf(2, 3)).toBe('66.67');
    expect(percentOf(1, 3)).toBe('33.33');
    expect(percentOf(1, 8)).toBe('12.50');
    expect(percentOf(1, 80000)).toBe('0.00');
    expect(percentOf(1, 20000)).toBe('0.01'); // 0.005 % rounds up
    expect(percentOf(10, 10)).toBe('100.00');
    expect(() => percentOf(1, 0)).toThrow(/non-zero/);
  });
});

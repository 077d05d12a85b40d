import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { decimalText, fieldProblems, looseBool, looseInt, looseString, looseTimestamp, parseApiTimestamp } from '../../src/cloud/schemas/index.js';

// The tolerant response primitives inside an object, as every response schema uses them.
const Record = z.looseObject({
  name: looseString,
  size: looseInt,
  enabled: looseBool,
  price: decimalText,
  created: looseTimestamp,
});

describe('tolerant response primitives', () => {
  it('convert what real answers send: nulls, missing keys, numbers and booleans as strings', () => {
    expect(Record.parse({ name: 'a', size: 3, enabled: true, price: 1.5, created: '2023-09-28 15:25:06.115000', extra: 'kept' })).toEqual({
      name: 'a',
      size: 3,
      enabled: true,
      price: '1.5',
      created: '2023-09-28 15:25:06.115000',
      extra: 'kept',
    });
    expect(Record.parse({ name: 12, size: ' 42 ', enabled: '0', price: '720.10' })).toEqual({
      name: '12',
      size: 42,
      enabled: false,
      price: '720.10',
      created: null,
    });
    expect(Record.parse({ name: null, size: null, enabled: null, price: null, created: null })).toEqual({
      name: null,
      size: null,
      enabled: null,
      price: null,
      created: null,
    });
    expect(Record.parse({})).toEqual({ name: null, size: null, enabled: null, price: null, created: null });
    expect(Record.parse({ name: false, enabled: 'TRUE', price: 1e-7 })).toMatchObject({ name: 'false', enabled: true, price: '0.0000001' });
  });

  it('refuse what cannot be converted, each field named with its reason', () => {
    const parsed = Record.safeParse({ name: { a: 1 }, size: '4.5', enabled: 'maybe', price: 'ten', created: 'yesterday' });
    expect(parsed.success).toBe(false);
    if (parsed.success) return;
    expect(fieldProblems(parsed.error)).toEqual(
      expect.arrayContaining([
        { field: 'name', message: 'expected a string' },
        { field: 'size', message: 'expected a safe integer' },
        { field: 'enabled', message: 'expected a boolean' },
        { field: 'price', message: 'expected a decimal number' },
        { field: 'created', message: 'expected a timestamp' },
      ]),
    );
    expect(looseInt.safeParse(2 ** 60).success).toBe(false);
    expect(looseInt.safeParse(Number.NaN).success).toBe(false);
  });
});

describe('parseApiTimestamp', () => {
  const iso = (text: string | null) => parseApiTimestamp(text)?.toISOString() ?? null;

  it('reads every form the API sends; zone-less ones as UTC', () => {
    expect(iso('2023-09-28 15:25:06.115000')).toBe('2023-09-28T15:25:06.115Z');
    expect(iso('2019-06-25T08:42:42')).toBe('2019-06-25T08:42:42.000Z');
    expect(iso('2023-09-28T15:24:34+0000')).toBe('2023-09-28T15:24:34.000Z');
    expect(iso('2023-09-28T15:24:34Z')).toBe('2023-09-28T15:24:34.000Z');
    expect(iso('2023-09-28T15:24:34.5+05:30')).toBe('2023-09-28T09:54:34.500Z');
    expect(iso('2023-09-28T15:24-0800')).toBe('2023-09-28T23:24:00.000Z');
    expect(iso(' 2024-02-29T23:59:59.999999z ')).toBe('2024-02-29T23:59:59.999Z');
  });

  it('gives null for "not set": null, empty, and the year-1 placeholder', () => {
    expect(iso(null)).toBeNull();
    expect(iso('')).toBeNull();
    expect(iso('   ')).toBeNull();
    expect(iso('0001-01-01T00:00:00Z')).toBeNull();
  });

  it('refuses what is not a real time of a real day', () => {
    for (const bad of ['2023-02-29T00:00:00', '2024-02-30 10:00:00', '2023-04-31T00:00:00', '2023-13-01T00:00:00', '2023-00-10T00:00:00',
      '2023-01-00T00:00:00', '2023-01-01T24:00:00', '2023-01-01T10:60:00', '2023-01-01T10:00:60']) {
      expect(() => parseApiTimestamp(bad), bad).toThrow(/not a valid date/);
    }
    for (const bad of ['yesterday', '2023-01-01', '2023/01/01 10:00:00', '2023-01-01T10:00:00+25']) {
      expect(() => parseApiTimestamp(bad), bad).toThrow(/not a timestamp/);
    }
  });
});

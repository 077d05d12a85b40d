import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { decimalText, fieldProblems, looseBool, looseInt, looseString, looseTimestamp } from '../../src/cloud/schemas/index.js';

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

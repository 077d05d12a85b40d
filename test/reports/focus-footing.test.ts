/**
 * The FOCUS rows' footing across chunks (reports/focus-footing.ts): however the rows of an export
 * fall into chunks, the costs written add up per currency to the exact total rounded half up to
 * 16 decimals, each within one unit of the 16th decimal of its exact value, and an exact value
 * with 16 decimals or fewer is written as it is.
 */
import { describe, expect, it } from 'vitest';
import { RowFooting } from '../../src/reports/focus-footing.js';

/** Decimal text with at most 16 decimals as a count of 10^-16. */
const units = (text: string) => {
  expect(text).toMatch(/^\d+(\.\d{1,16})?$/);
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole! + fraction.padEnd(16, '0'));
};

describe('FOCUS row footing', () => {
  // 16,800 s at 1.001/h = 16,816.8 price-seconds = 4.6713333... (a third of a unit lost when cut);
  // 15,600 s at 1.001/h = 15,615.6 = 4.3376666... (two thirds); 9 h at 1.001/h = 32,432.4 = 9.009 exactly.
  const rows = Array.from({ length: 250 }, (_, i) => ({
    currency: i % 5 === 4 ? 'USD' : 'EUR',
    priceSeconds: ['16816.8', '15615.6', '32432.4'][i % 3]!,
  }));
  /** Each exact value in thirds of a unit of the 16th decimal, by hand. */
  const THIRDS: Record<string, bigint> = { '16816.8': 3n * 46713333333333333n + 1n, '15615.6': 3n * 43376666666666666n + 2n, '32432.4': 3n * 90090000000000000n };
  const exactThirds = (currency: string) => rows.filter((r) => r.currency === currency).reduce((s, r) => s + THIRDS[r.priceSeconds]!, 0n);

  for (const size of [250, 100, 7, 1]) {
    it(`adds up to the rounded exact total in chunks of ${size}`, () => {
      const footing = new RowFooting();
      const written: string[] = [];
      for (let i = 0; i < rows.length; i += size) written.push(...footing.foot(rows.slice(i, i + size)));
      for (const currency of ['EUR', 'USD']) {
        const thirds = exactThirds(currency);
        const total = (2n * thirds + 3n) / 6n; // half up
        const mine = rows.map((r, i) => [r, written[i]!] as const).filter(([r]) => r.currency === currency);
        expect(mine.reduce((s, [, w]) => s + units(w), 0n), currency).toBe(total);
        for (const [r, w] of mine) {
          const off = 3n * units(w) - THIRDS[r.priceSeconds]!;
          expect(off < 3n && off > -3n, `${r.priceSeconds} written ${w}`).toBe(true);
          if (r.priceSeconds === '32432.4') expect(w).toBe('9.009');
        }
      }
    });
  }
});

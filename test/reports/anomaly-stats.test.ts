/**
 * The robust test of the anomalies report in exact decimals (docs/anomalies.md), numbers by hand.
 */
import { describe, expect, it } from 'vitest';
import { judge, median, medianAbsoluteDeviation } from '../../src/reports/shared/anomaly-stats.js';

const T = { madMultiplier: '3', minChange: '10', minChangePercent: '20' };

describe('median and MAD', () => {
  it('are exact on decimal text, the median of an even count the mean of the middle two', () => {
    expect(median(['3', '1', '2'])).toBe('2');
    expect(median(['0.1', '0.2', '0.4', '100'])).toBe('0.3');
    // |x - 0.3|: 0.2, 0.1, 0.1, 99.7 -> sorted 0.1, 0.1, 0.2, 99.7 -> (0.1 + 0.2) / 2
    expect(medianAbsoluteDeviation(['0.1', '0.2', '0.4', '100'], '0.3')).toBe('0.15');
  });
});

describe('judge', () => {
  // Baseline 100, 102, 98, 101, 99, 100, 100: median 100; deviations 0, 2, 2, 1, 1, 0, 0 -> MAD 1;
  // bound 3 x 1.4826 x 1 = 4.4478.
  const baseline = ['100', '102', '98', '101', '99', '100', '100'];

  it('flags a spike beyond k x 1.4826 x MAD, the absolute and the relative minimum', () => {
    expect(judge('130', baseline, T)).toEqual({ verdict: 'spike', median: '100', mad: '1', change: '30', changePercent: '30.00', bound: '4.4478' });
    expect(judge('70', baseline, T).verdict).toBe('drop');
  });

  it('does not flag a change under any of the three tests', () => {
    // 4 < 4.4478 (robust), and under 10 and 20 %.
    expect(judge('104', baseline, T).verdict).toBe('normal');
    // 15 > 4.4478 and >= 10, but 15 % < 20 %.
    expect(judge('115', baseline, T).verdict).toBe('normal');
    // Cents: a flat baseline of 0.24 doubling is +100 %, but +0.24 < 10.
    expect(judge('0.48', ['0.24', '0.24', '0.24', '0.24', '0.24', '0.24', '0.24'], T)).toMatchObject({ verdict: 'normal', change: '0.24', changePercent: '100.00' });
  });

  it('treats a group new since the baseline (median 0) as a change of unknown percent', () => {
    expect(judge('74.4', ['0', '0', '0', '0', '0', '0', '0'], T)).toMatchObject({ verdict: 'spike', changePercent: null, bound: '0' });
  });
});

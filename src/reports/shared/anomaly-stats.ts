/**
 * The robust test behind the anomalies report (docs/anomalies.md), in exact decimal arithmetic:
 * a day's spend against the median and the median absolute deviation (MAD) of its baseline days.
 * Flagged only when all three hold:
 *   |spend - median| > k x 1.4826 x MAD   (1.4826 x MAD estimates the standard deviation of normal data)
 *   |spend - median| >= the minimum change of the currency
 *   |spend - median| >= min_change_percent % of the median (always true when the median is 0)
 * MAD = 0 (a perfectly flat baseline) makes the first test "any change": the other two decide.
 */
import { absDecimal, addDecimal, compareDecimal, divideDecimal, multiplyDecimal, subtractDecimal } from '../../read-models/decimal.js';

/** Scale of the MAD to the standard deviation of normally distributed data. */
export const MAD_SCALE = '1.4826';

export interface AnomalyThresholds {
  /** k of the robust test (decimal text). */
  madMultiplier: string;
  /** Smallest absolute change that can be flagged, in the currency (decimal text). */
  minChange: string;
  /** Smallest change relative to the median, percent (decimal text). */
  minChangePercent: string;
}

export type Verdict = 'spike' | 'drop' | 'normal';

export interface Judgement {
  verdict: Verdict;
  median: string;
  mad: string;
  /** spend - median. */
  change: string;
  /** change / median in percent, two decimals; null when the median is 0. */
  changePercent: string | null;
  /** The robust bound k x 1.4826 x MAD the change had to exceed. */
  bound: string;
}

function sorted(values: readonly string[]): string[] {
  return [...values].sort(compareDecimal);
}

/** The median of decimal texts (the mean of the two middle values for an even count), exact. */
export function median(values: readonly string[]): string {
  if (values.length === 0) throw new Error('median of no values');
  const s = sorted(values);
  const mid = Math.floor(s.length / 2);
  if (s.length % 2 === 1) return s[mid]!;
  // Halving is exact in decimal: x / 2 = x x 0.5.
  return multiplyDecimal(addDecimal(s[mid - 1]!, s[mid]!), '0.5');
}

/** The median absolute deviation from `center`. */
export function medianAbsoluteDeviation(values: readonly string[], center: string): string {
  return median(values.map((v) => absDecimal(subtractDecimal(v, center))));
}

/** Judges one day's spend against its baseline days' spends (at least one). */
export function judge(spend: string, baseline: readonly string[], t: AnomalyThresholds): Judgement {
  const m = median(baseline);
  const mad = medianAbsoluteDeviation(baseline, m);
  const change = subtractDecimal(spend, m);
  const size = absDecimal(change);
  const bound = multiplyDecimal(multiplyDecimal(t.madMultiplier, MAD_SCALE), mad);
  const zeroMedian = compareDecimal(m, '0') === 0;
  const changePercent = zeroMedian ? null : divideDecimal(multiplyDecimal(change, '100'), m, 2);
  const robust = compareDecimal(size, bound) > 0;
  const absolute = compareDecimal(size, t.minChange) >= 0;
  const relative = zeroMedian || compareDecimal(multiplyDecimal(size, '100'), multiplyDecimal(absDecimal(m), t.minChangePercent)) >= 0;
  const flagged = robust && absolute && relative && compareDecimal(size, '0') > 0;
  return { verdict: flagged ? (compareDecimal(change, '0') > 0 ? 'spike' : 'drop') : 'normal', median: m, mad, change, changePercent, bound };
}

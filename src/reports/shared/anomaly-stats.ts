/**
 * The robust test behind the anomalies report (docs/anomalies.md), in exact decimal arithmetic:
 * a day's spend against the median and the median absolute deviation (MAD) of its baseline days.
 * Flagged only when all three hold:
 *   |spend - median| > k x 1.4826 x MAD   (1.4826 x MAD estimates the standard deviation of normal data)
 *   |spend - median| >= the minimum change of the currency
 *   |spend - median| >= min_change_percent % of the median (always true when the median is 0)
 * MAD = 0 (a perfectly flat baseline) makes the first test "any change": the other two decide.
 */
import { absDecimal, compareDecimal, decimalScale, decimalToUnits, divideDecimal, formatDecimal, multiplyDecimal, subtractDecimal } from '../../read-models/decimal.js';

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

/**
 * Decimal texts as integers of one common scale, so that sorting and subtracting many of them
 * parses each once (comparing texts parsed both sides of every comparison: most of a 30-day scan).
 */
function commonUnits(values: readonly string[]): { units: bigint[]; scale: number } {
  const scale = Math.max(0, ...values.map(decimalScale));
  return { units: values.map((v) => decimalToUnits(v, scale)), scale };
}

/** The middle of integers (the mean of the two middle ones for an even count), at scale + 1, and the index of an odd count's middle one. */
function middleOf(units: readonly bigint[]): { half: bigint; index: number | null } {
  const order = units.map((_, i) => i).sort((a, b) => (units[a]! < units[b]! ? -1 : units[a]! > units[b]! ? 1 : 0));
  const mid = Math.floor(order.length / 2);
  if (order.length % 2 === 1) return { half: units[order[mid]!]! * 10n, index: order[mid]! };
  // (a + b) / 2 at one more decimal: (a + b) x 5 is exact.
  return { half: (units[order[mid - 1]!]! + units[order[mid]!]!) * 5n, index: null };
}

/** The median of decimal texts (the mean of the two middle values for an even count), exact. */
export function median(values: readonly string[]): string {
  if (values.length === 0) throw new Error('median of no values');
  const { units, scale } = commonUnits(values);
  const m = middleOf(units);
  return m.index !== null ? values[m.index]! : formatDecimal(m.half, scale + 1);
}

/** The median absolute deviation from `center`. */
export function medianAbsoluteDeviation(values: readonly string[], center: string): string {
  if (values.length === 0) throw new Error('median of no values');
  const { units, scale } = commonUnits([...values, center]);
  const c = units.pop()!;
  const m = middleOf(units.map((u) => (u >= c ? u - c : c - u)));
  return formatDecimal(m.half, scale + 1);
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

/** What every benchmark prints with: lines, durations, percentiles, spreads, the machine's load. */
import { loadavg } from 'node:os';

export const out = (line = '') => process.stdout.write(`${line}\n`);
export const ms = (n: number) => `${n.toFixed(n < 10 ? 1 : 0)} ms`;
export const secs = (n: number, digits = 1) => `${(n / 1000).toFixed(digits)} s`;

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** min / median / max of a few runs, for a ratio's spread. */
export function spread(values: readonly number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: percentile(sorted, 50), max: sorted[sorted.length - 1]! };
}

export function loadAverage(): string {
  return loadavg().map((l) => l.toFixed(2)).join(', ');
}

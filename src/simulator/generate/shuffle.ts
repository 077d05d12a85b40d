import type { Rng } from '../random.js';

/** A shuffled copy (Fisher-Yates) driven by the seeded generator. */
export function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Splits `total` into parts proportional to `weights`; the remainder goes to the first part. */
export function splitByWeights(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const parts = weights.map((w) => Math.floor((total * w) / sum));
  const rest = total - parts.reduce((a, b) => a + b, 0);
  if (parts.length > 0) parts[0] = (parts[0] ?? 0) + rest;
  return parts;
}

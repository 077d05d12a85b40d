/**
 * Seeded randomness for the demo company and the random faults. Everything the simulator
 * invents comes from these generators, so one seed always gives the same company.
 */

/** mulberry32: a small, fast 32-bit PRNG; plenty for demo data (not for anything secret). Yields uint32s. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    return mulberry32Output(a);
  };
}

function mulberry32Output(a: number): number {
  let t = a;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return (t ^ (t >>> 14)) >>> 0;
}

const HEX_BYTE: readonly string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const HEX_NIBBLE = '0123456789abcdef';

function hex32(n: number): string {
  return (HEX_BYTE[n >>> 24] as string) + HEX_BYTE[(n >>> 16) & 255] + HEX_BYTE[(n >>> 8) & 255] + HEX_BYTE[n & 255];
}

/** FNV-1a over a string, mixed with a seed: turns an identifier into a stable 32-bit number. */
export function hashString(text: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

export class Rng {
  /** mulberry32's whole state: one uint32 (see `position`). */
  private a: number;

  constructor(seed: number) {
    this.a = seed >>> 0;
  }

  /**
   * The generator's position, so that a saved demo company continues where it left off: a
   * generator built with `new Rng(rng.position)` draws what `rng` would draw next.
   */
  get position(): number {
    return this.a;
  }

  private nextUint32(): number {
    this.a = (this.a + 0x6d2b79f5) >>> 0;
    return mulberry32Output(this.a);
  }

  private next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next();
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks from `[item, weight]` pairs in proportion to the weights. */
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    const total = items.reduce((sum, [, w]) => sum + w, 0);
    let roll = this.next() * total;
    for (const [item, weight] of items) {
      roll -= weight;
      if (roll < 0) return item;
    }
    const last = items[items.length - 1];
    if (!last) throw new Error('Rng.weighted: empty list');
    return last[0];
  }

  /** A random UUID v4 string (version nibble 4, variant 10xx), reproducible from the seed. */
  uuid(): string {
    const a = this.nextUint32();
    const b = this.nextUint32();
    const c = this.nextUint32();
    const d = this.nextUint32();
    return (
      hex32(a) +
      '-' +
      HEX_BYTE[b >>> 24] +
      HEX_BYTE[(b >>> 16) & 255] +
      '-4' +
      HEX_NIBBLE[(b >>> 8) & 15] +
      HEX_BYTE[b & 255] +
      '-' +
      HEX_NIBBLE[8 | (c >>> 30)] +
      HEX_NIBBLE[(c >>> 24) & 15] +
      HEX_BYTE[(c >>> 16) & 255] +
      '-' +
      HEX_BYTE[(c >>> 8) & 255] +
      HEX_BYTE[c & 255] +
      hex32(d)
    );
  }

  /** `length` characters from `alphabet`. */
  text(length: number, alphabet: string): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }
}

/** A generator derived from the company seed and a key, for values built lazily per record. */
export function derivedRng(seed: number, key: string): Rng {
  return new Rng(hashString(key, seed));
}

export const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
export const HEX_ALPHABET = '0123456789abcdef';

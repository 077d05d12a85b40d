/**
 * FOCUS rows that add up to their total exactly (docs/focus.md, "Rows that add up").
 *
 * A row's exact cost is its price-seconds / 3600, most often a decimal without end (16,800 s at
 * 1.001/h is 4.67133333...). Each row is written at DIVIDED_SCALE decimals, the scale of every
 * exact figure (dividedOnce), and the rows are footed so that, per currency, the rows written so
 * far add up to the running total of their exact values rounded to that scale: the file's rows
 * then add up to the period's total, which is the cost report's figure to the last digit.
 *
 * The export streams: rows are footed in chunks of CHUNK rows in the file's order (whatever batches
 * they were read in, so the JSON pages and the CSV carry the same figures). A chunk receives, per
 * currency, the units its running total calls for (the running total rounded, minus what earlier
 * chunks received), and within the chunk the units go by largest remainder over the exact values
 * (present/footing.ts, the rule of every rounded table and of allocation). A row thus moves by less
 * than one unit of the 16th decimal from its exact value, and a row whose exact value has 16
 * decimals or fewer is written exactly.
 */
import { DIVIDED_SCALE } from '../costing/cost-over-time.js';
import { footUnits, roundedUnits } from '../present/footing.js';
import { decimalScale, decimalToUnits, formatDecimal } from '../read-models/decimal.js';

/**
 * Rows footed together (the file's order): as many as the smallest batch the JSON pages read
 * (focus.ts pageOfRows), so that the first page still reads no more rows than it shows.
 */
export const FOOTING_CHUNK = 100;

const UNIT = 10n ** BigInt(DIVIDED_SCALE);

export interface Weighed {
  currency: string;
  /** The row's price x seconds, exact decimal text: its cost x 3600. */
  priceSeconds: string;
}

/** The running footing of one export, per currency. */
export class RowFooting {
  /** Decimals of the exact sums below. */
  private scale = 0;
  /** Per currency: the price-seconds of every row footed so far (x 10^scale), and the units (10^-DIVIDED_SCALE) written for them. */
  private readonly sums = new Map<string, { exact: bigint; written: bigint }>();

  /** The costs of a chunk of rows, in order: decimal text with at most DIVIDED_SCALE decimals. */
  foot(chunk: readonly Weighed[]): string[] {
    const scale = Math.max(this.scale, ...chunk.map((r) => decimalScale(r.priceSeconds)));
    if (scale > this.scale) {
      const factor = 10n ** BigInt(scale - this.scale);
      for (const sum of this.sums.values()) sum.exact *= factor;
      this.scale = scale;
    }
    // Units of the output per unit of price-seconds: value = priceSeconds x 10^scale x UNIT / denominator.
    const denominator = 3600n * 10n ** BigInt(scale);
    const byCurrency = new Map<string, number[]>();
    chunk.forEach((r, i) => byCurrency.set(r.currency, [...(byCurrency.get(r.currency) ?? []), i]));
    const out: string[] = new Array<string>(chunk.length);
    for (const [currency, indexes] of byCurrency) {
      const weights = indexes.map((i) => decimalToUnits(chunk[i]!.priceSeconds, scale));
      const before = this.sums.get(currency) ?? { exact: 0n, written: 0n };
      const exact = before.exact + weights.reduce((a, b) => a + b, 0n);
      const written = roundedUnits(exact * UNIT, denominator);
      const units = footUnits(weights.map((w) => w * UNIT), denominator, written - before.written);
      // The chunk's units differ from its exact sum by less than one, so they always fit its remainders.
      if (!units) throw new Error(`focus footing: ${written - before.written} units do not fit the ${indexes.length} ${currency} rows of a chunk`);
      this.sums.set(currency, { exact, written });
      indexes.forEach((i, n) => {
        out[i] = formatDecimal(units[n]!, DIVIDED_SCALE);
      });
    }
    return out;
  }
}

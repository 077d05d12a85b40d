/**
 * The number of GPUs of a flavor, read from its hardware description (`hardware_description.gpu`
 * of the GPU flavor list, docs/cloud-api.md). The one parser of GPU counts: an SQL expression, so
 * the rollups count GPUs where they price resources (costing/pricing.ts).
 *
 * Readable forms (the count first, then "x", "X" or "×", then the model; spaces optional):
 *   "8x Nvidia H100 80GB", "1x Nvidia L40S 48GB", "8x A100-80GB", "8 x A100", "2X H100", "4×L40S"
 * the count after the model: "A100-80GB x 8", "Nvidia H100 ×2"; and no GPU at all: "0", "none".
 * Anything else ("Nvidia A100" without a count, "see datasheet", "", a missing description) cannot
 * be read: NULL, never 0 (docs/finance-numbers.md, "GPU-hours").
 */

/** Largest count taken as a GPU count (a description like "2024x..." is not one). */
export const MAX_GPUS_PER_UNIT = 1024;

/** SQL (integer or NULL) of the GPU count in the text expression `description`. */
export function gpuCountSql(description: string): string {
  const d = `lower(trim(coalesce(${description}, '')))`;
  const count = `coalesce(
      (regexp_match(${d}, '^(\\d{1,4})\\s*[x×]\\s*[a-z]'))[1],
      (regexp_match(${d}, '^[a-z][^x×]*?\\s*[x×]\\s*(\\d{1,4})$'))[1])`;
  return `(case
      when ${d} in ('0', 'none', 'no gpu') then 0
      when ${count}::int between 1 and ${MAX_GPUS_PER_UNIT} then ${count}::int
    end)`;
}
